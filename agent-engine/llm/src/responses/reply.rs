//! Reading OpenAI Responses replies leniently: a `response` object's `output` items (message,
//! reasoning, function_call), or a stream of `response.*` events. Deltas are forwarded as they
//! arrive; the items come from `response.output_item.done` (or, failing that, what the deltas
//! built), and `response.completed` / `response.incomplete` carry the usage and end the reply.

use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use crate::StreamDelta;
use crate::error::LlmError;
use crate::provider::assembled::{Assembled, AssembledCall, Counts, count, send_delta};
use crate::provider::client::ReplyAssembler;
use crate::provider::transport::{Flow, error_object};

/// Token counts of a `usage` object.
fn counts(usage: &Value) -> Counts {
    Counts {
        prompt: count(usage, "/input_tokens"),
        completion: count(usage, "/output_tokens"),
        cache_read: count(usage, "/input_tokens_details/cached_tokens"),
        cache_write: count(usage, "/input_tokens_details/cache_write_tokens"),
        reasoning: count(usage, "/output_tokens_details/reasoning_tokens"),
    }
}

/// An item being built from stream deltas (used when its `output_item.done` never came).
#[derive(Debug, Default)]
struct Partial {
    item: Value,
    text: String,
    summary: String,
    arguments: String,
}

/// Accumulates a response (whole or streamed).
#[derive(Debug, Default)]
pub struct ResponseAssembler {
    id: String,
    model: String,
    /// Finished items by output index.
    done_items: BTreeMap<u64, Value>,
    partial: BTreeMap<u64, Partial>,
    final_output: Option<Vec<Value>>,
    status: Option<String>,
    incomplete_reason: Option<String>,
    counts: Option<Counts>,
    finished: bool,
}

impl ResponseAssembler {
    /// Reads a whole JSON reply body.
    pub fn from_json(body: &[u8], timeout: Duration) -> Result<Assembled, LlmError> {
        let response: Value = serde_json::from_slice(body)
            .map_err(|e| LlmError::MalformedResponse(format!("reply is not a response: {e}")))?;
        let mut assembler = Self::default();
        assembler.take_response(&response, timeout)?;
        if assembler.final_output.is_none() {
            return Err(LlmError::MalformedResponse("reply has no output".into()));
        }
        assembler.finished = true;
        assembler.finish()
    }

    /// Takes the fields of a `response` object; its error, when failed, is the result.
    fn take_response(&mut self, response: &Value, timeout: Duration) -> Result<(), LlmError> {
        if let Some(error) = response.get("error").filter(|e| !e.is_null()) {
            return Err(error_object(error, timeout));
        }
        let text = |key: &str| response.get(key).and_then(Value::as_str).map(str::to_owned);
        if let Some(id) = text("id") {
            self.id = id;
        }
        if let Some(model) = text("model") {
            self.model = model;
        }
        if let Some(status) = text("status") {
            if status == "failed" {
                return Err(LlmError::ServiceUnavailable {
                    status: 500,
                    message: "response failed without an error".into(),
                });
            }
            self.status = Some(status);
        }
        if let Some(reason) = response
            .pointer("/incomplete_details/reason")
            .and_then(Value::as_str)
        {
            self.incomplete_reason = Some(reason.to_owned());
        }
        if let Some(usage) = response.get("usage").filter(|u| u.is_object()) {
            self.counts = Some(counts(usage));
        }
        if let Some(output) = response.get("output").and_then(Value::as_array) {
            self.final_output = Some(output.clone());
        }
        Ok(())
    }
}

impl ReplyAssembler for ResponseAssembler {
    /// Takes in one SSE event.
    fn push(
        &mut self,
        name: &str,
        data: &str,
        on_delta: Option<&UnboundedSender<StreamDelta>>,
        timeout: Duration,
    ) -> Result<Flow, LlmError> {
        let data = data.trim();
        if data.is_empty() || data == "[DONE]" {
            return Ok(if data.is_empty() {
                Flow::More
            } else {
                Flow::Done
            });
        }
        let event: Value = serde_json::from_str(data)
            .map_err(|e| LlmError::MalformedResponse(format!("stream event is not JSON: {e}")))?;
        let kind = event.get("type").and_then(Value::as_str).unwrap_or(name);
        let index = event
            .get("output_index")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let delta = || {
            event
                .get("delta")
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        match kind {
            "response.created" | "response.in_progress" => {
                if let Some(response) = event.get("response") {
                    let output = self.final_output.take();
                    self.take_response(response, timeout)?;
                    // Early snapshots have empty output; only the final one counts.
                    self.final_output = output;
                }
            }
            "response.output_item.added" => {
                let partial = self.partial.entry(index).or_default();
                partial.item = event.get("item").cloned().unwrap_or(Value::Null);
            }
            "response.output_text.delta" => {
                self.partial
                    .entry(index)
                    .or_default()
                    .text
                    .push_str(delta());
                send_delta(on_delta, Some(delta()), None);
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.partial
                    .entry(index)
                    .or_default()
                    .summary
                    .push_str(delta());
                send_delta(on_delta, None, Some(delta()));
            }
            "response.function_call_arguments.delta" => {
                self.partial
                    .entry(index)
                    .or_default()
                    .arguments
                    .push_str(delta());
            }
            "response.function_call_arguments.done" => {
                if let Some(arguments) = event.get("arguments").and_then(Value::as_str) {
                    arguments.clone_into(&mut self.partial.entry(index).or_default().arguments);
                }
            }
            "response.output_item.done" => {
                if let Some(item) = event.get("item") {
                    self.done_items.insert(index, item.clone());
                }
            }
            "response.completed" | "response.incomplete" | "response.done" => {
                if let Some(response) = event.get("response") {
                    self.take_response(response, timeout)?;
                }
                self.finished = true;
                return Ok(Flow::Done);
            }
            "response.failed" => {
                let error = event
                    .pointer("/response/error")
                    .filter(|e| !e.is_null())
                    .cloned()
                    .unwrap_or_else(|| serde_json::json!({"message": "response failed"}));
                return Err(error_object(&error, timeout));
            }
            "error" => return Err(error_object(&event, timeout)),
            _ => {}
        }
        Ok(Flow::More)
    }

    /// The reply, once the response has ended.
    fn finish(mut self) -> Result<Assembled, LlmError> {
        if !self.finished {
            return Err(LlmError::MalformedResponse(
                "stream ended before response.completed".into(),
            ));
        }
        let items: Vec<Value> = match self.final_output.take().filter(|o| !o.is_empty()) {
            Some(output) => output,
            None => {
                let mut items = std::mem::take(&mut self.done_items);
                for (index, partial) in std::mem::take(&mut self.partial) {
                    items.entry(index).or_insert_with(|| partial.into_item());
                }
                items.into_values().collect()
            }
        };
        let mut reply = Assembled {
            id: self.id,
            model: self.model,
            counts: self.counts,
            ..Assembled::default()
        };
        for item in items {
            read_item(&mut reply, item);
        }
        reply.finish_reason = Some(
            if !reply.tool_calls.is_empty() {
                "tool_calls"
            } else if self.status.as_deref() == Some("incomplete") {
                match self.incomplete_reason.as_deref() {
                    Some("content_filter") => "content_filter",
                    _ => "length",
                }
            } else {
                "stop"
            }
            .to_owned(),
        );
        Ok(reply)
    }
}

impl Partial {
    /// The item the deltas describe.
    fn into_item(self) -> Value {
        let mut item = self.item;
        if !item.is_object() {
            item = serde_json::json!({});
        }
        match item.get("type").and_then(Value::as_str) {
            Some("message") => {
                item["content"] = serde_json::json!([{"type": "output_text", "text": self.text}])
            }
            Some("reasoning") => {
                item["summary"] =
                    serde_json::json!([{"type": "summary_text", "text": self.summary}])
            }
            Some("function_call") => item["arguments"] = Value::String(self.arguments),
            _ => {}
        }
        item
    }
}

/// Adds one output item to the reply.
fn read_item(reply: &mut Assembled, item: Value) {
    let text = |key: &str| {
        item.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    match item.get("type").and_then(Value::as_str) {
        Some("message") => {
            for part in item
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match part.get("type").and_then(Value::as_str) {
                    Some("output_text") | Some("text") => {
                        reply
                            .text
                            .push_str(part.get("text").and_then(Value::as_str).unwrap_or_default());
                    }
                    Some("refusal") => {
                        reply.text.push_str(
                            part.get("refusal")
                                .and_then(Value::as_str)
                                .unwrap_or_default(),
                        );
                    }
                    _ => {}
                }
            }
        }
        Some("reasoning") => {
            let texts = |key: &str| -> Vec<String> {
                item.get(key)
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|part| part.get("text").and_then(Value::as_str))
                    .map(str::to_owned)
                    .collect()
            };
            let (summary, content) = (texts("summary"), texts("content"));
            for t in summary.iter().chain(&content) {
                if !reply.reasoning.is_empty() {
                    reply.reasoning.push_str("\n\n");
                }
                reply.reasoning.push_str(t);
            }
            reply.reasoning_item = Some(reasoning_item_model(&item, summary, content));
        }
        Some("function_call") => {
            let call_id = text("call_id");
            let id = text("id");
            let arguments = match item.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                None | Some(Value::Null) => String::new(),
                Some(other) => other.to_string(),
            };
            reply.tool_calls.push(AssembledCall {
                id: if call_id.is_empty() {
                    format!("call_{}", uuid::Uuid::new_v4().simple())
                } else {
                    call_id
                },
                item_id: (!id.is_empty()).then_some(id),
                name: text("name"),
                arguments,
            });
        }
        _ => {}
    }
}

/// A reasoning item as upstream's `ReasoningItemModel` keeps it on messages and events: `id`,
/// `summary` and `content` as lists of strings, `encrypted_content`, `status` (absent, not null,
/// when the item has none). The request puts it back in the API's shape.
fn reasoning_item_model(item: &Value, summary: Vec<String>, content: Vec<String>) -> Value {
    let mut out = serde_json::Map::new();
    for key in ["id", "encrypted_content", "status"] {
        if let Some(value) = item.get(key).filter(|v| v.is_string()) {
            out.insert(key.into(), value.clone());
        }
    }
    out.insert("summary".into(), serde_json::json!(summary));
    if !content.is_empty() {
        out.insert("content".into(), serde_json::json!(content));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(1);

    #[test]
    fn whole_response() {
        let body = br#"{"id":"resp_1","object":"response","status":"completed","model":"gpt-5","output":[
            {"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"plan"}],"encrypted_content":"ENC"},
            {"type":"message","id":"msg_1","role":"assistant","content":[{"type":"output_text","text":"Hi","annotations":[]}]},
            {"type":"function_call","id":"fc_1","call_id":"call_1","name":"terminal","arguments":"{\"command\":\"ls\"}","status":"completed"}],
            "usage":{"input_tokens":50,"input_tokens_details":{"cached_tokens":20},"output_tokens":10,"output_tokens_details":{"reasoning_tokens":4},"total_tokens":60}}"#;
        let reply = ResponseAssembler::from_json(body, T).unwrap();
        assert_eq!(reply.text, "Hi");
        assert_eq!(reply.reasoning, "plan");
        assert_eq!(
            reply.reasoning_item,
            Some(serde_json::json!({"id":"rs_1","summary":["plan"],"encrypted_content":"ENC"}))
        );
        assert_eq!(reply.tool_calls[0].id, "call_1");
        assert_eq!(reply.tool_calls[0].item_id.as_deref(), Some("fc_1"));
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            reply.counts,
            Some(Counts {
                prompt: 50,
                completion: 10,
                cache_read: 20,
                cache_write: 0,
                reasoning: 4
            })
        );
    }

    #[test]
    fn stream_without_final_output_uses_items() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut a = ResponseAssembler::default();
        for data in [
            r#"{"type":"response.created","response":{"id":"resp_2","model":"gpt-5","status":"in_progress","output":[]}}"#,
            r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"reasoning","id":"rs_2","summary":[]}}"#,
            r#"{"type":"response.reasoning_summary_text.delta","output_index":0,"delta":"thinking"}"#,
            r#"{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"m","role":"assistant","content":[]}}"#,
            r#"{"type":"response.output_text.delta","output_index":1,"delta":"Hel"}"#,
            r#"{"type":"response.output_text.delta","output_index":1,"delta":"lo"}"#,
            r#"{"type":"response.output_item.added","output_index":2,"item":{"type":"function_call","id":"fc_2","call_id":"call_2","name":"t","arguments":""}}"#,
            r#"{"type":"response.function_call_arguments.delta","output_index":2,"delta":"{\"a\""}"#,
            r#"{"type":"response.function_call_arguments.done","output_index":2,"arguments":"{\"a\":1}"}"#,
        ] {
            assert_eq!(a.push("", data, Some(&tx), T).unwrap(), Flow::More);
        }
        let done = r#"{"type":"response.completed","response":{"id":"resp_2","status":"completed","usage":{"input_tokens":3,"output_tokens":2}}}"#;
        assert_eq!(a.push("", done, None, T).unwrap(), Flow::Done);
        let reply = a.finish().unwrap();
        assert_eq!(reply.text, "Hello");
        assert_eq!(reply.reasoning, "thinking");
        assert_eq!(reply.tool_calls[0].arguments, r#"{"a":1}"#);
        assert_eq!(reply.counts.unwrap().prompt, 3);
        assert_eq!(
            rx.try_recv().unwrap().reasoning_content.as_deref(),
            Some("thinking")
        );
        assert_eq!(rx.try_recv().unwrap().content.as_deref(), Some("Hel"));
    }

    #[test]
    fn failures() {
        let mut a = ResponseAssembler::default();
        let failed = r#"{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}"#;
        assert!(matches!(
            a.push("", failed, None, T),
            Err(LlmError::ServiceUnavailable { .. })
        ));
        let mut a = ResponseAssembler::default();
        let err = r#"{"type":"error","code":"context_length_exceeded","message":"Your input exceeds the context window"}"#;
        assert!(matches!(
            a.push("", err, None, T),
            Err(LlmError::ContextWindowExceeded(_))
        ));
        assert!(matches!(
            ResponseAssembler::default().finish(),
            Err(LlmError::MalformedResponse(_))
        ));
        let incomplete = br#"{"id":"r","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}"#;
        assert_eq!(
            ResponseAssembler::from_json(incomplete, T)
                .unwrap()
                .finish_reason
                .as_deref(),
            Some("length")
        );
    }
}
