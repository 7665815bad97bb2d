//! Reading Anthropic Messages replies leniently: a `message` object, or the events of a stream
//! (`message_start`, `content_block_start/delta/stop`, `message_delta`, `message_stop`, `ping`,
//! `error`) assembled block by block. Unknown fields, block kinds and events are ignored;
//! thinking and redacted-thinking blocks are kept with their signatures.

use std::time::Duration;

use serde_json::Value;
use tandem_protocol::ThinkingBlock;
use tokio::sync::mpsc::UnboundedSender;

use crate::StreamDelta;
use crate::error::LlmError;
use crate::provider::assembled::{Assembled, AssembledCall, Counts, count, send_delta};
use crate::provider::client::ReplyAssembler;
use crate::provider::transport::{Flow, error_object};

/// `stop_reason` in OpenAI's vocabulary, as LiteLLM maps it.
fn finish_reason(stop_reason: &str) -> String {
    match stop_reason {
        "end_turn" | "stop_sequence" => "stop",
        "tool_use" => "tool_calls",
        "max_tokens" | "model_context_window_exceeded" => "length",
        "refusal" => "content_filter",
        other => other,
    }
    .to_owned()
}

/// Reads the usage fields present in `usage` into `counts` (stream events update some only).
fn merge_usage(counts: &mut Counts, usage: &Value, input: &mut u64) {
    let has = |key: &str| usage.get(key).is_some_and(|v| !v.is_null());
    if has("input_tokens") {
        *input = count(usage, "/input_tokens");
    }
    if has("output_tokens") {
        counts.completion = count(usage, "/output_tokens");
    }
    if has("cache_creation_input_tokens") {
        counts.cache_write = count(usage, "/cache_creation_input_tokens");
    }
    if has("cache_read_input_tokens") {
        counts.cache_read = count(usage, "/cache_read_input_tokens");
    }
    // Anthropic's `input_tokens` excludes cached parts; the prompt is all of them (as LiteLLM).
    counts.prompt = *input + counts.cache_read + counts.cache_write;
}

/// One content block being assembled.
#[derive(Debug, Clone)]
enum Block {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    ToolUse {
        id: String,
        name: String,
        json: String,
        initial: Option<Value>,
    },
    Other,
}

impl Block {
    fn start(block: &Value) -> Self {
        let text = |key: &str| {
            block
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        match block.get("type").and_then(Value::as_str) {
            Some("text") => Self::Text(text("text")),
            Some("thinking") => Self::Thinking {
                text: text("thinking"),
                signature: text("signature"),
            },
            Some("redacted_thinking") => Self::Redacted(text("data")),
            Some("tool_use" | "server_tool_use") => Self::ToolUse {
                id: text("id"),
                name: text("name"),
                json: String::new(),
                initial: block
                    .get("input")
                    .filter(|i| i.as_object().is_some_and(|o| !o.is_empty()))
                    .cloned(),
            },
            _ => Self::Other,
        }
    }
}

/// Accumulates a message (whole or streamed).
#[derive(Debug, Default)]
pub struct MessageAssembler {
    id: String,
    model: String,
    blocks: Vec<(u64, Block)>,
    stop_reason: Option<String>,
    counts: Option<Counts>,
    input: u64,
    started: bool,
    done: bool,
}

impl MessageAssembler {
    /// Reads a whole JSON reply body.
    pub fn from_json(body: &[u8], timeout: Duration) -> Result<Assembled, LlmError> {
        let message: Value = serde_json::from_slice(body)
            .map_err(|e| LlmError::MalformedResponse(format!("reply is not a message: {e}")))?;
        if message.get("type").and_then(Value::as_str) == Some("error")
            || message.get("error").is_some_and(|e| !e.is_null())
        {
            return Err(error_object(&message, timeout));
        }
        let Some(content) = message.get("content").and_then(Value::as_array) else {
            return Err(LlmError::MalformedResponse("reply has no content".into()));
        };
        let mut assembler = Self::default();
        assembler.start_message(&message);
        for (index, block) in content.iter().enumerate() {
            let mut b = Block::start(block);
            if let Block::ToolUse { json, initial, .. } = &mut b {
                *json = initial
                    .take()
                    .map_or_else(|| "{}".to_owned(), |i| i.to_string());
            }
            assembler.blocks.push((index as u64, b));
        }
        assembler.done = true;
        assembler.finish()
    }

    fn start_message(&mut self, message: &Value) {
        let text = |key: &str| {
            message
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        self.id = text("id");
        self.model = text("model");
        self.started = true;
        if let Some(reason) = message.get("stop_reason").and_then(Value::as_str) {
            self.stop_reason = Some(reason.to_owned());
        }
        if let Some(usage) = message.get("usage").filter(|u| u.is_object()) {
            let mut counts = self.counts.unwrap_or_default();
            merge_usage(&mut counts, usage, &mut self.input);
            self.counts = Some(counts);
        }
    }

    fn delta(
        &mut self,
        event: &Value,
        on_delta: Option<&UnboundedSender<StreamDelta>>,
    ) -> Result<(), LlmError> {
        let index = event.get("index").and_then(Value::as_u64);
        let Some(delta) = event.get("delta") else {
            return Ok(());
        };
        let piece = |key: &str| delta.get(key).and_then(Value::as_str).unwrap_or_default();
        let block = match index {
            Some(index) => self.blocks.iter_mut().rev().find(|(i, _)| *i == index),
            None => self.blocks.last_mut(),
        };
        let Some((_, block)) = block else {
            return Err(LlmError::MalformedResponse(
                "content_block_delta before its content_block_start".into(),
            ));
        };
        match (delta.get("type").and_then(Value::as_str), block) {
            (Some("text_delta"), Block::Text(text)) => {
                text.push_str(piece("text"));
                send_delta(on_delta, Some(piece("text")), None);
            }
            (Some("thinking_delta"), Block::Thinking { text, .. }) => {
                text.push_str(piece("thinking"));
                send_delta(on_delta, None, Some(piece("thinking")));
            }
            (Some("signature_delta"), Block::Thinking { signature, .. }) => {
                signature.push_str(piece("signature"))
            }
            (Some("input_json_delta"), Block::ToolUse { json, .. }) => {
                json.push_str(piece("partial_json"))
            }
            _ => {}
        }
        Ok(())
    }
}

impl ReplyAssembler for MessageAssembler {
    /// Takes in one SSE event.
    fn push(
        &mut self,
        name: &str,
        data: &str,
        on_delta: Option<&UnboundedSender<StreamDelta>>,
        timeout: Duration,
    ) -> Result<Flow, LlmError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Flow::More);
        }
        let event: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::MalformedResponse(format!("stream event is not JSON: {e}")))?;
        let kind = event.get("type").and_then(Value::as_str).unwrap_or(name);
        match kind {
            "message_start" => {
                if let Some(message) = event.get("message") {
                    self.start_message(message);
                }
            }
            "content_block_start" => {
                let index = event
                    .get("index")
                    .and_then(Value::as_u64)
                    .unwrap_or(self.blocks.len() as u64);
                let block = event
                    .get("content_block")
                    .map_or(Block::Other, Block::start);
                if let Block::Text(text) = &block {
                    send_delta(on_delta, Some(text), None);
                }
                self.blocks.push((index, block));
            }
            "content_block_delta" => self.delta(&event, on_delta)?,
            "message_delta" => {
                if let Some(reason) = event.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_owned());
                }
                if let Some(usage) = event.get("usage").filter(|u| u.is_object()) {
                    let mut counts = self.counts.unwrap_or_default();
                    merge_usage(&mut counts, usage, &mut self.input);
                    self.counts = Some(counts);
                }
            }
            "message_stop" => {
                self.done = true;
                return Ok(Flow::Done);
            }
            "error" => return Err(error_object(&event, timeout)),
            // `ping`, `content_block_stop` and events this version does not know.
            _ => {}
        }
        Ok(Flow::More)
    }

    /// The reply, once the message has ended.
    fn finish(self) -> Result<Assembled, LlmError> {
        if !self.done {
            return Err(LlmError::MalformedResponse(if self.started {
                "stream ended before message_stop".into()
            } else {
                "stream ended before message_start".into()
            }));
        }
        let mut reply = Assembled {
            id: self.id,
            model: self.model,
            finish_reason: self.stop_reason.as_deref().map(finish_reason),
            counts: self.counts,
            ..Assembled::default()
        };
        let mut blocks = self.blocks;
        blocks.sort_by_key(|(i, _)| *i);
        for (_, block) in blocks {
            match block {
                Block::Text(text) => reply.text.push_str(&text),
                Block::Thinking { text, signature } => {
                    reply.reasoning.push_str(&text);
                    reply.thinking_blocks.push(ThinkingBlock::Thinking {
                        thinking: text,
                        signature: (!signature.is_empty()).then_some(signature),
                    });
                }
                Block::Redacted(data) => reply
                    .thinking_blocks
                    .push(ThinkingBlock::RedactedThinking { data }),
                Block::ToolUse {
                    id,
                    name,
                    json,
                    initial,
                } => {
                    let arguments = if json.trim().is_empty() {
                        initial.map_or_else(|| "{}".to_owned(), |i| i.to_string())
                    } else {
                        json
                    };
                    reply.tool_calls.push(AssembledCall {
                        id: if id.is_empty() {
                            format!("toolu_{}", uuid::Uuid::new_v4().simple())
                        } else {
                            id
                        },
                        item_id: None,
                        name,
                        arguments,
                    });
                }
                Block::Other => {}
            }
        }
        if reply.finish_reason.is_none() {
            reply.finish_reason = Some(
                if reply.tool_calls.is_empty() {
                    "stop"
                } else {
                    "tool_calls"
                }
                .to_owned(),
            );
        }
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(1);

    #[test]
    fn whole_message() {
        let body =
            br#"{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[
            {"type":"thinking","thinking":"plan","signature":"SIG"},
            {"type":"redacted_thinking","data":"ENC"},
            {"type":"text","text":"Let me look."},
            {"type":"tool_use","id":"toolu_1","name":"terminal","input":{"command":"ls"}},
            {"type":"mystery"}],
            "stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5,
            "cache_creation_input_tokens":3,"cache_read_input_tokens":7}}"#;
        let reply = MessageAssembler::from_json(body, T).unwrap();
        assert_eq!(reply.text, "Let me look.");
        assert_eq!(reply.reasoning, "plan");
        assert_eq!(reply.thinking_blocks.len(), 2);
        assert_eq!(reply.tool_calls[0].arguments, r#"{"command":"ls"}"#);
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            reply.counts,
            Some(Counts {
                prompt: 20,
                completion: 5,
                cache_read: 7,
                cache_write: 3,
                reasoning: 0
            })
        );
    }

    #[test]
    fn stream_events() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut a = MessageAssembler::default();
        for data in [
            r#"{"type":"message_start","message":{"id":"msg_2","model":"m","content":[],"usage":{"input_tokens":4,"output_tokens":1}}}"#,
            r#"{"type":"ping"}"#,
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hm"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"S1"}}"#,
            r#"{"type":"content_block_stop","index":0}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_9","name":"t","input":{}}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":"}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"1}"}}"#,
            r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}"#,
        ] {
            assert_eq!(a.push("", data, Some(&tx), T).unwrap(), Flow::More);
        }
        assert_eq!(
            a.push("message_stop", r#"{"type":"message_stop"}"#, None, T)
                .unwrap(),
            Flow::Done
        );
        let reply = a.finish().unwrap();
        assert_eq!(
            reply.thinking_blocks,
            vec![ThinkingBlock::Thinking {
                thinking: "hm".into(),
                signature: Some("S1".into())
            }]
        );
        assert_eq!(reply.tool_calls[0].arguments, r#"{"a":1}"#);
        assert_eq!(reply.counts.unwrap().completion, 9);
        assert_eq!(reply.counts.unwrap().prompt, 4);
        assert_eq!(
            rx.try_recv().unwrap().reasoning_content.as_deref(),
            Some("hm")
        );
        assert_eq!(rx.try_recv().unwrap().content.as_deref(), Some("Hi"));
    }

    #[test]
    fn broken_streams() {
        let mut a = MessageAssembler::default();
        assert!(matches!(
            a.push("", "{nope", None, T),
            Err(LlmError::MalformedResponse(_))
        ));
        let mut a = MessageAssembler::default();
        let overloaded =
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#;
        assert!(matches!(
            a.push("error", overloaded, None, T),
            Err(LlmError::ServiceUnavailable { status: 529, .. })
        ));
        let a = MessageAssembler::default();
        assert!(matches!(a.finish(), Err(LlmError::MalformedResponse(_))));
    }
}
