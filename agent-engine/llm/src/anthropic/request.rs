//! The request body of Anthropic Messages: the system prompt as top-level text blocks, the
//! conversation as alternating user/assistant turns (tool results as `tool_result` blocks of a
//! user turn, consecutive ones merged), thinking blocks sent back first in assistant turns
//! with their signatures, tools as `{name, description, input_schema}`, extended thinking and
//! prompt-caching breakpoints.

use serde_json::{Map, Value, json};
use tandem_protocol::{Content, LlmConfig, Message, Role, ThinkingBlock};

use crate::LlmRequest;
use crate::provider::WireOptions;
use crate::provider::options::{finish_body, function_tool, prepare_messages};

/// Smallest thinking budget Anthropic accepts.
const MIN_THINKING_BUDGET: u64 = 1024;

/// Whether `model` (without the routing prefix) supports extended thinking: Claude 3.7 and
/// the 4.x families.
pub fn supports_thinking(model: &str) -> bool {
    let m = model.to_lowercase();
    m.contains("claude-3-7")
        || m.contains("claude-3.7")
        || m.contains("-4-")
        || m.ends_with("-4")
        || m.contains("-4.")
        || m.contains("-4@")
        || m.contains("claude-opus-4")
        || m.contains("claude-sonnet-4")
        || m.contains("claude-haiku-4")
}

/// Models known to have no extended thinking, so a configured budget is not sent to them.
fn lacks_thinking(model: &str) -> bool {
    let m = model.to_lowercase();
    m.contains("claude-3-5")
        || m.contains("claude-3.5")
        || m.contains("claude-3-haiku")
        || m.contains("claude-3-opus")
        || m.contains("claude-3-sonnet")
        || m.contains("claude-2")
        || m.contains("claude-instant")
}

/// `max_tokens` when the configuration has none: the model's output limit.
pub fn default_max_tokens(model: &str) -> u64 {
    let m = model.to_lowercase();
    if m.contains("opus-4-1")
        || m.contains("opus-4-0")
        || m.contains("claude-opus-4-2")
        || m.ends_with("opus-4")
    {
        32_000
    } else if supports_thinking(&m) {
        64_000
    } else if m.contains("3-5") || m.contains("3.5") {
        8_192
    } else if m.contains("claude-3") {
        4_096
    } else {
        8_192
    }
}

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
    let max_tokens = config
        .max_output_tokens
        .filter(|m| *m > 0)
        .unwrap_or_else(|| default_max_tokens(wire_model));
    body.insert("max_tokens".into(), json!(max_tokens));

    let mut system: Vec<Value> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .flat_map(|m| m.content.iter())
        .filter_map(|c| c.as_text().filter(|t| !t.is_empty()))
        .map(|t| json!({"type": "text", "text": t}))
        .collect();
    if options.caching_prompt
        && let Some(last) = system.last_mut()
    {
        last["cache_control"] = json!({"type": "ephemeral"});
    }
    if !system.is_empty() {
        body.insert("system".into(), Value::Array(system));
    }

    let mut turns = turns(messages.iter().filter(|m| m.role != Role::System));
    if options.caching_prompt
        && let Some(last_user) = turns.iter_mut().rev().find(|t| t["role"] == "user")
        && let Some(block) = last_user["content"]
            .as_array_mut()
            .and_then(|c| c.last_mut())
    {
        block["cache_control"] = json!({"type": "ephemeral"});
    }
    body.insert("messages".into(), Value::Array(std::mem::take(&mut turns)));

    if !request.tools.is_empty() {
        let tools: Vec<Value> = request.tools.iter().map(tool).collect();
        body.insert("tools".into(), Value::Array(tools));
    }

    let thinking_wanted = supports_thinking(wire_model)
        || (options.thinking_budget_configured && !lacks_thinking(wire_model));
    let budget = options
        .extended_thinking_budget
        .filter(|_| thinking_wanted)
        .map(|b| b.min(max_tokens.saturating_sub(1)))
        .filter(|b| *b >= MIN_THINKING_BUDGET);
    if let Some(budget) = budget {
        body.insert(
            "thinking".into(),
            json!({"type": "enabled", "budget_tokens": budget}),
        );
    }
    let mut set = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            body.insert(key.to_owned(), value);
        }
    };
    set("temperature", config.temperature.map(|t| json!(t)));
    set("top_p", config.top_p.map(|p| json!(p)));
    set("top_k", options.top_k.map(|k| json!(k.round() as u64)));
    if stream {
        set("stream", Some(json!(true)));
    }
    // Extended thinking rejects sampling changes; drop_params drops them rather than fail.
    let drop: &[&str] = if budget.is_some() {
        &["temperature", "top_p", "top_k"]
    } else {
        &[]
    };
    finish_body(options, &mut body, drop);
    Value::Object(body)
}

/// A tool in Chat format (`{"type":"function","function":{...}}`) as Anthropic's
/// `{name, description, input_schema}`; a tool already in that shape passes through.
fn tool(tool: &Value) -> Value {
    function_tool(tool, "input_schema").map_or_else(|| tool.clone(), Value::Object)
}

/// The conversation as Anthropic turns: same-role neighbours merged so roles alternate (tool
/// results go in the user turn that follows the assistant's calls).
fn turns<'a>(messages: impl Iterator<Item = &'a Message>) -> Vec<Value> {
    let mut out: Vec<(String, Vec<Value>)> = Vec::new();
    for message in messages {
        let (role, blocks) = match message.role {
            Role::Assistant => ("assistant", assistant_blocks(message)),
            Role::Tool => ("user", vec![tool_result(message)]),
            Role::User | Role::System => ("user", content_blocks(&message.content)),
        };
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((last, existing)) if last == role => existing.extend(blocks),
            _ => out.push((role.to_owned(), blocks)),
        }
    }
    out.into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect()
}

/// Thinking blocks (unchanged, signatures included), text, then `tool_use` blocks.
fn assistant_blocks(message: &Message) -> Vec<Value> {
    let mut blocks: Vec<Value> = message
        .thinking_blocks
        .iter()
        .map(|block| match block {
            ThinkingBlock::Thinking {
                thinking,
                signature,
            } => {
                let mut b = json!({"type": "thinking", "thinking": thinking});
                if let Some(signature) = signature {
                    b["signature"] = json!(signature);
                }
                b
            }
            ThinkingBlock::RedactedThinking { data } => {
                json!({"type": "redacted_thinking", "data": data})
            }
        })
        .collect();
    blocks.extend(content_blocks(&message.content));
    for call in message.tool_calls.iter().flatten() {
        // `input` must be an object: malformed arguments the model wrote are kept as text.
        let input = match serde_json::from_str::<Value>(&call.arguments) {
            Ok(Value::Object(map)) => Value::Object(map),
            _ if call.arguments.trim().is_empty() => json!({}),
            _ => json!({"_raw_arguments": call.arguments}),
        };
        blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
    }
    blocks
}

fn tool_result(message: &Message) -> Value {
    let mut content = content_blocks(&message.content);
    if content.is_empty() {
        content.push(json!({"type": "text", "text": "(no output)"}));
    }
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": message.tool_call_id.clone().unwrap_or_default(),
        "content": content,
    });
    if message.extra.get("is_error").and_then(Value::as_bool) == Some(true) {
        block["is_error"] = json!(true);
    }
    block
}

/// Text (empty texts are rejected by the API, so left out) and image blocks.
fn content_blocks(content: &[Content]) -> Vec<Value> {
    let mut out = Vec::new();
    for part in content {
        match part {
            Content::Text(t) if !t.text.is_empty() => {
                out.push(json!({"type": "text", "text": t.text}));
            }
            Content::Image(image) => {
                out.extend(image.image_urls.iter().map(|url| image_block(url)))
            }
            _ => {}
        }
    }
    out
}

/// An image block: base64 source for `data:` URLs, URL source otherwise.
fn image_block(url: &str) -> Value {
    if let Some(rest) = url.strip_prefix("data:")
        && let Some((meta, data)) = rest.split_once(',')
    {
        let media_type = meta.split(';').next().unwrap_or("image/png");
        return json!({"type": "image", "source": {"type": "base64", "media_type": media_type, "data": data}});
    }
    json!({"type": "image", "source": {"type": "url", "url": url}})
}

#[cfg(test)]
mod tests {
    use tandem_protocol::MessageToolCall;

    use super::*;

    fn call(id: &str, args: &str) -> MessageToolCall {
        MessageToolCall {
            id: id.into(),
            name: "terminal".into(),
            arguments: args.into(),
            origin: "completion".into(),
            ..MessageToolCall::default()
        }
    }

    #[test]
    fn conversation_in_anthropic_shape() {
        let mut assistant = Message::new(Role::Assistant, vec![Content::text("Looking.")]);
        assistant.thinking_blocks = vec![
            ThinkingBlock::Thinking {
                thinking: "hmm".into(),
                signature: Some("sig1".into()),
            },
            ThinkingBlock::RedactedThinking {
                data: "opaque".into(),
            },
        ];
        assistant.tool_calls = Some(vec![
            call("toolu_1", r#"{"command":"ls"}"#),
            call("toolu_2", "{bad"),
        ]);
        let request = LlmRequest {
            messages: vec![
                Message::system("sys"),
                Message::user("hi"),
                assistant,
                Message::tool("toolu_1", "terminal", vec![Content::text("a")]),
                Message::tool("toolu_2", "terminal", Vec::new()),
            ],
            tools: vec![
                json!({"type":"function","function":{"name":"terminal","description":"d","parameters":{"type":"object"}}}),
            ],
            ..LlmRequest::default()
        };
        let mut config = LlmConfig::new("anthropic/claude-sonnet-4-5");
        config.temperature = Some(0.5);
        config.max_output_tokens = Some(4096);
        let body = body(
            &config,
            &WireOptions::of(&config),
            "claude-sonnet-4-5",
            &request,
            true,
        );
        assert_eq!(
            body["system"],
            json!([{"type":"text","text":"sys","cache_control":{"type":"ephemeral"}}])
        );
        assert_eq!(body["max_tokens"], json!(4096));
        assert_eq!(
            body["thinking"],
            json!({"type":"enabled","budget_tokens":4095})
        );
        assert!(body.get("temperature").is_none());
        assert_eq!(body["stream"], json!(true));
        assert_eq!(
            body["tools"],
            json!([{"name":"terminal","description":"d","input_schema":{"type":"object"}}])
        );
        let messages = body["messages"].as_array().unwrap();
        assert_eq!(messages.len(), 3);
        assert_eq!(
            messages[1]["content"][0],
            json!({"type":"thinking","thinking":"hmm","signature":"sig1"})
        );
        assert_eq!(
            messages[1]["content"][1],
            json!({"type":"redacted_thinking","data":"opaque"})
        );
        assert_eq!(messages[1]["content"][3]["input"], json!({"command":"ls"}));
        assert_eq!(
            messages[1]["content"][4]["input"],
            json!({"_raw_arguments":"{bad"})
        );
        let results = messages[2]["content"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0]["tool_use_id"], json!("toolu_1"));
        assert_eq!(results[1]["cache_control"], json!({"type":"ephemeral"}));
    }

    #[test]
    fn thinking_only_where_supported() {
        let config = LlmConfig::new("anthropic/claude-3-5-haiku");
        let request = LlmRequest {
            messages: vec![Message::user("x")],
            ..LlmRequest::default()
        };
        let b = body(
            &config,
            &WireOptions::of(&config),
            "claude-3-5-haiku",
            &request,
            false,
        );
        assert!(b.get("thinking").is_none());
        assert_eq!(b["max_tokens"], json!(8192));
        assert!(supports_thinking("claude-opus-4-1-20250805"));
        assert!(supports_thinking("claude-3-7-sonnet-latest"));
        assert!(!supports_thinking("claude-3-5-sonnet"));
        assert_eq!(default_max_tokens("claude-opus-4-1"), 32_000);
    }
}
