//! Renders scripted replies in the OpenAI Chat Completions wire format: a `chat.completion`
//! object, or the `chat.completion.chunk` events of a stream. `tandem-testkit` renders the
//! other protocols (Anthropic Messages, OpenAI Responses) on top of [`RequestShape`],
//! [`pieces`] and [`computed_usage`].

use serde_json::{Value, json};

use crate::script::{Reply, ToolCallSpec, UsageSpec};

/// Fixed `created` timestamp so that replies are deterministic.
const CREATED: u64 = 1_700_000_000;

/// What the request asked for that shapes the reply.
#[derive(Debug, Clone)]
pub struct RequestShape {
    /// The request's `model`.
    pub model: String,
    /// Size of the request body, bytes (for computed usage).
    pub body_len: usize,
    /// `stream: true`.
    pub stream: bool,
    /// `stream_options.include_usage: true`.
    pub include_usage: bool,
    /// Responses `include` asks for `reasoning.encrypted_content`.
    pub encrypted_reasoning: bool,
}

impl RequestShape {
    /// Reads the shape from a request body.
    pub fn of(body: &Value, body_len: usize) -> Self {
        Self {
            model: body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("scripted")
                .to_owned(),
            body_len,
            stream: body.get("stream").and_then(Value::as_bool).unwrap_or(false),
            include_usage: body
                .pointer("/stream_options/include_usage")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            encrypted_reasoning: body
                .get("include")
                .and_then(Value::as_array)
                .is_some_and(|i| i.iter().any(|v| v == "reasoning.encrypted_content")),
        }
    }
}

/// A reply made concrete for one request: ids, model and usage resolved.
#[derive(Debug, Clone)]
pub struct Rendered {
    id: String,
    model: String,
    text: Option<String>,
    reasoning: Option<String>,
    tool_calls: Vec<(String, String, String)>,
    finish_reason: String,
    usage: Option<UsageSpec>,
}

impl Rendered {
    /// Resolves `reply` for request number `index`.
    pub fn new(reply: &Reply, shape: &RequestShape, index: usize) -> Self {
        let tool_calls: Vec<(String, String, String)> = reply
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, call)| {
                let id = call
                    .id
                    .clone()
                    .unwrap_or_else(|| format!("call_{index:04}_{i}"));
                (id, call.name.clone(), call.arguments_text())
            })
            .collect();
        let finish_reason = reply.finish_reason.clone().unwrap_or_else(|| {
            if tool_calls.is_empty() {
                "stop".to_owned()
            } else {
                "tool_calls".to_owned()
            }
        });
        let usage = if reply.no_usage {
            None
        } else {
            Some(reply.usage.unwrap_or_else(|| computed_usage(reply, shape)))
        };
        Self {
            id: format!("chatcmpl-scripted-{index:04}"),
            model: reply.model.clone().unwrap_or_else(|| shape.model.clone()),
            text: reply.text.clone(),
            reasoning: reply.reasoning.clone(),
            tool_calls,
            finish_reason,
            usage,
        }
    }

    /// The `chat.completion` object.
    pub fn completion(&self) -> Value {
        let mut message = json!({ "role": "assistant", "content": self.text });
        if let Some(reasoning) = &self.reasoning {
            message["reasoning_content"] = json!(reasoning);
        }
        if !self.tool_calls.is_empty() {
            let calls: Vec<Value> = self
                .tool_calls
                .iter()
                .map(|(id, name, args)| {
                    json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
                })
                .collect();
            message["tool_calls"] = Value::Array(calls);
        }
        let mut body = json!({
            "id": self.id,
            "object": "chat.completion",
            "created": CREATED,
            "model": self.model,
            "choices": [{ "index": 0, "message": message, "finish_reason": self.finish_reason }],
        });
        if let Some(usage) = &self.usage {
            body["usage"] = usage_json(usage);
        }
        body
    }

    /// The data of every SSE event of the stream, `[DONE]` included. With `truncated`, only
    /// the first half of the content chunks, without finish reason, usage or `[DONE]`.
    pub fn chunks(&self, include_usage: bool, truncated: bool) -> Vec<String> {
        let mut deltas = vec![json!({"role": "assistant", "content": ""})];
        if let Some(reasoning) = &self.reasoning {
            deltas.extend(
                pieces(reasoning)
                    .into_iter()
                    .map(|p| json!({"reasoning_content": p})),
            );
        }
        if let Some(text) = &self.text {
            deltas.extend(pieces(text).into_iter().map(|p| json!({"content": p})));
        }
        for (index, (id, name, args)) in self.tool_calls.iter().enumerate() {
            deltas.push(json!({"tool_calls": [{
                "index": index, "id": id, "type": "function",
                "function": {"name": name, "arguments": ""},
            }]}));
            deltas.extend(
                pieces(args).into_iter().map(
                    |p| json!({"tool_calls": [{"index": index, "function": {"arguments": p}}]}),
                ),
            );
        }
        if truncated {
            let keep = deltas.len().div_ceil(2);
            deltas.truncate(keep);
        }
        let mut events: Vec<String> = deltas
            .into_iter()
            .map(|delta| self.chunk(delta, None).to_string())
            .collect();
        if truncated {
            return events;
        }
        events.push(self.chunk(json!({}), Some(&self.finish_reason)).to_string());
        if include_usage {
            let mut last = self.chunk_envelope(Vec::new());
            last["usage"] = self.usage.as_ref().map_or(Value::Null, usage_json);
            events.push(last.to_string());
        }
        events.push("[DONE]".to_owned());
        events
    }

    fn chunk(&self, delta: Value, finish_reason: Option<&str>) -> Value {
        self.chunk_envelope(vec![json!({
            "index": 0, "delta": delta, "finish_reason": finish_reason,
        })])
    }

    fn chunk_envelope(&self, choices: Vec<Value>) -> Value {
        json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": self.model,
            "choices": choices,
        })
    }
}

/// Splits text into small pieces (about 12 bytes, on character boundaries) like a provider's
/// token stream.
pub fn pieces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        current.push(c);
        if current.len() >= 12 {
            out.push(std::mem::take(&mut current));
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// Deterministic usage: a token per 4 bytes of request, and of reply text and arguments.
pub fn computed_usage(reply: &Reply, shape: &RequestShape) -> UsageSpec {
    let reply_len = reply.text.as_deref().map_or(0, str::len)
        + reply.reasoning.as_deref().map_or(0, str::len)
        + reply
            .tool_calls
            .iter()
            .map(|c: &ToolCallSpec| c.name.len() + c.arguments_text().len())
            .sum::<usize>();
    UsageSpec {
        prompt_tokens: (shape.body_len as u64).div_ceil(4).max(1),
        completion_tokens: (reply_len as u64).div_ceil(4).max(1),
        cached_tokens: 0,
        reasoning_tokens: reply
            .reasoning
            .as_deref()
            .map_or(0, |r| (r.len() as u64).div_ceil(4)),
    }
}

fn usage_json(usage: &UsageSpec) -> Value {
    json!({
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    })
}

/// An OpenAI error body.
pub fn error_body(message: &str, kind: &str) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
}
