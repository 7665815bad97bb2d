//! Crash recovery: which tool calls of a log never got an answer.

use std::collections::HashMap;

use tandem_protocol::{ActionEvent, Event};

/// The `ActionEvent`s with a parsed `action` that no `ObservationEvent`, `AgentErrorEvent` or
/// `UserRejectObservation` answers, in log order. After a crash these are the tool calls that
/// were running (or about to run) when the process died; recovery records an error for each.
///
/// An answer names its action by `action_id` (observations, rejections; an `AgentErrorEvent`
/// by its `parent_id` when that action has the same `tool_call_id`) or, failing that, by `tool_call_id`, which then answers the earliest
/// unanswered action with that call id (providers may reuse call ids across responses).
/// Actions without a parsed `action` are not counted: the engine answers those with an
/// `AgentErrorEvent` at once, and they never run.
pub fn unmatched_actions(events: &[Event]) -> Vec<&ActionEvent> {
    // Pending actions by position; `None` once answered.
    let mut pending: Vec<Option<&ActionEvent>> = Vec::new();
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    let mut by_call: HashMap<&str, Vec<usize>> = HashMap::new();
    for event in events {
        let (action_id, call_id, authoritative) = match event {
            Event::Action(a) => {
                if a.action.is_some() {
                    by_id.insert(&a.base.id, pending.len());
                    by_call
                        .entry(&a.tool_call_id)
                        .or_default()
                        .push(pending.len());
                    pending.push(Some(a));
                }
                continue;
            }
            Event::Observation(o) => (Some(o.action_id.as_str()), o.tool_call_id.as_str(), true),
            Event::UserReject(r) => (Some(r.action_id.as_str()), r.tool_call_id.as_str(), true),
            // `parent_id` is usually the action answered, but only trust it if the call agrees.
            Event::AgentError(e) => (e.base.parent_id.as_deref(), e.tool_call_id.as_str(), false),
            _ => continue,
        };
        let slot = action_id
            .and_then(|id| by_id.get(id).copied())
            .filter(|&i| pending[i].is_some_and(|a| authoritative || a.tool_call_id == call_id))
            .or_else(|| {
                by_call
                    .get(call_id)?
                    .iter()
                    .copied()
                    .find(|&i| pending[i].is_some())
            });
        if let Some(i) = slot {
            pending[i] = None;
        }
    }
    pending.into_iter().flatten().collect()
}
