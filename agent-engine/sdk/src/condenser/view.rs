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
    /// The summary of the latest condensation (upstream gives it the id `<condensation id>-summary`).
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

/// Whether the LLM is shown events of this kind (the same kinds `llm_view` turns into
/// messages).
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

/// The events the LLM sees, in order: visible kinds, minus everything a condensation forgot.
pub fn view_events(events: &[Event]) -> Vec<&Event> {
    let forgotten: HashSet<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Condensation(c) => Some(c.forgotten_event_ids.iter().map(String::as_str)),
            _ => None,
        })
        .flatten()
        .collect();
    events
        .iter()
        .filter(|e| is_llm_visible(e) && !forgotten.contains(e.id()))
        .collect()
}

/// The view with the latest summary inserted at its offset, as `llm_view` places it.
pub fn view_items(events: &[Event]) -> Vec<ViewItem<'_>> {
    let mut items: Vec<ViewItem<'_>> = view_events(events)
        .into_iter()
        .map(ViewItem::Event)
        .collect();
    let latest = events.iter().rev().find_map(|e| match e {
        Event::Condensation(c) => Some(c),
        _ => None,
    });
    if let Some(condensation) = latest
        && let Some(text) = condensation.summary.as_deref()
    {
        let offset = condensation
            .summary_offset
            .and_then(|o| usize::try_from(o).ok())
            .unwrap_or(0)
            .min(items.len());
        items.insert(offset, ViewItem::Summary { condensation, text });
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
