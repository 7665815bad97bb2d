//! The request body of OpenAI Chat Completions: model name without the routing prefix, the
//! conversation in OpenAI's message shape, tools and sampling settings.

use serde_json::{Map, Value, json};
use tandem_protocol::{Content, LlmConfig, Message, Role};

use crate::LlmRequest;

/// Routing prefixes of OpenAI-compatible providers (LiteLLM names) that the server does not
/// expect in `model`: `openai/gpt-5` is sent as `gpt-5`, `openrouter/a/b` as `a/b`.
const KNOWN_PROVIDERS: [&str; 11] = [
    "openai",
    "litellm_proxy",
    "ollama",
    "ollama_chat",
    "deepseek",
    "openrouter",
    "hosted_vllm",
    "lm_studio",
    "groq",
    "together_ai",
    "xai",
];

/// The `model` the server expects for a `provider/model` name: the first segment is dropped for
/// known providers, anything else is sent as it is.
pub(crate) fn wire_model(model: &str) -> &str {
    match model.split_once('/') {
        Some((provider, rest)) if KNOWN_PROVIDERS.contains(&provider) && !rest.is_empty() => rest,
        _ => model,
    }
}

/// The base URL used when the configuration has none, by provider prefix.
pub(crate) fn default_base_url(model: &str) -> Option<&'static str> {
    match model.split_once('/').map(|(provider, _)| provider) {
        Some("ollama" | "ollama_chat") => Some("http://localhost:11434/v1"),
        Some("deepseek") => Some("https://api.deepseek.com/v1"),
        Some("openrouter") => Some("https://openrouter.ai/api/v1"),
        Some("groq") => Some("https://api.groq.com/openai/v1"),
        Some("together_ai") => Some("https://api.together.xyz/v1"),
        Some("xai") => Some("https://api.x.ai/v1"),
        Some("lm_studio") => Some("http://localhost:1234/v1"),
        // A proxy or self-hosted server has no public address to guess.
        Some("litellm_proxy" | "hosted_vllm") => None,
        _ => Some("https://api.openai.com/v1"),
    }
}

/// The JSON body for `request` under `config`.
pub(crate) fn body(config: &LlmConfig, request: &LlmRequest, stream: bool) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(wire_model(&config.model)));
    body.insert(
        "messages".into(),
        Value::Array(request.messages.iter().map(message).collect()),
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
    set(
        "reasoning_effort",
        config.reasoning_effort.as_ref().map(|e| json!(e)),
    );
    if stream {
        set("stream", Some(json!(true)));
        set("stream_options", Some(json!({"include_usage": true})));
    }
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
    fn model_prefixes() {
        assert_eq!(wire_model("openai/fake"), "fake");
        assert_eq!(wire_model("litellm_proxy/x"), "x");
        assert_eq!(wire_model("openrouter/a/b"), "a/b");
        assert_eq!(wire_model("deepseek/deepseek-chat"), "deepseek-chat");
        assert_eq!(wire_model("gpt-5"), "gpt-5");
        assert_eq!(wire_model("anthropic/claude"), "anthropic/claude");
        assert_eq!(wire_model("openai/"), "openai/");
    }

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
}
