//! Rebuilding state from the event log: `base_state.json` is a snapshot, the log's state
//! updates after it are the truth.

use tandem_protocol::{ConversationState, ConversationStats, Event, ExecutionStatus};

/// Applies one persisted state update to `state`. Unknown keys are left alone.
pub(super) fn apply_update(state: &mut ConversationState, key: &str, value: &serde_json::Value) {
    match key {
        "execution_status" => {
            if let Ok(s) = serde_json::from_value::<ExecutionStatus>(value.clone()) {
                state.execution_status = s;
            }
        }
        "confirmation_policy" => {
            if let Ok(p) = serde_json::from_value(value.clone()) {
                state.confirmation_policy = p;
            }
        }
        "stats" => {
            if let Ok(s) = serde_json::from_value::<ConversationStats>(value.clone()) {
                merge_stats(&mut state.stats, s);
            }
        }
        crate::conversation::branch::LEAF_KEY => {
            state.leaf_event_id = value.as_str().map(str::to_owned);
        }
        "last_user_message_id" => {
            state.last_user_message_id = value.as_str().map(str::to_owned);
        }
        super::actor::QUEUE_KEY
        | tandem_protocol::Budget::KEY
        | tandem_protocol::Budget::REACHED_KEY => {
            if value.is_null() {
                state.extra.remove(key);
            } else {
                state.extra.insert(key.to_owned(), value.clone());
            }
        }
        _ => {}
    }
}

/// Takes the totals from an update but keeps the per-call history the snapshot has.
fn merge_stats(into: &mut ConversationStats, update: ConversationStats) {
    for (usage_id, m) in update.usage_to_metrics {
        match into.usage_to_metrics.get_mut(&usage_id) {
            Some(existing) => {
                let mut history = std::mem::take(&mut existing.response_latencies);
                for l in &m.response_latencies {
                    if !history.iter().any(|h| h.response_id == l.response_id) {
                        history.push(l.clone());
                    }
                }
                *existing = m;
                existing.response_latencies = history;
            }
            None => {
                into.usage_to_metrics.insert(usage_id, m);
            }
        }
    }
}

/// Replays every state update of the log over the snapshot and sets the leaf.
pub(super) fn rebuild(state: &mut ConversationState, events: &[Event]) {
    for e in events {
        if let Event::StateUpdate(u) = e {
            apply_update(state, &u.key, &u.value);
        }
    }
    state.leaf_event_id = leaf_of(events);
}

/// The head: the last event that is not a state update, or where a navigation moved it.
pub(super) fn leaf_of(events: &[Event]) -> Option<String> {
    crate::conversation::branch::head(events)
}

/// A short title from the first user message.
pub(super) fn title_from(text: &str) -> String {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut title: String = line.chars().take(60).collect();
    if line.chars().count() > 60 {
        title.push('…');
    }
    title
}
