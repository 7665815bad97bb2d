//! OpenAI Responses on the scripted server: replies rendered as a `response` object (reasoning
//! item, assistant message, function calls, usage with cached and reasoning tokens) or as the
//! `response.*` events of a stream, and the invariants of its `input` (every
//! `function_call_output` answers an earlier `function_call`; every call is answered; a
//! reasoning item sent back is followed by its output and, when nothing is stored server-side,
//! carries its `encrypted_content`).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use tandem_demo::Reply;
use tandem_demo::openai_chat::{RequestShape, computed_usage, pieces};

/// Fixed `created_at` so that replies are deterministic.
const CREATED: u64 = 1_700_000_000;

/// A reply made concrete for one request.
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    id: String,
    model: String,
    index: usize,
    reasoning: Option<(String, Option<String>)>,
    text: Option<String>,
    calls: Vec<(String, String, String)>,
    incomplete: bool,
    usage: Option<Value>,
}

impl Rendered {
    /// Resolves `reply` for request number `index`.
    pub fn new(reply: &Reply, shape: &RequestShape, index: usize) -> Self {
        let reasoning = reply.reasoning.clone().map(|summary| {
            let encrypted = reply.encrypted_reasoning.clone().or_else(|| {
                shape
                    .encrypted_reasoning
                    .then(|| format!("gAAAA_scripted_{index:04}"))
            });
            (summary, encrypted)
        });
        let usage = (!reply.no_usage).then(|| {
            let u = reply.usage.unwrap_or_else(|| computed_usage(reply, shape));
            json!({
                "input_tokens": u.prompt_tokens,
                "input_tokens_details": {"cached_tokens": u.cached_tokens, "cache_write_tokens": reply.cache_write_tokens},
                "output_tokens": u.completion_tokens,
                "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
                "total_tokens": u.prompt_tokens + u.completion_tokens,
            })
        });
        Self {
            id: format!("resp_scripted_{index:04}"),
            model: reply.model.clone().unwrap_or_else(|| shape.model.clone()),
            index,
            reasoning,
            text: reply.text.clone().filter(|t| !t.is_empty()),
            calls: reply
                .tool_calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    (
                        c.id.clone()
                            .unwrap_or_else(|| format!("call_{index:04}_{i}")),
                        c.name.clone(),
                        c.arguments_text(),
                    )
                })
                .collect(),
            incomplete: reply.finish_reason.as_deref() == Some("length"),
            usage,
        }
    }

    /// The output items, in order, each as finished.
    fn items(&self) -> Vec<Value> {
        let mut items = Vec::new();
        if let Some((summary, encrypted)) = &self.reasoning {
            let mut item = json!({"type": "reasoning", "id": format!("rs_scripted_{:04}", self.index),
                "summary": [{"type": "summary_text", "text": summary}]});
            if let Some(encrypted) = encrypted {
                item["encrypted_content"] = json!(encrypted);
            }
            items.push(item);
        }
        if let Some(text) = &self.text {
            items.push(json!({"type": "message", "id": format!("msg_scripted_{:04}", self.index),
                "role": "assistant", "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": [], "logprobs": []}]}));
        }
        for (i, (call_id, name, arguments)) in self.calls.iter().enumerate() {
            items.push(
                json!({"type": "function_call", "id": format!("fc_scripted_{:04}_{i}", self.index),
                "call_id": call_id, "name": name, "arguments": arguments, "status": "completed"}),
            );
        }
        items
    }

    /// The `response` object with `status` and `output`.
    fn envelope(&self, status: &str, output: Vec<Value>, usage: Option<Value>) -> Value {
        json!({
            "id": self.id, "object": "response", "created_at": CREATED, "status": status,
            "background": false, "error": null,
            "incomplete_details": if status == "incomplete" { json!({"reason": "max_output_tokens"}) } else { Value::Null },
            "instructions": null, "max_output_tokens": null, "model": self.model,
            "output": output, "parallel_tool_calls": true, "previous_response_id": null,
            "reasoning": {"effort": null, "summary": null}, "store": false, "temperature": 1.0,
            "text": {"format": {"type": "text"}}, "tool_choice": "auto", "tools": [], "top_p": 1.0,
            "truncation": "disabled", "usage": usage, "user": null, "metadata": {},
        })
    }

    fn final_status(&self) -> &'static str {
        if self.incomplete {
            "incomplete"
        } else {
            "completed"
        }
    }

    /// The `response` object.
    pub fn response(&self) -> Value {
        self.envelope(self.final_status(), self.items(), self.usage.clone())
    }

    /// The stream's `(event, data)` pairs. With `truncated`, the first half of the item events,
    /// with no `response.completed`.
    pub fn events(&self, truncated: bool) -> Vec<(String, String)> {
        let mut events: Vec<Value> = vec![
            json!({"type": "response.created", "response": self.envelope("in_progress", Vec::new(), None)}),
            json!({"type": "response.in_progress", "response": self.envelope("in_progress", Vec::new(), None)}),
        ];
        let mut body = Vec::new();
        for (output_index, item) in self.items().into_iter().enumerate() {
            let item_id = item["id"].clone();
            let mut added = item.clone();
            match item["type"].as_str() {
                Some("reasoning") => {
                    added["summary"] = json!([]);
                    body.push(json!({"type": "response.output_item.added", "output_index": output_index, "item": added}));
                    let text = item["summary"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    let base = json!({"item_id": item_id, "output_index": output_index, "summary_index": 0});
                    body.push(with(&base, json!({"type": "response.reasoning_summary_part.added", "part": {"type": "summary_text", "text": ""}})));
                    for p in pieces(&text) {
                        body.push(with(
                            &base,
                            json!({"type": "response.reasoning_summary_text.delta", "delta": p}),
                        ));
                    }
                    body.push(with(
                        &base,
                        json!({"type": "response.reasoning_summary_text.done", "text": text}),
                    ));
                    body.push(with(&base, json!({"type": "response.reasoning_summary_part.done", "part": {"type": "summary_text", "text": text}})));
                }
                Some("message") => {
                    added["content"] = json!([]);
                    added["status"] = json!("in_progress");
                    body.push(json!({"type": "response.output_item.added", "output_index": output_index, "item": added}));
                    let text = item["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    let base = json!({"item_id": item_id, "output_index": output_index, "content_index": 0});
                    body.push(with(&base, json!({"type": "response.content_part.added",
                        "part": {"type": "output_text", "text": "", "annotations": [], "logprobs": []}})));
                    for p in pieces(&text) {
                        body.push(with(&base, json!({"type": "response.output_text.delta", "delta": p, "logprobs": []})));
                    }
                    body.push(with(
                        &base,
                        json!({"type": "response.output_text.done", "text": text, "logprobs": []}),
                    ));
                    body.push(with(&base, json!({"type": "response.content_part.done",
                        "part": {"type": "output_text", "text": text, "annotations": [], "logprobs": []}})));
                }
                _ => {
                    added["arguments"] = json!("");
                    added["status"] = json!("in_progress");
                    body.push(json!({"type": "response.output_item.added", "output_index": output_index, "item": added}));
                    let arguments = item["arguments"].as_str().unwrap_or_default().to_owned();
                    let base = json!({"item_id": item_id, "output_index": output_index});
                    for p in pieces(&arguments) {
                        body.push(with(
                            &base,
                            json!({"type": "response.function_call_arguments.delta", "delta": p}),
                        ));
                    }
                    body.push(with(&base, json!({"type": "response.function_call_arguments.done", "arguments": arguments, "name": item["name"]})));
                }
            }
            body.push(json!({"type": "response.output_item.done", "output_index": output_index, "item": item}));
        }
        if truncated {
            body.truncate(body.len().div_ceil(2));
        }
        events.extend(body);
        if !truncated {
            let kind = if self.incomplete {
                "response.incomplete"
            } else {
                "response.completed"
            };
            events.push(json!({"type": kind, "response": self.response()}));
        }
        events
            .into_iter()
            .enumerate()
            .map(|(n, mut event)| {
                event["sequence_number"] = json!(n);
                (
                    event["type"].as_str().unwrap_or_default().to_owned(),
                    event.to_string(),
                )
            })
            .collect()
    }
}

/// `base`'s fields added to `event`.
fn with(base: &Value, mut event: Value) -> Value {
    if let (Some(base), Some(out)) = (base.as_object(), event.as_object_mut()) {
        for (k, v) in base {
            out.insert(k.clone(), v.clone());
        }
    }
    event
}

/// The violations in one request body's `input`, as a strict server would see them.
pub(crate) fn check_request(body: &Value) -> Vec<String> {
    let input = match body.get("input") {
        Some(Value::Array(items)) => items.clone(),
        Some(Value::String(_)) => return Vec::new(),
        _ => return vec!["request has no `input`".to_owned()],
    };
    // Without `store: true` the server keeps nothing a reasoning item could be found by.
    let stored = body.get("store").and_then(Value::as_bool) == Some(true);
    let mut violations = Vec::new();
    let mut called: BTreeSet<String> = BTreeSet::new();
    let mut answered: BTreeSet<String> = BTreeSet::new();
    for (position, item) in input.iter().enumerate() {
        let kind = item
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("message");
        match kind {
            "function_call" => {
                let id = item
                    .get("call_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if id.is_empty() {
                    violations.push(format!("item {position}: function_call without a call_id"));
                } else if !called.insert(id.to_owned()) {
                    violations.push(format!("item {position}: call_id `{id}` reused"));
                }
            }
            "function_call_output" => {
                let id = item
                    .get("call_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !called.contains(id) {
                    violations.push(format!(
                        "item {position}: function_call_output answers unknown call_id `{id}`"
                    ));
                } else if !answered.insert(id.to_owned()) {
                    violations.push(format!(
                        "item {position}: call `{id}` answered more than once"
                    ));
                }
            }
            "reasoning" => violations.extend(
                check_reasoning(item, input.get(position + 1), stored)
                    .into_iter()
                    .map(|v| format!("item {position}: {v}")),
            ),
            "message" => {
                let role = item.get("role").and_then(Value::as_str).unwrap_or_default();
                if !matches!(role, "user" | "assistant" | "system" | "developer") {
                    violations.push(format!("item {position}: unknown role `{role}`"));
                }
            }
            other => violations.push(format!("item {position}: unknown item type `{other}`")),
        }
    }
    for id in called.difference(&answered) {
        violations.push(format!("function_call `{id}` is never answered"));
    }
    violations
}

/// What a strict server rejects in a reasoning item sent back, given the item after it.
fn check_reasoning(item: &Value, next: Option<&Value>, stored: bool) -> Vec<String> {
    let mut violations = Vec::new();
    let id = item.get("id").and_then(Value::as_str).unwrap_or_default();
    if id.is_empty() {
        violations.push("reasoning item without an id".to_owned());
    }
    if item.get("status").is_some() {
        violations.push(format!("reasoning item `{id}` sent back with `status`"));
    }
    let encrypted = item
        .get("encrypted_content")
        .and_then(Value::as_str)
        .is_some_and(|e| !e.is_empty());
    if !stored && !encrypted {
        violations.push(format!(
            "reasoning item `{id}` has no encrypted_content and store is not true: it cannot be found"
        ));
    }
    let parts = |key: &str, kind: &str| {
        item.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|p| {
                p.get("type").and_then(Value::as_str) != Some(kind) || !p["text"].is_string()
            })
            .count()
    };
    if !item.get("summary").is_some_and(Value::is_array) {
        violations.push(format!("reasoning item `{id}` has no `summary` list"));
    } else if parts("summary", "summary_text") > 0 {
        violations.push(format!(
            "reasoning item `{id}`: a summary part is not a summary_text object"
        ));
    }
    if parts("content", "reasoning_text") > 0 {
        violations.push(format!(
            "reasoning item `{id}`: a content part is not a reasoning_text object"
        ));
    }
    let followed = next.is_some_and(|n| {
        let kind = n.get("type").and_then(Value::as_str).unwrap_or("message");
        kind == "function_call"
            || (kind == "message" && n.get("role").and_then(Value::as_str) == Some("assistant"))
    });
    if !followed {
        violations.push(format!(
            "reasoning item `{id}` was provided without its required following item"
        ));
    }
    violations
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invariants() {
        let good = json!({"store": false, "input": [
            {"type": "message", "role": "user", "content": "hi"},
            {"type": "reasoning", "id": "rs", "summary": [{"type": "summary_text", "text": "s"}],
                "encrypted_content": "E"},
            {"type": "function_call", "call_id": "a", "name": "x", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "a", "output": "ok"},
        ]});
        assert_eq!(check_request(&good), Vec::<String>::new());
        let bad = json!({"input": [
            {"type": "function_call_output", "call_id": "z", "output": "ok"},
            {"type": "function_call", "call_id": "a", "name": "x", "arguments": "{}"},
        ]});
        assert_eq!(check_request(&bad).len(), 2);
        let reasoning = |item: Value, next: Value| {
            check_request(&json!({"store": false, "input": [item, next]}))
        };
        let call = json!({"type": "function_call", "call_id": "a", "name": "x", "arguments": "{}"});
        let answer = json!({"type": "function_call_output", "call_id": "a", "output": "ok"});
        let assistant = json!({"type": "message", "role": "assistant", "content": []});
        // No encrypted content while nothing is stored; upstream's string summary; status.
        assert_eq!(
            reasoning(
                json!({"type": "reasoning", "id": "rs", "summary": []}),
                assistant.clone()
            )
            .len(),
            1
        );
        assert_eq!(
            reasoning(
                json!({"type": "reasoning", "id": "rs", "summary": ["s"], "encrypted_content": "E", "status": "completed"}),
                assistant.clone()
            )
            .len(),
            2
        );
        // Nothing after it.
        assert_eq!(
            reasoning(
                json!({"type": "reasoning", "id": "rs", "summary": [], "encrypted_content": "E"}),
                json!({"type": "message", "role": "user", "content": "hi"})
            )
            .len(),
            1
        );
        let stored = json!({"store": true, "input": [
            {"type": "reasoning", "id": "rs", "summary": []}, call, answer]});
        assert_eq!(check_request(&stored), Vec::<String>::new());
    }
}
