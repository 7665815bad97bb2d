//! The request body of OpenAI Responses: the system prompt as `instructions`, the conversation
//! as `input` items (messages, the reasoning item an assistant turn came with, `function_call`
//! items with their `call_id`, `function_call_output` items), tools as
//! `{type: "function", name, description, parameters}`, and `reasoning` / `include` / `store`.

use serde_json::{Map, Value, json};
use tandem_protocol::{Content, LlmConfig, Message, Role};

use crate::LlmRequest;
use crate::provider::WireOptions;
use crate::provider::options::{
    finish_body, function_tool, is_openai_reasoning_model, prepare_messages,
};

/// The JSON body for `request` under `config`.
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
    let instructions: Vec<&str> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .flat_map(|m| m.content.iter().filter_map(Content::as_text))
        .filter(|t| !t.is_empty())
        .collect();
    if !instructions.is_empty() {
        body.insert("instructions".into(), json!(instructions.join("\n\n")));
    }
    let input: Vec<Value> = messages
        .iter()
        .filter(|m| m.role != Role::System)
        .flat_map(items)
        .collect();
    body.insert("input".into(), Value::Array(input));
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(request.tools.iter().map(tool).collect()),
        );
    }
    let reasoning_model = is_openai_reasoning_model(wire_model);
    let mut reasoning = Map::new();
    if let Some(effort) = config.reasoning_effort.as_deref().filter(|e| !e.is_empty()) {
        reasoning.insert("effort".into(), json!(effort));
    }
    if let Some(summary) = &options.reasoning_summary {
        reasoning.insert("summary".into(), json!(summary));
    }
    if !reasoning.is_empty() {
        body.insert("reasoning".into(), Value::Object(reasoning));
    }
    // Nothing is kept server-side; reasoning comes back encrypted and is sent back by us.
    body.insert("store".into(), json!(false));
    if options.enable_encrypted_reasoning && reasoning_model {
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    let mut set = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            body.insert(key.to_owned(), value);
        }
    };
    set(
        "max_output_tokens",
        config.max_output_tokens.map(|m| json!(m)),
    );
    set("temperature", config.temperature.map(|t| json!(t)));
    set("top_p", config.top_p.map(|p| json!(p)));
    set(
        "prompt_cache_key",
        request.prompt_cache_key.as_ref().map(|k| json!(k)),
    );
    if stream {
        set("stream", Some(json!(true)));
    }
    // Reasoning models reject sampling parameters.
    let drop: &[&str] = if reasoning_model {
        &["temperature", "top_p"]
    } else {
        &[]
    };
    finish_body(options, &mut body, drop);
    Value::Object(body)
}

/// A Chat-format tool as a Responses function tool; other shapes pass through.
fn tool(tool: &Value) -> Value {
    let Some(mut out) = function_tool(tool, "parameters") else {
        return tool.clone();
    };
    out.insert("type".into(), json!("function"));
    out.insert("strict".into(), json!(false));
    Value::Object(out)
}

/// The input items of one message.
fn items(message: &Message) -> Vec<Value> {
    match message.role {
        Role::Assistant => {
            let mut out = Vec::new();
            if let Some(item) = &message.responses_reasoning_item {
                out.push(reasoning_item(item));
            }
            let text: String = message
                .content
                .iter()
                .filter_map(Content::as_text)
                .collect();
            if !text.is_empty() {
                out.push(json!({"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": text}]}));
            }
            for call in message.tool_calls.iter().flatten() {
                let mut item = json!({"type": "function_call", "call_id": call.id,
                    "name": call.name, "arguments": call.arguments});
                // An `fc_` id is only accepted together with the reasoning item it followed.
                if let Some(id) = &call.responses_item_id
                    && message.responses_reasoning_item.is_some()
                {
                    item["id"] = json!(id);
                }
                out.push(item);
            }
            out
        }
        Role::Tool => {
            let output: String = message
                .content
                .iter()
                .filter_map(Content::as_text)
                .collect::<Vec<_>>()
                .join("\n");
            vec![json!({"type": "function_call_output",
                "call_id": message.tool_call_id.clone().unwrap_or_default(), "output": output})]
        }
        Role::User | Role::System => {
            let mut parts = Vec::new();
            for part in &message.content {
                match part {
                    Content::Text(t) => parts.push(json!({"type": "input_text", "text": t.text})),
                    Content::Image(image) => parts.extend(image.image_urls.iter().map(
                        |url| json!({"type": "input_image", "image_url": url, "detail": "auto"}),
                    )),
                    _ => {}
                }
            }
            if parts.is_empty() {
                return Vec::new();
            }
            vec![json!({"type": "message", "role": "user", "content": parts})]
        }
    }
}

/// The reasoning item as the API accepts it back: its id, summary and encrypted content (the
/// `status` it was returned with is rejected on input).
fn reasoning_item(item: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), json!("reasoning"));
    for key in ["id", "summary", "encrypted_content"] {
        if let Some(value) = item.get(key).filter(|v| !v.is_null()) {
            out.insert(key.into(), value.clone());
        }
    }
    if !out.contains_key("summary") {
        out.insert("summary".into(), json!([]));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use tandem_protocol::MessageToolCall;

    use super::*;

    #[test]
    fn conversation_as_items() {
        let mut assistant = Message::new(Role::Assistant, Vec::new());
        assistant.responses_reasoning_item =
            Some(json!({"type":"reasoning","id":"rs_1","status":"completed",
            "summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"ENC"}));
        assistant.tool_calls = Some(vec![MessageToolCall {
            id: "call_1".into(),
            responses_item_id: Some("fc_1".into()),
            name: "terminal".into(),
            arguments: "{}".into(),
            origin: "responses".into(),
        }]);
        let request = LlmRequest {
            messages: vec![
                Message::system("sys"),
                Message::user("hi"),
                assistant,
                Message::tool("call_1", "terminal", vec![Content::text("out")]),
            ],
            tools: vec![
                json!({"type":"function","function":{"name":"terminal","parameters":{"type":"object"}}}),
            ],
            ..LlmRequest::default()
        };
        let mut config = LlmConfig::new("openai/gpt-5");
        config.reasoning_effort = Some("high".into());
        config.temperature = Some(0.2);
        config
            .extra
            .insert("reasoning_summary".into(), json!("auto"));
        let body = body(&config, &WireOptions::of(&config), "gpt-5", &request, false);
        assert_eq!(body["instructions"], json!("sys"));
        assert_eq!(body["reasoning"], json!({"effort":"high","summary":"auto"}));
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(body["store"], json!(false));
        assert!(body.get("temperature").is_none());
        assert_eq!(
            body["tools"][0],
            json!({"type":"function","name":"terminal","parameters":{"type":"object"},"strict":false})
        );
        assert_eq!(
            body["input"],
            json!([
                {"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},
                {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"s"}],"encrypted_content":"ENC"},
                {"type":"function_call","call_id":"call_1","name":"terminal","arguments":"{}","id":"fc_1"},
                {"type":"function_call_output","call_id":"call_1","output":"out"},
            ])
        );
    }
}
