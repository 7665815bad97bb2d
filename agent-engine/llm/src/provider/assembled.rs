//! [`Assembled`]: a reply of any protocol put together (from one JSON object or a whole
//! stream), before it becomes an [`LlmResponse`].

use std::time::Duration;

use tandem_protocol::{
    Content, LlmConfig, Message, MessageToolCall, Role, ThinkingBlock, TokenUsage,
};

use tokio::sync::mpsc::UnboundedSender;

use crate::{LlmResponse, StreamDelta};

/// A tool call of a reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AssembledCall {
    /// The id the tool result must name (`toolu_...`, Responses `call_id`).
    pub id: String,
    /// Responses API item id (`fc_...`).
    pub item_id: Option<String>,
    pub name: String,
    pub arguments: String,
}

/// Token counts as read from the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Whole prompt, cached parts included.
    pub prompt: u64,
    pub completion: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub reasoning: u64,
}

/// A reply put together.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Assembled {
    pub id: String,
    pub model: String,
    pub text: String,
    /// Readable reasoning (thinking text, reasoning summaries).
    pub reasoning: String,
    pub thinking_blocks: Vec<ThinkingBlock>,
    /// The Responses reasoning item, to send back on the next turn.
    pub reasoning_item: Option<serde_json::Value>,
    pub tool_calls: Vec<AssembledCall>,
    /// In OpenAI's vocabulary (`stop`, `tool_calls`, `length`, ...).
    pub finish_reason: Option<String>,
    pub counts: Option<Counts>,
}

impl Assembled {
    /// The response, with usage and cost for `config`; `origin` names the API that produced
    /// the tool calls (`completion` or `responses`).
    pub fn into_response(self, config: &LlmConfig, latency: Duration, origin: &str) -> LlmResponse {
        let counts = self.counts.unwrap_or_default();
        let usage = TokenUsage {
            model: config.model.clone(),
            prompt_tokens: counts.prompt,
            completion_tokens: counts.completion,
            cache_read_tokens: counts.cache_read,
            cache_write_tokens: counts.cache_write,
            reasoning_tokens: counts.reasoning,
            context_window: 0,
            per_turn_token: counts.prompt + counts.completion,
            response_id: self.id.clone(),
        };
        let cost = config.input_cost_per_token.unwrap_or(0.0) * counts.prompt as f64
            + config.output_cost_per_token.unwrap_or(0.0) * counts.completion as f64;
        let content = if self.text.is_empty() {
            Vec::new()
        } else {
            vec![Content::text(self.text)]
        };
        let mut message = Message::new(Role::Assistant, content);
        if !self.reasoning.is_empty() {
            message.reasoning_content = Some(self.reasoning);
        }
        message.thinking_blocks = self.thinking_blocks;
        message.responses_reasoning_item = self.reasoning_item;
        if !self.tool_calls.is_empty() {
            message.tool_calls = Some(
                self.tool_calls
                    .into_iter()
                    .map(|call| MessageToolCall {
                        id: call.id,
                        responses_item_id: call.item_id,
                        name: call.name,
                        arguments: call.arguments,
                        origin: origin.to_owned(),
                    })
                    .collect(),
            );
        }
        LlmResponse {
            id: self.id,
            model: self.model,
            message,
            finish_reason: self.finish_reason,
            usage,
            cost: if cost.is_finite() { cost } else { 0.0 },
            latency,
        }
    }
}

/// A non-negative count at `pointer` in `value`, 0 when missing or odd.
pub(crate) fn count(value: &serde_json::Value, pointer: &str) -> u64 {
    value
        .pointer(pointer)
        .and_then(|v| {
            v.as_u64().or_else(|| {
                v.as_f64()
                    .filter(|f| f.is_finite() && *f >= 0.0)
                    .map(|f| f as u64)
            })
        })
        .unwrap_or(0)
}

/// Sends the non-empty parts of a delta to `on_delta`, when the caller listens.
pub(crate) fn send_delta(
    on_delta: Option<&UnboundedSender<StreamDelta>>,
    content: Option<&str>,
    reasoning: Option<&str>,
) {
    let content = content.filter(|c| !c.is_empty());
    let reasoning = reasoning.filter(|r| !r.is_empty());
    if let Some(sink) = on_delta
        && (content.is_some() || reasoning.is_some())
    {
        // A caller that stopped listening does not stop the call.
        let _ = sink.send(StreamDelta {
            content: content.map(str::to_owned),
            reasoning_content: reasoning.map(str::to_owned),
        });
    }
}
