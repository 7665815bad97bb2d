//! Reading an SSE stream of `chat.completion.chunk`s: text and reasoning deltas are forwarded as
//! they arrive, tool calls are assembled by index from their fragments, and `[DONE]` ends the
//! stream.

use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;

use crate::error::LlmError;
use crate::openai::reply::{Assembled, Completion, error_in_reply, new_call_id};
use crate::provider::assembled::send_delta;
use crate::provider::client::ReplyAssembler;
use crate::provider::transport::Flow;
use crate::{StreamDelta, provider};

/// A tool call being assembled from fragments.
#[derive(Debug, Default)]
struct PartialCall {
    index: u64,
    id: String,
    name: String,
    arguments: String,
}

/// Accumulates the chunks of one stream.
#[derive(Debug, Default)]
pub(crate) struct StreamAssembler {
    reply: Assembled,
    calls: Vec<PartialCall>,
    done: bool,
}

impl StreamAssembler {
    /// Takes in the data of one SSE event; `timeout` is reported for in-stream 408 errors.
    pub fn push(
        &mut self,
        data: &str,
        on_delta: Option<&UnboundedSender<StreamDelta>>,
        timeout: Duration,
    ) -> Result<(), LlmError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Completion = serde_json::from_str(data)
            .map_err(|e| LlmError::MalformedResponse(format!("stream chunk is not JSON: {e}")))?;
        if let Some(error) = error_in_reply(&chunk, timeout) {
            return Err(error);
        }
        if self.reply.id.is_empty() {
            self.reply.id = chunk.id.unwrap_or_default();
        }
        if self.reply.model.is_empty() {
            self.reply.model = chunk.model.unwrap_or_default();
        }
        if chunk.usage.as_ref().is_some_and(|u| !u.is_null()) {
            self.reply.usage = chunk.usage;
        }
        let Some(choice) = chunk.choices.into_iter().flatten().next() else {
            return Ok(());
        };
        if choice.finish_reason.is_some() {
            self.reply.finish_reason = choice.finish_reason;
        }
        let Some(delta) = choice.delta.or(choice.message) else {
            return Ok(());
        };
        let text = delta.text();
        let reasoning = delta.reasoning().unwrap_or_default().to_owned();
        self.reply.text.push_str(&text);
        self.reply.reasoning.push_str(&reasoning);
        send_delta(on_delta, Some(&text), Some(&reasoning));
        for fragment in delta.tool_calls.into_iter().flatten() {
            let index = fragment.index.unwrap_or_else(|| {
                // Servers that leave out `index` send whole calls: a new id starts a new call.
                match (&fragment.id, self.calls.last()) {
                    (Some(id), Some(last)) if !id.is_empty() && *id != last.id => last.index + 1,
                    (_, Some(last)) => last.index,
                    (_, None) => 0,
                }
            });
            let position = match self.calls.iter().position(|c| c.index == index) {
                Some(position) => position,
                None => {
                    self.calls.push(PartialCall {
                        index,
                        ..PartialCall::default()
                    });
                    self.calls.len() - 1
                }
            };
            let call = &mut self.calls[position];
            if let Some(id) = fragment.id.filter(|id| !id.is_empty())
                && call.id.is_empty()
            {
                call.id = id;
            }
            if let Some(function) = fragment.function {
                if let Some(name) = function.name.as_deref().filter(|n| !n.is_empty()) {
                    // Some servers repeat the whole name in every fragment; others split it.
                    if call.name != name {
                        call.name.push_str(name);
                    }
                }
                call.arguments.push_str(&function.arguments_text());
            }
        }
        Ok(())
    }

    /// The reply, once the stream has ended.
    pub fn finish(mut self) -> Result<Assembled, LlmError> {
        if !self.done && self.reply.finish_reason.is_none() {
            return Err(LlmError::MalformedResponse(
                "stream ended before [DONE] or a finish reason".into(),
            ));
        }
        self.calls.sort_by_key(|c| c.index);
        self.reply.tool_calls = self
            .calls
            .into_iter()
            .map(|c| {
                (
                    if c.id.is_empty() { new_call_id() } else { c.id },
                    c.name,
                    c.arguments,
                )
            })
            .collect();
        Ok(self.reply)
    }
}

/// A Chat stream read event by event, as the shared client reads every protocol's: an
/// `error` event fails the call, `[DONE]` ends it.
#[derive(Debug, Default)]
pub struct ChunkEvents(StreamAssembler);

impl ReplyAssembler for ChunkEvents {
    fn push(
        &mut self,
        name: &str,
        data: &str,
        on_delta: Option<&UnboundedSender<StreamDelta>>,
        timeout: Duration,
    ) -> Result<Flow, LlmError> {
        if name == "error" {
            let message = crate::openai::http_error::body_message(500, data);
            return Err(LlmError::ServiceUnavailable {
                status: 500,
                message,
            });
        }
        self.0.push(data, on_delta, timeout)?;
        Ok(if self.0.done { Flow::Done } else { Flow::More })
    }

    fn finish(self) -> Result<provider::assembled::Assembled, LlmError> {
        self.0.finish().map(Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(1);

    #[test]
    fn assembles_fragments_by_index() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut s = StreamAssembler::default();
        for data in [
            r#"{"id":"c1","model":"m","choices":[{"delta":{"role":"assistant","content":"Hi"}}]}"#,
            r#"{"choices":[{"delta":{"reasoning_content":"hmm"}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"fin","arguments":""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"terminal","arguments":"{\"co"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"name":"ish","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"terminal","arguments":"mmand\":1}"}}]}}]}"#,
            r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}}"#,
            "[DONE]",
        ] {
            s.push(data, Some(&tx), T).unwrap();
        }
        let reply = s.finish().unwrap();
        assert_eq!(reply.id, "c1");
        assert_eq!(reply.text, "Hi");
        assert_eq!(reply.reasoning, "hmm");
        assert_eq!(
            reply.tool_calls,
            vec![
                ("a".into(), "terminal".into(), r#"{"command":1}"#.into()),
                ("b".into(), "finish".into(), "{}".into()),
            ]
        );
        assert_eq!(reply.finish_reason.as_deref(), Some("tool_calls"));
        assert!(reply.usage.is_some());
        assert_eq!(rx.try_recv().unwrap().content.as_deref(), Some("Hi"));
        assert_eq!(
            rx.try_recv().unwrap().reasoning_content.as_deref(),
            Some("hmm")
        );
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn broken_streams_are_malformed() {
        let mut s = StreamAssembler::default();
        assert!(matches!(
            s.push("{nope", None, T),
            Err(LlmError::MalformedResponse(_))
        ));
        let mut s = StreamAssembler::default();
        s.push(r#"{"choices":[{"delta":{"content":"a"}}]}"#, None, T)
            .unwrap();
        assert!(matches!(s.finish(), Err(LlmError::MalformedResponse(_))));
    }
}
