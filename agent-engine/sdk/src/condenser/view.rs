//! The history as the condenser sees it: the events the LLM is shown, after earlier
//! [`Condensation`]s, with the current summary in its place, and where the history can be cut
//! without separating a tool call from its result.

use std::collections::{HashMap, HashSet};

use tandem_protocol::{Condensation, Event};

/// One element of the view: an event, or the summary an earlier condensation left.
#[derive(Debug, Clone, Copy)]
pub enum ViewItem<'a> {
    /// An event the LLM sees.
    Event(&'a Event),
    /// The summary of the newest condensation that wrote one (upstream gives it the id
    /// `<condensation id>-summary`).
    Summary {
        /// The condensation that wrote it.
        condensation: &'a Condensation,
        /// Its text.
        text: &'a str,
    },
}

impl ViewItem<'_> {
    /// The item's id (the summary's is `<condensation id>-summary`, as upstream names it).
    pub fn id(&self) -> String {
        match self {
            Self::Event(e) => e.id().to_owned(),
            Self::Summary { condensation, .. } => format!("{}-summary", condensation.base.id),
        }
    }
}

/// Whether the LLM is shown events of this kind (the kinds `llm_view` turns into messages).
pub fn is_llm_visible(event: &Event) -> bool {
    matches!(
        event,
        Event::SystemPrompt(_)
            | Event::Message(_)
            | Event::Action(_)
            | Event::Observation(_)
            | Event::AgentError(_)
            | Event::UserReject(_)
    )
}

/// Every id any condensation forgot (events, and summaries by their `-summary` id).
fn forgotten_ids(events: &[Event]) -> HashSet<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Condensation(c) => Some(c.forgotten_event_ids.iter().map(String::as_str)),
            _ => None,
        })
        .flatten()
        .collect()
}

/// The visible events no condensation forgot, in order.
fn kept<'a>(events: &'a [Event], forgotten: &HashSet<&str>) -> impl Iterator<Item = &'a Event> {
    events
        .iter()
        .filter(|e| is_llm_visible(e) && !forgotten.contains(e.id()))
}

/// What the model sees, the one definition `llm_view` and the condenser share: the visible
/// events, with the summary of the newest condensation that wrote one inserted at its offset.
///
/// As upstream's `View.from_events`, a later condensation without a summary leaves that summary
/// in place (it still stands for the events forgotten before), unless it forgot the summary's
/// `-summary` id, as a condensation that summarises the summary again does.
pub fn view_items(events: &[Event]) -> Vec<ViewItem<'_>> {
    let forgotten = forgotten_ids(events);
    let mut items: Vec<ViewItem<'_>> = kept(events, &forgotten).map(ViewItem::Event).collect();
    let newest = events.iter().rev().find_map(|e| match e {
        Event::Condensation(c) => c.summary.as_deref().map(|text| (c, text)),
        _ => None,
    });
    if let Some((condensation, text)) = newest {
        let summary = ViewItem::Summary { condensation, text };
        if !forgotten.contains(summary.id().as_str()) {
            let offset = condensation
                .summary_offset
                .and_then(|o| usize::try_from(o).ok())
                .unwrap_or(0)
                .min(items.len());
            items.insert(offset, summary);
        }
    }
    items
}

/// Whether a `CondensationRequest` came after the latest condensation.
pub fn has_unhandled_request(events: &[Event]) -> bool {
    for event in events.iter().rev() {
        match event {
            Event::Condensation(_) => return false,
            Event::CondensationRequest(_) => return true,
            _ => {}
        }
    }
    false
}

/// For each position `i` in `0..=items.len()`, whether cutting the view before item `i` keeps
/// every tool call and its result on the same side.
pub fn valid_cuts(items: &[ViewItem<'_>]) -> Vec<bool> {
    let mut calls: HashMap<&str, usize> = HashMap::new();
    // +1 where a call/result span opens, -1 where it closes.
    let mut delta = vec![0i64; items.len() + 1];
    for (i, item) in items.iter().enumerate() {
        let ViewItem::Event(event) = item else {
            continue;
        };
        match event {
            Event::Action(a) => {
                calls.insert(a.tool_call_id.as_str(), i);
            }
            Event::Observation(o) => close_span(&calls, &o.tool_call_id, i, &mut delta),
            Event::AgentError(e) => close_span(&calls, &e.tool_call_id, i, &mut delta),
            Event::UserReject(r) => close_span(&calls, &r.tool_call_id, i, &mut delta),
            _ => {}
        }
    }
    let mut open = 0i64;
    delta
        .iter()
        .map(|d| {
            open += d;
            open == 0
        })
        .collect()
}

/// Marks cuts after the call at `calls[id]` up to and including `result` as invalid.
fn close_span(calls: &HashMap<&str, usize>, id: &str, result: usize, delta: &mut [i64]) {
    if let Some(&call) = calls.get(id)
        && call < result
    {
        delta[call + 1] += 1;
        delta[result + 1] -= 1;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::{Value, json};
    use tandem_protocol::{Event, Role};

    use super::{ViewItem, view_items};
    use crate::agent::llm_view;

    fn event(value: Value) -> Event {
        serde_json::from_value(value).unwrap()
    }

    fn user(id: &str) -> Event {
        event(
            json!({"kind": "MessageEvent", "id": id, "timestamp": "2026-01-01T00:00:00.000000",
            "source": "user", "llm_message": {"role": "user", "content": [{"type": "text", "text": id}]}}),
        )
    }

    fn condensation(id: &str, forgotten: &[&str], summary: Option<&str>) -> Event {
        event(
            json!({"kind": "Condensation", "id": id, "timestamp": "2026-01-01T00:00:00.000000",
            "source": "environment", "forgotten_event_ids": forgotten, "summary": summary,
            "summary_offset": summary.map(|_| 1), "llm_response_id": format!("r-{id}")}),
        )
    }

    /// Where the summary sits in the condenser's view and in the LLM's messages, and how long
    /// each is: one message per item here, so they must agree item for item.
    fn both_views(events: &[Event]) -> (Vec<Option<String>>, Vec<Option<String>>) {
        let items = view_items(events)
            .iter()
            .map(|i| match i {
                ViewItem::Summary { text, .. } => Some((*text).to_owned()),
                ViewItem::Event(_) => None,
            })
            .collect();
        let messages = llm_view(events)
            .iter()
            .map(|m| {
                let text = m.text();
                (m.role == Role::User && text.contains("<SUMMARY OF EARLIER WORK>")).then_some(text)
            })
            .collect();
        (items, messages)
    }

    #[test]
    fn a_newer_condensation_without_a_summary_keeps_the_earlier_summary_for_both() {
        let events = vec![
            user("u0"),
            user("u1"),
            user("u2"),
            condensation("c1", &["u1"], Some("first summary")),
            user("u3"),
            condensation("c2", &["u2"], None),
            user("u4"),
        ];
        let (items, messages) = both_views(&events);
        assert_eq!(items.len(), 4, "u0, the summary, u3, u4");
        assert_eq!(items[1].as_deref(), Some("first summary"));
        assert_eq!(messages.len(), items.len());
        assert!(messages[1].as_deref().unwrap().contains("first summary"));
        assert!(
            items
                .iter()
                .zip(&messages)
                .all(|(i, m)| i.is_some() == m.is_some())
        );
    }

    #[test]
    fn a_summary_a_later_condensation_forgot_is_gone_for_both() {
        let events = vec![
            user("u0"),
            user("u1"),
            condensation("c1", &["u1"], Some("first summary")),
            user("u2"),
            condensation("c2", &["c1-summary"], None),
        ];
        let (items, messages) = both_views(&events);
        assert_eq!(items, vec![None, None]);
        assert_eq!(messages, vec![None, None]);
    }
}
