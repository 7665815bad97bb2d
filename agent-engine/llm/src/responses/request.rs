//! The request body of OpenAI Responses: the system prompt as `instructions`, the conversation
//! as `input` items (messages, the reasoning item an assistant turn came with, `function_call`
//! items with their `call_id`, `function_call_output` items), tools as
//! `{type: "function", name, description, parameters}`, and `reasoning` / `include` / `store`.
//!
//! Reasoning is kept across turns whatever the request asks for: nothing is stored server-side
//! (`store: false`, unless `litellm_extra_body` says otherwise), so a reasoning item goes back
//! with its `encrypted_content`, which is asked for (`include`) whenever the model reasons.

use serde_json::{Map, Value, json};
use tandem_protocol::{Content, LlmConfig, Message, Role};

use crate::LlmRequest;
use crate::provider::WireOptions;
use crate::provider::options::{
    finish_body, function_tool, is_openai_reasoning_model, prepare_messages, reasoning_effort,
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
    // Items are found by id only when the server keeps them.
    let stored = options.litellm_extra_body.get("store") == Some(&json!(true));
    let input: Vec<Value> = messages
        .iter()
        .filter(|m| m.role != Role::System)
        .flat_map(|m| items(m, stored))
        .collect();
    body.insert("input".into(), Value::Array(input));
    if !request.tools.is_empty() {
        body.insert(
            "tools".into(),
            Value::Array(request.tools.iter().map(tool).collect()),
        );
    }
    let reasoning_model = is_openai_reasoning_model(wire_model);
    let effort = reasoning_effort(config, wire_model);
    let mut reasoning = Map::new();
    if let Some(effort) = effort {
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
    if options.enable_encrypted_reasoning && !stored && (reasoning_model || effort.is_some()) {
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

/// The input items of one message; `stored` when the server keeps items (found by id alone).
fn items(message: &Message, stored: bool) -> Vec<Value> {
    match message.role {
        Role::Assistant => {
            let mut out = Vec::new();
            let text: String = message
                .content
                .iter()
                .filter_map(Content::as_text)
                .collect();
            let calls = message.tool_calls.as_deref().unwrap_or_default();
            // A reasoning item must be followed by the output it led to.
            let reasoning = message
                .responses_reasoning_item
                .as_ref()
                .filter(|_| !text.is_empty() || !calls.is_empty())
                .and_then(|item| reasoning_item(item, stored));
            let with_reasoning = reasoning.is_some();
            out.extend(reasoning);
            if !text.is_empty() {
                out.push(json!({"type": "message", "role": "assistant",
                    "content": [{"type": "output_text", "text": text}]}));
            }
            for call in calls {
                let mut item = json!({"type": "function_call", "call_id": call.id,
                    "name": call.name, "arguments": call.arguments});
                // An `fc_` id is only accepted together with the reasoning item it followed.
                if let Some(id) = &call.responses_item_id
                    && with_reasoning
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

/// The reasoning item as the API accepts it back: its id, summary, reasoning text and encrypted
/// content (the `status` it was returned with is rejected on input). The item may be stored in
/// upstream's shape (`summary` and `content` as lists of strings) or as the API returned it.
/// `None` when the server could not resolve it: no id, or no encrypted content while nothing is
/// stored server-side.
fn reasoning_item(item: &Value, stored: bool) -> Option<Value> {
    let text = |key: &str| {
        item.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let id = text("id")?;
    let encrypted = text("encrypted_content");
    if encrypted.is_none() && !stored {
        return None;
    }
    let mut out = Map::new();
    out.insert("type".into(), json!("reasoning"));
    out.insert("id".into(), json!(id));
    out.insert(
        "summary".into(),
        Value::Array(parts(item.get("summary"), "summary_text")),
    );
    let content = parts(item.get("content"), "reasoning_text");
    if !content.is_empty() {
        out.insert("content".into(), Value::Array(content));
    }
    if let Some(encrypted) = encrypted {
        out.insert("encrypted_content".into(), json!(encrypted));
    }
    Some(Value::Object(out))
}

/// The parts of a reasoning item's `summary` or `content` as `{type: kind, text}` objects,
/// whether they are stored as strings (upstream) or as such objects.
fn parts(list: Option<&Value>, kind: &str) -> Vec<Value> {
    list.and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|part| match part {
            Value::String(text) => Some(json!({"type": kind, "text": text})),
            Value::Object(object) => {
                let text = object.get("text").and_then(Value::as_str)?;
                Some(json!({"type": object.get("type").and_then(Value::as_str).unwrap_or(kind), "text": text}))
            }
            _ => None,
        })
        .collect()
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

    fn turn(item: Option<Value>, text: &str) -> Vec<Message> {
        let mut assistant = Message::new(Role::Assistant, Vec::new());
        if !text.is_empty() {
            assistant.content.push(Content::text(text));
        }
        assistant.responses_reasoning_item = item;
        assistant.tool_calls = Some(vec![MessageToolCall {
            id: "call_1".into(),
            responses_item_id: Some("fc_1".into()),
            name: "terminal".into(),
            arguments: "{}".into(),
            origin: "responses".into(),
        }]);
        vec![
            Message::user("hi"),
            assistant,
            Message::tool("call_1", "terminal", vec![Content::text("out")]),
        ]
    }

    fn body_for(model: &str, effort: Option<&str>, messages: Vec<Message>) -> Value {
        let mut config = LlmConfig::new(format!("openai/{model}"));
        config.reasoning_effort = effort.map(str::to_owned);
        let request = LlmRequest {
            messages,
            ..LlmRequest::default()
        };
        body(&config, &WireOptions::of(&config), model, &request, false)
    }

    #[test]
    fn upstream_shaped_items_go_back_in_the_apis_shape() {
        let item = json!({"id":"rs_9","summary":["first","second"],"content":["raw"],
            "encrypted_content":"ENC9","status":"completed"});
        let body = body_for("gpt-5", None, turn(Some(item), ""));
        assert_eq!(
            body["input"][1],
            json!({"type":"reasoning","id":"rs_9",
                "summary":[{"type":"summary_text","text":"first"},{"type":"summary_text","text":"second"}],
                "content":[{"type":"reasoning_text","text":"raw"}],"encrypted_content":"ENC9"})
        );
        assert_eq!(body["input"][2]["id"], "fc_1");
    }

    #[test]
    fn reasoning_goes_back_whatever_the_effort() {
        let item = json!({"id":"rs_1","summary":[],"encrypted_content":"ENC"});
        for effort in [None, Some(""), Some("low")] {
            let body = body_for("gpt-5", effort, turn(Some(item.clone()), "ok"));
            assert_eq!(body["input"][1]["id"], "rs_1", "{effort:?}");
            assert_eq!(body["input"][1]["encrypted_content"], "ENC", "{effort:?}");
            assert_eq!(body["input"][2]["type"], "message");
            assert_eq!(body["input"][3]["id"], "fc_1");
            assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
            assert_eq!(body["store"], false);
        }
        assert_eq!(
            body_for("gpt-5", None, Vec::new())["reasoning"],
            json!({"effort":"high"})
        );
        assert!(
            body_for("gpt-5", Some(""), Vec::new())
                .get("reasoning")
                .is_none()
        );
        assert_eq!(
            body_for("o3", Some("low"), Vec::new())["reasoning"],
            json!({"effort":"low"})
        );
        // A model the name does not mark as reasoning: no effort, nothing included, unless asked.
        let plain = body_for("gpt-4.1", None, Vec::new());
        assert!(plain.get("reasoning").is_none() && plain.get("include").is_none());
        let asked = body_for("my-alias", Some("medium"), Vec::new());
        assert_eq!(asked["reasoning"], json!({"effort":"medium"}));
        assert_eq!(asked["include"], json!(["reasoning.encrypted_content"]));
    }

    #[test]
    fn unresolvable_reasoning_items_are_left_out() {
        // No encrypted content while nothing is stored: the server could not find it by id, so
        // it is dropped, and the call's `fc_` id with it.
        let bare = json!({"id":"rs_1","summary":[]});
        let input = body_for("gpt-5", None, turn(Some(bare.clone()), ""))["input"].clone();
        assert_eq!(input[1]["type"], "function_call");
        assert!(input[1].get("id").is_none());
        // Kept when the server stores items.
        let mut config = LlmConfig::new("openai/gpt-5");
        config
            .extra
            .insert("litellm_extra_body".into(), json!({"store": true}));
        let request = LlmRequest {
            messages: turn(Some(bare), ""),
            ..LlmRequest::default()
        };
        let stored = body(&config, &WireOptions::of(&config), "gpt-5", &request, false);
        assert_eq!(stored["store"], true);
        assert!(stored.get("include").is_none());
        assert_eq!(
            stored["input"][1],
            json!({"type":"reasoning","id":"rs_1","summary":[]})
        );
        // A reasoning item with nothing after it (a reply of reasoning only) is not sent.
        let mut only = Message::new(Role::Assistant, Vec::new());
        only.responses_reasoning_item = Some(json!({"id":"rs_2","encrypted_content":"E"}));
        let body = body_for(
            "gpt-5",
            None,
            vec![Message::user("hi"), only, Message::user("again")],
        );
        assert_eq!(body["input"].as_array().unwrap().len(), 2);
    }
}
