//! Branches of a conversation: navigating moves the head to an earlier event, and what the
//! agent sees from then on is the path from the root to the head, not the whole log.
//!
//! A navigation is recorded as a state update of `leaf_event_id` (the head; `null` for the
//! empty tree), the same key upstream's state carries, so a client that applies state updates
//! follows it. Every other event is appended below the head of its time: replaying the log
//! gives each event its parent and the head, and the active branch is the walk from the head
//! up. A log with no navigation is one branch, the whole log.

use std::borrow::Cow;
use std::collections::HashMap;

use tandem_protocol::Event;

/// The state key a navigation records.
pub const LEAF_KEY: &str = "leaf_event_id";

fn is_navigation(e: &Event) -> bool {
    matches!(e, Event::StateUpdate(u) if u.key == LEAF_KEY)
}

/// Indices of the active branch's events (state updates left out) and the head's index.
fn replay(events: &[Event]) -> (Vec<usize>, Option<usize>) {
    let mut position: HashMap<&str, usize> = HashMap::new();
    let mut parent: Vec<Option<usize>> = vec![None; events.len()];
    let mut head: Option<usize> = None;
    for (i, e) in events.iter().enumerate() {
        match e {
            Event::StateUpdate(u) if u.key == LEAF_KEY => {
                head = u.value.as_str().and_then(|id| position.get(id).copied());
            }
            Event::StateUpdate(_) => {}
            _ => {
                parent[i] = head;
                position.insert(e.id(), i);
                head = Some(i);
            }
        }
    }
    let mut branch = Vec::new();
    let mut at = head;
    while let Some(i) = at {
        branch.push(i);
        at = parent[i];
    }
    branch.reverse();
    (branch, head)
}

/// The events of the active branch, oldest first (the whole log, borrowed, when the
/// conversation never navigated; state updates are then kept too).
pub fn active_branch(events: &[Event]) -> Cow<'_, [Event]> {
    if !events.iter().any(is_navigation) {
        return Cow::Borrowed(events);
    }
    let (branch, _) = replay(events);
    Cow::Owned(branch.into_iter().map(|i| events[i].clone()).collect())
}

/// The head: the id of the active branch's newest event.
pub fn head(events: &[Event]) -> Option<String> {
    let (_, head) = replay(events);
    head.map(|i| events[i].id().to_owned())
}

/// The events of the branch that ends at `event_id` (that event included), oldest first;
/// `None` when the log has no such event or it is a state update.
pub fn branch_to<'a>(events: &'a [Event], event_id: &str) -> Option<Vec<&'a Event>> {
    let target = events
        .iter()
        .position(|e| e.id() == event_id && !matches!(e, Event::StateUpdate(_)))?;
    // The branch as it stood when the event was appended, then the event.
    let (branch, _) = replay(&events[..=target]);
    Some(branch.into_iter().map(|i| &events[i]).collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tandem_protocol::{Event, EventBase, Extra, Message, MessageEvent, Source};

    use super::*;

    fn message(text: &str) -> Event {
        Event::Message(MessageEvent {
            base: EventBase::new(Source::User, None),
            llm_message: Message::user(text),
            llm_response_id: None,
            activated_skills: Vec::new(),
            extended_content: Vec::new(),
            sender: None,
            critic_result: None,
            extra: Extra::new(),
        })
    }

    fn navigate(to: Option<&str>) -> Event {
        Event::state_update(LEAF_KEY, to.map_or(json!(null), |t| json!(t)), None)
    }

    fn texts(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Message(m) => Some(m.llm_message.text()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_log_without_navigation_is_one_branch() {
        let log = vec![message("a"), message("b")];
        assert!(matches!(active_branch(&log), Cow::Borrowed(_)));
        assert_eq!(head(&log).as_deref(), Some(log[1].id()));
    }

    #[test]
    fn navigating_back_leaves_the_later_events_off_the_branch() {
        let mut log = vec![message("a"), message("b"), message("c")];
        let a = log[0].id().to_owned();
        log.push(navigate(Some(&a)));
        log.push(message("d"));
        assert_eq!(texts(&active_branch(&log)), ["a", "d"]);
        assert_eq!(head(&log).as_deref(), Some(log[4].id()));
        // Back to the first branch's tip: a, b, c again.
        let c = log[2].id().to_owned();
        log.push(navigate(Some(&c)));
        assert_eq!(texts(&active_branch(&log)), ["a", "b", "c"]);
        let d = log[4].id().to_owned();
        let to_d = branch_to(&log, &d).unwrap();
        assert_eq!(to_d.len(), 2);
        // The empty tree.
        log.push(navigate(None));
        log.push(message("e"));
        assert_eq!(texts(&active_branch(&log)), ["e"]);
        assert!(branch_to(&log, "no-such-event").is_none());
    }
}
