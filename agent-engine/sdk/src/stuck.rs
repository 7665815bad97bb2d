//! Stuck detection: stops a run that repeats itself instead of making progress.
//!
//! Looks only at the events since the last user message, comparing actions by tool and
//! arguments and results by their text (ids and timestamps differ every time). Patterns:
//! the same action with the same result four times; the same action failing with the same
//! error three times; the agent talking to itself (three agent messages with no action or
//! user message between); and two action/result pairs alternating three times each.

use tandem_protocol::{Event, Source};

/// What a stuck loop looks like, as a reason for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StuckReason(pub String);

/// Detects stuck runs. Stateless: it reads the event history each time.
#[derive(Debug, Clone, Copy, Default)]
pub struct StuckDetector;

#[derive(PartialEq, Clone)]
enum Step {
    /// Tool name + raw arguments.
    Action(String, String),
    /// Result text.
    Result(String),
    /// Error text.
    Error(String),
    AgentMessage,
}

impl StuckDetector {
    /// Whether the history since the last user message shows a stuck loop.
    pub fn check(&self, events: &[Event]) -> Option<StuckReason> {
        let start = events
            .iter()
            .rposition(|e| matches!(e, Event::Message(m) if m.base.source == Source::User))
            .map_or(0, |i| i + 1);
        let steps: Vec<Step> = events[start..].iter().filter_map(to_step).collect();
        repeated_pairs(&steps)
            .or_else(|| repeated_errors(&steps))
            .or_else(|| monologue(&steps))
            .or_else(|| alternating(&steps))
    }
}

fn to_step(event: &Event) -> Option<Step> {
    match event {
        Event::Action(a) => Some(Step::Action(
            a.tool_name.clone(),
            normalise_args(&a.tool_call.arguments),
        )),
        Event::Observation(o) => {
            let text: Vec<String> = o
                .observation
                .content()
                .iter()
                .filter_map(|c| c.as_text().map(str::to_owned))
                .collect();
            Some(Step::Result(text.join("\n")))
        }
        Event::AgentError(e) => Some(Step::Error(e.error.clone())),
        Event::UserReject(_) => Some(Step::Result("rejected".to_owned())),
        Event::Message(m) if m.base.source == Source::Agent => Some(Step::AgentMessage),
        _ => None,
    }
}

/// Arguments compared without `summary` (free text that varies) and key order.
fn normalise_args(raw: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(serde_json::Value::Object(mut o)) => {
            o.remove("summary");
            serde_json::Value::Object(o).to_string()
        }
        _ => raw.to_owned(),
    }
}

/// (action, result) pairs at the tail, newest last.
fn tail_pairs(steps: &[Step]) -> Vec<(&Step, &Step)> {
    let mut pairs = Vec::new();
    let mut i = steps.len();
    while i >= 2 {
        match (&steps[i - 2], &steps[i - 1]) {
            (a @ Step::Action(..), r @ (Step::Result(_) | Step::Error(_))) => {
                pairs.push((a, r));
                i -= 2;
            }
            _ => break,
        }
    }
    pairs.reverse();
    pairs
}

/// The tool name when the last `n` (action, result) pairs are identical and end in a result
/// (`errors` false) or an error (`errors` true).
fn same_tail(steps: &[Step], n: usize, errors: bool) -> Option<String> {
    let pairs = tail_pairs(steps);
    if pairs.len() < n || !pairs[pairs.len() - n..].windows(2).all(|w| w[0] == w[1]) {
        return None;
    }
    match pairs[pairs.len() - 1] {
        (Step::Action(tool, _), Step::Result(_)) if !errors => Some(tool.clone()),
        (Step::Action(tool, _), Step::Error(_)) if errors => Some(tool.clone()),
        _ => None,
    }
}

fn repeated_pairs(steps: &[Step]) -> Option<StuckReason> {
    same_tail(steps, 4, false).map(|tool| {
        StuckReason(format!(
            "the agent ran the same {tool} action with the same result 4 times in a row"
        ))
    })
}

fn repeated_errors(steps: &[Step]) -> Option<StuckReason> {
    same_tail(steps, 3, true).map(|tool| {
        StuckReason(format!(
            "the agent's {tool} call failed with the same error 3 times in a row"
        ))
    })
}

fn monologue(steps: &[Step]) -> Option<StuckReason> {
    let n = 3;
    let tail = steps
        .iter()
        .rev()
        .take_while(|s| **s == Step::AgentMessage)
        .count();
    (tail >= n).then(|| {
        StuckReason(format!(
            "the agent sent {n} messages in a row without acting"
        ))
    })
}

fn alternating(steps: &[Step]) -> Option<StuckReason> {
    let pairs = tail_pairs(steps);
    let n = 6;
    if pairs.len() < n {
        return None;
    }
    let last = &pairs[pairs.len() - n..];
    let (a, b) = (&last[0], &last[1]);
    if a == b {
        return None;
    }
    let alternates = last
        .iter()
        .enumerate()
        .all(|(i, p)| if i % 2 == 0 { p == a } else { p == b });
    alternates
        .then(|| StuckReason("the agent keeps alternating between the same two actions".to_owned()))
}

#[cfg(test)]
mod tests {
    use tandem_protocol::*;

    use super::*;

    fn action(cmd: &str) -> Event {
        let args = serde_json::json!({"command": cmd}).to_string();
        Event::Action(ActionEvent {
            base: EventBase::new(Source::Agent, None),
            thought: vec![],
            reasoning_content: None,
            thinking_blocks: vec![],
            responses_reasoning_item: None,
            action: Some(Action::Terminal(TerminalAction {
                command: cmd.into(),
                ..Default::default()
            })),
            tool_name: "terminal".into(),
            tool_call_id: new_event_id(),
            tool_call: MessageToolCall {
                id: "c".into(),
                responses_item_id: None,
                name: "terminal".into(),
                arguments: args,
                origin: "completion".into(),
            },
            llm_response_id: new_event_id(),
            security_risk: SecurityRisk::Unknown,
            critic_result: None,
            summary: None,
            extra: Extra::new(),
        })
    }

    fn obs(text: &str) -> Event {
        Event::Observation(ObservationEvent {
            base: EventBase::new(Source::Environment, None),
            tool_name: "terminal".into(),
            tool_call_id: "c".into(),
            observation: Observation::Terminal(TerminalObservation {
                content: vec![Content::text(text)],
                ..Default::default()
            }),
            action_id: "a".into(),
            extended_content: vec![],
            extra: Extra::new(),
        })
    }

    fn err(text: &str) -> Event {
        Event::AgentError(AgentErrorEvent {
            base: EventBase::new(Source::Agent, None),
            tool_name: "terminal".into(),
            tool_call_id: "c".into(),
            error: text.into(),
            classification: None,
            extra: Extra::new(),
        })
    }

    fn user() -> Event {
        Event::Message(MessageEvent {
            base: EventBase::new(Source::User, None),
            llm_message: Message::user("go"),
            llm_response_id: None,
            activated_skills: vec![],
            extended_content: vec![],
            sender: None,
            critic_result: None,
            extra: Extra::new(),
        })
    }

    fn agent_msg() -> Event {
        let Event::Message(mut m) = user() else {
            unreachable!()
        };
        m.base.source = Source::Agent;
        m.llm_message = Message::assistant("hm");
        Event::Message(m)
    }

    #[test]
    fn same_action_and_result_four_times_is_stuck() {
        let mut ev = vec![user()];
        for _ in 0..3 {
            ev.extend([action("ls"), obs("a")]);
        }
        assert_eq!(StuckDetector.check(&ev), None);
        ev.extend([action("ls"), obs("a")]);
        assert!(StuckDetector.check(&ev).is_some());
    }

    #[test]
    fn progress_is_not_stuck() {
        let mut ev = vec![user()];
        for i in 0..10 {
            ev.extend([action(&format!("echo {i}")), obs(&i.to_string())]);
        }
        assert_eq!(StuckDetector.check(&ev), None);
    }

    #[test]
    fn a_user_message_resets_the_window() {
        let mut ev = vec![user()];
        for _ in 0..3 {
            ev.extend([action("ls"), obs("a")]);
        }
        ev.push(user());
        ev.extend([action("ls"), obs("a")]);
        assert_eq!(StuckDetector.check(&ev), None);
    }

    #[test]
    fn repeated_errors_monologue_and_alternation() {
        let mut ev = vec![user()];
        for _ in 0..3 {
            ev.extend([action("x"), err("bad")]);
        }
        assert!(StuckDetector.check(&ev).unwrap().0.contains("same error"));

        let ev = vec![user(), agent_msg(), agent_msg(), agent_msg()];
        assert!(StuckDetector.check(&ev).unwrap().0.contains("messages"));

        let mut ev = vec![user()];
        for _ in 0..3 {
            ev.extend([action("a"), obs("1"), action("b"), obs("2")]);
        }
        assert!(StuckDetector.check(&ev).unwrap().0.contains("alternating"));
    }
}
