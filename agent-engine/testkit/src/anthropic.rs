//! Anthropic Messages on the scripted server: replies rendered as a `message` object or as the
//! events of a stream (`message_start`, `content_block_start/delta/stop` with `text_delta`,
//! `thinking_delta`, `signature_delta` and `input_json_delta`, `ping`, `message_delta` with
//! usage, `message_stop`), Anthropic's error bodies, and the invariants of its conversations
//! (every `tool_result` answers a `tool_use` of the turn before; thinking blocks come back
//! signed).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use tandem_demo::Reply;
use tandem_demo::openai_chat::{RequestShape, computed_usage, pieces};

/// One rendered content block.
#[derive(Debug, Clone)]
enum Block {
    Thinking {
        thinking: String,
        signature: String,
    },
    Redacted(String),
    Text(String),
    ToolUse {
        id: String,
        name: String,
        arguments: String,
    },
}

/// A reply made concrete for one request.
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    id: String,
    model: String,
    blocks: Vec<Block>,
    stop_reason: String,
    usage: Option<Value>,
}

impl Rendered {
    /// Resolves `reply` for request number `index`.
    pub fn new(reply: &Reply, shape: &RequestShape, index: usize) -> Self {
        let mut blocks = Vec::new();
        for (i, t) in reply.thinking.iter().enumerate() {
            blocks.push(match &t.redacted {
                Some(data) => Block::Redacted(data.clone()),
                None => Block::Thinking {
                    thinking: t.thinking.clone(),
                    signature: t.signature.clone().unwrap_or_else(|| signature(index, i)),
                },
            });
        }
        if reply.thinking.is_empty()
            && let Some(reasoning) = &reply.reasoning
        {
            blocks.push(Block::Thinking {
                thinking: reasoning.clone(),
                signature: signature(index, 0),
            });
        }
        if let Some(text) = reply.text.as_ref().filter(|t| !t.is_empty()) {
            blocks.push(Block::Text(text.clone()));
        }
        for (i, call) in reply.tool_calls.iter().enumerate() {
            blocks.push(Block::ToolUse {
                id: call
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("toolu_{index:04}_{i}")),
                name: call.name.clone(),
                arguments: call.arguments_text(),
            });
        }
        let has_tools = !reply.tool_calls.is_empty();
        let stop_reason = match reply.finish_reason.as_deref() {
            None if has_tools => "tool_use".to_owned(),
            None | Some("stop") => "end_turn".to_owned(),
            Some("tool_calls") => "tool_use".to_owned(),
            Some("length") => "max_tokens".to_owned(),
            Some(other) => other.to_owned(),
        };
        let usage = (!reply.no_usage).then(|| {
            let u = reply.usage.unwrap_or_else(|| computed_usage(reply, shape));
            json!({
                "input_tokens": u.prompt_tokens,
                "cache_creation_input_tokens": reply.cache_write_tokens,
                "cache_read_input_tokens": u.cached_tokens,
                "output_tokens": u.completion_tokens,
                "service_tier": "standard",
            })
        });
        Self {
            id: format!("msg_scripted_{index:04}"),
            model: reply.model.clone().unwrap_or_else(|| shape.model.clone()),
            blocks,
            stop_reason,
            usage,
        }
    }

    fn block_json(block: &Block) -> Value {
        match block {
            Block::Thinking {
                thinking,
                signature,
            } => {
                json!({"type": "thinking", "thinking": thinking, "signature": signature})
            }
            Block::Redacted(data) => json!({"type": "redacted_thinking", "data": data}),
            Block::Text(text) => json!({"type": "text", "text": text, "citations": null}),
            Block::ToolUse {
                id,
                name,
                arguments,
            } => {
                // A real server always sends an object; scripted malformed arguments go as text.
                let input = serde_json::from_str::<Value>(arguments)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({"_raw": arguments}));
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            }
        }
    }

    /// The `message` object.
    pub fn message(&self) -> Value {
        json!({
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": self.blocks.iter().map(Self::block_json).collect::<Vec<_>>(),
            "stop_reason": self.stop_reason,
            "stop_sequence": null,
            "usage": self.usage.clone().unwrap_or_else(|| json!({"input_tokens": 0, "output_tokens": 0})),
        })
    }

    /// The stream's `(event, data)` pairs. With `truncated`, the first half of the block events
    /// only, with no `message_delta` and no `message_stop`.
    pub fn events(&self, truncated: bool) -> Vec<(String, String)> {
        let mut start_usage = self
            .usage
            .clone()
            .unwrap_or_else(|| json!({"input_tokens": 0, "output_tokens": 0}));
        start_usage["output_tokens"] = json!(1);
        let mut events = vec![(
            "message_start",
            json!({"type": "message_start", "message": {
                "id": self.id, "type": "message", "role": "assistant", "model": self.model,
                "content": [], "stop_reason": null, "stop_sequence": null, "usage": start_usage,
            }}),
        )];
        let mut blocks = Vec::new();
        for (index, block) in self.blocks.iter().enumerate() {
            let (start, deltas): (Value, Vec<Value>) = match block {
                Block::Thinking {
                    thinking,
                    signature,
                } => (
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                    pieces(thinking)
                        .into_iter()
                        .map(|p| json!({"type": "thinking_delta", "thinking": p}))
                        .chain([json!({"type": "signature_delta", "signature": signature})])
                        .collect(),
                ),
                Block::Redacted(data) => (
                    json!({"type": "redacted_thinking", "data": data}),
                    Vec::new(),
                ),
                Block::Text(text) => (
                    json!({"type": "text", "text": ""}),
                    pieces(text)
                        .into_iter()
                        .map(|p| json!({"type": "text_delta", "text": p}))
                        .collect(),
                ),
                Block::ToolUse {
                    id,
                    name,
                    arguments,
                } => (
                    json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                    pieces(arguments)
                        .into_iter()
                        .map(|p| json!({"type": "input_json_delta", "partial_json": p}))
                        .collect(),
                ),
            };
            blocks.push((
                "content_block_start",
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            ));
            if index == 0 {
                blocks.push(("ping", json!({"type": "ping"})));
            }
            for delta in deltas {
                blocks.push((
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": index, "delta": delta}),
                ));
            }
            blocks.push((
                "content_block_stop",
                json!({"type": "content_block_stop", "index": index}),
            ));
        }
        if truncated {
            blocks.truncate(blocks.len().div_ceil(2));
        }
        events.extend(blocks);
        if !truncated {
            let output = self
                .usage
                .as_ref()
                .map_or(json!(0), |u| u["output_tokens"].clone());
            events.push((
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": self.stop_reason, "stop_sequence": null},
                    "usage": {"output_tokens": output}}),
            ));
            events.push(("message_stop", json!({"type": "message_stop"})));
        }
        events
            .into_iter()
            .map(|(name, data)| (name.to_owned(), data.to_string()))
            .collect()
    }
}

/// The made-up signature of thinking block `position` of request `index`.
fn signature(index: usize, position: usize) -> String {
    format!("sig_{index:04}_{position}")
}

/// Anthropic's error body.
pub(crate) fn error_body(message: &str, status: u16) -> Value {
    let kind = match status {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// The violations of one request body, as a strict Anthropic server would see them.
pub(crate) fn check_request(body: &Value) -> Vec<String> {
    let mut violations = Vec::new();
    if body.get("max_tokens").and_then(Value::as_u64).is_none() {
        violations.push("request has no `max_tokens`".to_owned());
    }
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        violations.push("request has no `messages` array".to_owned());
        return violations;
    };
    let mut issued: BTreeSet<String> = BTreeSet::new();
    let mut pending: Vec<String> = Vec::new();
    let mut previous_role = "";
    for (position, message) in messages.iter().enumerate() {
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if role == previous_role {
            violations.push(format!("message {position}: two `{role}` turns in a row"));
        }
        let blocks = message
            .get("content")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        match role {
            "assistant" => {
                for id in pending.drain(..) {
                    violations.push(format!("message {position}: tool_use `{id}` has no tool_result in the next user turn"));
                }
                for block in &blocks {
                    match block.get("type").and_then(Value::as_str) {
                        Some("thinking")
                            if block
                                .get("signature")
                                .and_then(Value::as_str)
                                .is_none_or(str::is_empty) =>
                        {
                            violations.push(format!(
                                "message {position}: thinking block sent back without its signature"
                            ));
                        }
                        Some("tool_use") => {
                            let id = block.get("id").and_then(Value::as_str).unwrap_or_default();
                            if !issued.insert(id.to_owned()) {
                                violations
                                    .push(format!("message {position}: tool_use id `{id}` reused"));
                            }
                            if !block.get("input").is_some_and(Value::is_object) {
                                violations.push(format!(
                                    "message {position}: tool_use `{id}` input is not an object"
                                ));
                            }
                            pending.push(id.to_owned());
                        }
                        _ => {}
                    }
                }
            }
            "user" => {
                let answers: Vec<String> = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                    .map(|b| {
                        b.get("tool_use_id")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned()
                    })
                    .collect();
                for id in &answers {
                    if !pending.contains(id) {
                        violations.push(format!("message {position}: tool_result answers `{id}`, not a tool_use of the turn before"));
                    }
                }
                for id in pending.drain(..) {
                    if !answers.contains(&id) {
                        violations.push(format!(
                            "message {position}: tool_use `{id}` has no tool_result"
                        ));
                    }
                }
            }
            other => violations.push(format!(
                "message {position}: role `{other}` is not user or assistant"
            )),
        }
        previous_role = match role {
            "assistant" => "assistant",
            "user" => "user",
            _ => "",
        };
    }
    if let Some(first) = messages.first()
        && first.get("role").and_then(Value::as_str) != Some("user")
    {
        violations.push("the first message is not a user turn".to_owned());
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invariants() {
        let good = json!({"max_tokens": 10, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"},
                {"type": "tool_use", "id": "a", "name": "x", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "ok"}]},
        ]});
        assert_eq!(check_request(&good), Vec::<String>::new());
        let bad = json!({"messages": [
            {"role": "user", "content": []},
            {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"},
                {"type": "tool_use", "id": "a", "name": "x", "input": {}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "b"}]},
        ]});
        assert_eq!(check_request(&bad).len(), 4, "{:?}", check_request(&bad));
    }
}
