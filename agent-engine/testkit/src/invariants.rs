//! Checks every captured request the way a strict provider would: tool results must answer
//! tool calls, and tool calls must be answered before the conversation moves on.

use std::collections::BTreeSet;

use serde_json::Value;

/// The violations in one request body's `messages`, as human-readable sentences.
pub(crate) fn check_request(body: &Value) -> Vec<String> {
    let Some(messages) = body.get("messages").and_then(Value::as_array) else {
        return vec!["request has no `messages` array".to_owned()];
    };
    let mut violations = Vec::new();
    let mut called: BTreeSet<String> = BTreeSet::new();
    let mut answered: BTreeSet<String> = BTreeSet::new();
    let mut pending: Vec<String> = Vec::new();
    for (position, message) in messages.iter().enumerate() {
        match message.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                for id in &pending {
                    violations.push(format!(
                        "message {position}: assistant turn before tool call `{id}` was answered"
                    ));
                }
                pending.clear();
                let calls = message.get("tool_calls").and_then(Value::as_array);
                for call in calls.into_iter().flatten() {
                    let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
                    if id.is_empty() {
                        violations.push(format!("message {position}: tool call without an id"));
                        continue;
                    }
                    if !called.insert(id.to_owned()) {
                        violations.push(format!("message {position}: tool call id `{id}` reused"));
                    }
                    pending.push(id.to_owned());
                }
            }
            Some("tool") => {
                let id = message
                    .get("tool_call_id")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !called.contains(id) {
                    violations.push(format!(
                        "message {position}: tool result answers unknown tool_call_id `{id}`"
                    ));
                } else if !answered.insert(id.to_owned()) {
                    violations.push(format!(
                        "message {position}: tool call `{id}` answered more than once"
                    ));
                }
                pending.retain(|p| p != id);
            }
            Some("system" | "user" | "developer") => {}
            other => violations.push(format!("message {position}: unknown role {other:?}")),
        }
    }
    for id in pending {
        violations.push(format!("tool call `{id}` is never answered"));
    }
    violations
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn well_formed_conversation_has_no_violations() {
        let body = json!({"messages": [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "u"},
            {"role": "assistant", "tool_calls": [{"id": "a"}, {"id": "b"}]},
            {"role": "tool", "tool_call_id": "a"},
            {"role": "tool", "tool_call_id": "b"},
            {"role": "assistant", "content": "done"},
        ]});
        assert_eq!(check_request(&body), Vec::<String>::new());
    }

    #[test]
    fn orphan_and_unanswered_calls_are_reported() {
        let body = json!({"messages": [
            {"role": "user", "content": "u"},
            {"role": "tool", "tool_call_id": "x"},
            {"role": "assistant", "tool_calls": [{"id": "a"}]},
            {"role": "assistant", "tool_calls": [{"id": "b"}]},
        ]});
        assert_eq!(
            check_request(&body),
            vec![
                "message 1: tool result answers unknown tool_call_id `x`".to_owned(),
                "message 3: assistant turn before tool call `a` was answered".to_owned(),
                "tool call `b` is never answered".to_owned(),
            ]
        );
    }
}
