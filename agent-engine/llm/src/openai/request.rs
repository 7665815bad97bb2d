//! The request body of OpenAI Chat Completions: model name without the routing prefix, the
//! conversation in OpenAI's message shape, tools and sampling settings.

use serde_json::{Map, Value, json};
use tandem_protocol::{Content, LlmConfig, Message, Role};

use crate::LlmRequest;
use crate::provider::WireOptions;
use crate::provider::options::{
    finish_body, is_openai_reasoning_model, prepare_messages, reasoning_effort,
};

/// The JSON body for `request` under `config`; `wire_model` is the name without the prefix.
pub(crate) fn body(
    config: &LlmConfig,
    options: &WireOptions,
    wire_model: &str,
    request: &LlmRequest,
    stream: bool,
) -> Value {
    let messages = prepare_messages(config, options, &request.messages);
    let mut body = Map::new();
    body.insert("model".into(), json!(wire_model));
    body.insert(
        "messages".into(),
        Value::Array(messages.iter().map(message).collect()),
    );
    if !request.tools.is_empty() {
        body.insert("tools".into(), Value::Array(request.tools.clone()));
    }
    let mut set = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            body.insert(key.to_owned(), value);
        }
    };
    set(
        "prompt_cache_key",
        request.prompt_cache_key.as_ref().map(|k| json!(k)),
    );
    set("temperature", config.temperature.map(|t| json!(t)));
    set("top_p", config.top_p.map(|p| json!(p)));
    set(
        "max_completion_tokens",
        config.max_output_tokens.map(|m| json!(m)),
    );
    set("seed", config.seed.map(|s| json!(s)));
    // Upstream's default effort for reasoning models, as it sends it on Chat Completions too.
    set(
        "reasoning_effort",
        reasoning_effort(config, wire_model).map(|e| json!(e)),
    );
    set("top_k", options.top_k.map(|k| json!(k)));
    if stream {
        set("stream", Some(json!(true)));
        set("stream_options", Some(json!({"include_usage": true})));
    }
    // Reasoning models reject sampling parameters; upstream drops them for these models.
    let drop: &[&str] = if is_openai_reasoning_model(wire_model) {
        &["temperature", "top_p", "top_k"]
    } else {
        &[]
    };
    finish_body(options, &mut body, drop);
    Value::Object(body)
}

/// One message in OpenAI's shape: content as a list of parts, assistant `tool_calls`, tool
/// results with `tool_call_id` and `name`.
pub(crate) fn message(message: &Message) -> Value {
    let mut out = Map::new();
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    out.insert("role".into(), json!(role));
    let parts: Vec<Value> = message.content.iter().flat_map(content_parts).collect();
    let calls = message.tool_calls.as_deref().unwrap_or_default();
    if message.role == Role::Assistant {
        // An assistant turn of tool calls only carries no content, as upstream sends it.
        if !parts.is_empty() || calls.is_empty() {
            out.insert("content".into(), Value::Array(parts));
        }
        if !calls.is_empty() {
            let calls: Vec<Value> = calls
                .iter()
                .map(|call| {
                    json!({
                        "id": call.id,
                        "type": "function",
                        "function": {"name": call.name, "arguments": call.arguments},
                    })
                })
                .collect();
            out.insert("tool_calls".into(), Value::Array(calls));
        }
    } else {
        out.insert("content".into(), Value::Array(parts));
    }
    if message.role == Role::Tool {
        if let Some(id) = &message.tool_call_id {
            out.insert("tool_call_id".into(), json!(id));
        }
        if let Some(name) = &message.name {
            out.insert("name".into(), json!(name));
        }
    }
    Value::Object(out)
}

fn content_parts(content: &Content) -> Vec<Value> {
    match content {
        Content::Text(text) => vec![json!({"type": "text", "text": text.text})],
        Content::Image(image) => image
            .image_urls
            .iter()
            .map(|url| json!({"type": "image_url", "image_url": {"url": url}}))
            .collect(),
        // Content kinds this version does not know cannot be put on the wire faithfully.
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use tandem_protocol::{ImageContent, MessageToolCall};

    use super::*;

    #[test]
    fn messages_in_openai_shape() {
        let mut assistant = Message::new(Role::Assistant, Vec::new());
        assistant.tool_calls = Some(vec![MessageToolCall {
            id: "call_1".into(),
            name: "terminal".into(),
            arguments: r#"{"command":"ls"}"#.into(),
            origin: "completion".into(),
            ..MessageToolCall::default()
        }]);
        let user = Message::new(
            Role::User,
            vec![
                Content::text("look"),
                Content::Image(ImageContent {
                    image_urls: vec!["data:image/png;base64,AA".into()],
                    ..ImageContent::default()
                }),
            ],
        );
        let tool = Message::tool("call_1", "terminal", vec![Content::text("out")]);
        assert_eq!(
            [user, assistant, tool]
                .iter()
                .map(message)
                .collect::<Vec<_>>(),
            vec![
                json!({"role": "user", "content": [
                    {"type": "text", "text": "look"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
                ]}),
                json!({"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "terminal", "arguments": "{\"command\":\"ls\"}"}}]}),
                json!({"role": "tool", "content": [{"type": "text", "text": "out"}],
                    "tool_call_id": "call_1", "name": "terminal"}),
            ]
        );
    }

    #[test]
    fn reasoning_models_get_upstreams_default_effort() {
        let body_for = |model: &str, effort: Option<&str>| {
            let mut config = LlmConfig::new(format!("openai/{model}"));
            config.reasoning_effort = effort.map(str::to_owned);
            config.temperature = Some(0.3);
            body(
                &config,
                &WireOptions::of(&config),
                model,
                &LlmRequest::default(),
                false,
            )
        };
        let o3 = body_for("o3", None);
        assert_eq!(o3["reasoning_effort"], "high");
        assert!(o3.get("temperature").is_none());
        assert_eq!(
            body_for("gpt-5-mini", Some("low"))["reasoning_effort"],
            "low"
        );
        assert!(
            body_for("gpt-5", Some(""))
                .get("reasoning_effort")
                .is_none()
        );
        let gpt4o = body_for("gpt-4o", None);
        assert!(gpt4o.get("reasoning_effort").is_none());
        assert_eq!(gpt4o["temperature"], 0.3);
    }
}
