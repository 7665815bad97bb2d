//! The summarising condenser: upstream's own traces reproduced id for id, summaries through the
//! scripted server, tool calls never separated from their results, explicit requests, and
//! repeated condensation carrying the previous summary forward.

use std::collections::{BTreeSet, HashSet};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tandem_llm::{Llm, OpenAiChat};
use tandem_protocol::{Event, LlmConfig, Role};
use tandem_sdk::condenser::{LlmSummarizingCondenser, view_items};
use tandem_sdk::llm_view;
use tandem_testkit::{Script, ScriptedLlmServer};
use tokio_util::sync::CancellationToken;

const TRACE: &str =
    "../../tests/fixtures/upstream/conversations/9054567dddaf4a868cf6e9002d036bea/events";

fn upstream_trace() -> Vec<Event> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(TRACE);
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect()
}

fn summariser(server: &ScriptedLlmServer) -> Arc<dyn Llm> {
    let mut config = LlmConfig::new("openai/summariser");
    config.base_url = Some(server.base_url());
    config.num_retries = 0;
    config.usage_id = "condenser".into();
    Arc::new(OpenAiChat::new(config).unwrap())
}

fn condenser(
    server: &ScriptedLlmServer,
    max_size: usize,
    keep_first: usize,
) -> LlmSummarizingCondenser {
    LlmSummarizingCondenser {
        llm: summariser(server),
        max_size,
        keep_first,
    }
}

fn event(value: Value) -> Event {
    serde_json::from_value(value).unwrap()
}

fn system() -> Event {
    event(
        json!({"kind": "SystemPromptEvent", "id": "sys", "timestamp": "2026-01-01T00:00:00.000000",
        "source": "agent", "system_prompt": {"type": "text", "text": "You are an agent."}, "tools": []}),
    )
}

fn user(id: &str, text: &str) -> Event {
    event(
        json!({"kind": "MessageEvent", "id": id, "timestamp": "2026-01-01T00:00:00.000000",
        "source": "user", "llm_message": {"role": "user", "content": [{"type": "text", "text": text}]}}),
    )
}

fn action(id: &str, response: &str) -> Event {
    let call = format!("call_{id}");
    event(
        json!({"kind": "ActionEvent", "id": id, "timestamp": "2026-01-01T00:00:00.000000",
        "source": "agent", "thought": [], "action": {"kind": "TerminalAction", "command": format!("echo {id}")},
        "tool_name": "terminal", "tool_call_id": call,
        "tool_call": {"id": call, "name": "terminal", "arguments": format!("{{\"command\":\"echo {id}\"}}"), "origin": "completion"},
        "llm_response_id": response, "security_risk": "LOW"}),
    )
}

fn observation(id: &str, action_id: &str) -> Event {
    event(
        json!({"kind": "ObservationEvent", "id": id, "timestamp": "2026-01-01T00:00:00.000000",
        "source": "environment", "tool_name": "terminal", "tool_call_id": format!("call_{action_id}"),
        "observation": {"kind": "TerminalObservation", "content": [{"type": "text", "text": format!("output of {action_id}")}],
            "command": format!("echo {action_id}"), "exit_code": 0, "is_error": false, "timeout": false},
        "action_id": action_id}),
    )
}

fn state_update(id: &str) -> Event {
    event(
        json!({"kind": "ConversationStateUpdateEvent", "id": id, "timestamp": "2026-01-01T00:00:00.000000",
        "source": "environment", "key": "execution_status", "value": "running"}),
    )
}

/// sys, user, then `pairs` steps; step `i` is one action + observation, except that every
/// third step is a batch of two actions from one response answered after both.
fn history(pairs: usize) -> Vec<Event> {
    let mut events = vec![system(), user("u0", "run the echoes")];
    for i in 0..pairs {
        if i % 3 == 2 {
            events.push(action(&format!("a{i}x"), &format!("r{i}")));
            events.push(action(&format!("a{i}y"), &format!("r{i}")));
            events.push(observation(&format!("o{i}x"), &format!("a{i}x")));
            events.push(observation(&format!("o{i}y"), &format!("a{i}y")));
        } else {
            events.push(action(&format!("a{i}"), &format!("r{i}")));
            events.push(observation(&format!("o{i}"), &format!("a{i}")));
        }
        events.push(state_update(&format!("s{i}")));
    }
    events
}

/// Every tool message answers a call of the assistant message before it, and every call is
/// answered.
fn assert_valid_view(events: &[Event]) {
    let messages = llm_view(events);
    let mut open: HashSet<String> = HashSet::new();
    for message in &messages {
        match message.role {
            Role::Tool => {
                let id = message.tool_call_id.clone().unwrap();
                assert!(open.remove(&id), "result {id} answers no open call");
            }
            _ => {
                assert!(
                    open.is_empty(),
                    "calls {open:?} unanswered before the next turn"
                );
                for call in message.tool_calls.iter().flatten() {
                    open.insert(call.id.clone());
                }
            }
        }
    }
    assert!(open.is_empty(), "calls {open:?} unanswered");
}

#[tokio::test]
async fn reproduces_upstreams_condensations_id_for_id() {
    let trace = upstream_trace();
    let server = ScriptedLlmServer::start(Script::new(Vec::new()).with_no_tools_text("summary"));
    let condenser = condenser(&server, 80, 4);
    let spec = json!({"kind": "LLMSummarizingCondenser", "max_size": 80, "keep_first": 4});
    let from_spec = LlmSummarizingCondenser::new(summariser(&server)).with_spec(&spec);
    assert_eq!((from_spec.max_size, from_spec.keep_first), (80, 4));
    let mut checked = 0;
    for (i, e) in trace.iter().enumerate() {
        let Event::Condensation(upstream) = e else {
            continue;
        };
        let before = &trace[..i];
        assert!(
            condenser.should_condense(before),
            "upstream condensed at event {i}"
        );
        assert!(
            !condenser.should_condense(&trace[..i - 3]),
            "not yet before event {i}"
        );
        let plan = condenser.plan(before).unwrap();
        let ours: BTreeSet<&str> = plan
            .forgotten_event_ids
            .iter()
            .map(String::as_str)
            .collect();
        let theirs: BTreeSet<&str> = upstream
            .forgotten_event_ids
            .iter()
            .map(String::as_str)
            .collect();
        assert_eq!(ours, theirs, "forgotten ids at event {i}");
        assert_eq!(Some(plan.summary_offset as i64), upstream.summary_offset);

        let ours = condenser
            .condense(before, CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(ours.summary.as_deref(), Some("summary"));
        let mut applied = before.to_vec();
        applied.push(Event::Condensation(ours));
        assert_valid_view(&applied);
        checked += 1;
    }
    assert_eq!(checked, 3);
}

#[tokio::test]
async fn condenses_without_separating_calls_from_results() {
    let server = ScriptedLlmServer::start(
        Script::new(Vec::new()).with_no_tools_text("They ran echoes a0 to a7."),
    );
    let condenser = condenser(&server, 20, 4);
    // 8 steps: 2 + 8*2 + 2 extra (two batches) = 22 visible events, over 20.
    let events = history(8);
    assert_eq!(view_items(&events).len(), 22);
    assert!(condenser.should_condense(&events));
    assert!(!condenser.should_condense(&history(7)));

    let condensation = condenser
        .condense(&events, CancellationToken::new())
        .await
        .unwrap();
    // Head: sys, u0, a0, o0 (4). Target 10 → tail of 5 → cut before index 17, moved
    // forward to the next whole step: the view is sys u0 a0 o0 | a1 o1 a2x a2y o2x o2y a3 o3
    // a4 o4 a5x a5y o5x | o5y a6 o6 a7 o7 — cutting before o5y would split the batch, so a5x..o5y
    // are forgotten too.
    assert_eq!(
        condensation.forgotten_event_ids,
        [
            "a1", "o1", "a2x", "a2y", "o2x", "o2y", "a3", "o3", "a4", "o4", "a5x", "a5y", "o5x",
            "o5y"
        ]
    );
    assert_eq!(
        condensation.summary.as_deref(),
        Some("They ran echoes a0 to a7.")
    );
    assert_eq!(condensation.summary_offset, Some(4));
    assert!(
        condensation.llm_response_id.starts_with("chatcmpl"),
        "{}",
        condensation.llm_response_id
    );

    let request = server.last_request().unwrap();
    assert!(request.get("tools").is_none());
    let prompt = request["messages"][0]["content"].to_string();
    assert!(prompt.contains("<PREVIOUS SUMMARY>\\n(none)"), "{prompt}");
    assert!(
        prompt.contains("[agent called terminal]") && prompt.contains("output of a5y"),
        "{prompt}"
    );
    assert!(
        !prompt.contains("output of a6"),
        "kept events are not summarised"
    );

    let mut applied = events.clone();
    applied.push(Event::Condensation(condensation));
    assert_valid_view(&applied);
    let messages = llm_view(&applied);
    assert_eq!(messages[0].role, Role::System);
    assert!(
        messages[4].text().contains("They ran echoes a0 to a7."),
        "{:?}",
        messages[4]
    );
    assert_eq!(view_items(&applied).len(), 9);
    assert!(!condenser.should_condense(&applied));
    assert!(server.violations().is_empty());
}

#[tokio::test]
async fn a_second_condensation_carries_the_first_summary_forward() {
    let server =
        ScriptedLlmServer::start(Script::new(Vec::new()).with_no_tools_text("first summary"));
    let condenser = condenser(&server, 20, 4);
    let mut events = history(8);
    let first = condenser
        .condense(&events, CancellationToken::new())
        .await
        .unwrap();
    let first_id = first.base.id.clone();
    events.push(Event::Condensation(first));
    for i in 20..27 {
        events.push(action(&format!("a{i}"), &format!("r{i}")));
        events.push(observation(&format!("o{i}"), &format!("a{i}")));
    }
    assert!(condenser.should_condense(&events));
    server.set_no_tools_text("second summary");
    let second = condenser
        .condense(&events, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(second.forgotten_event_ids[0], format!("{first_id}-summary"));
    assert!(second.forgotten_event_ids.contains(&"a6".to_owned()));
    let prompt = server.last_request().unwrap()["messages"][0]["content"].to_string();
    assert!(
        prompt.contains("<PREVIOUS SUMMARY>\\nfirst summary"),
        "{prompt}"
    );
    events.push(Event::Condensation(second));
    assert_valid_view(&events);
    let texts: Vec<String> = llm_view(&events).iter().map(|m| m.text()).collect();
    assert!(texts[4].contains("second summary"));
    assert!(!texts.iter().any(|t| t.contains("first summary")));
}

#[tokio::test]
async fn explicit_requests_halve_a_short_history() {
    let server = ScriptedLlmServer::start(Script::new(Vec::new()).with_no_tools_text("short"));
    let condenser = condenser(&server, 80, 2);
    let mut events = history(4);
    assert!(!condenser.should_condense(&events));
    events.push(event(json!({"kind": "CondensationRequest", "id": "req", "timestamp": "2026-01-01T00:00:00.000000", "source": "user"})));
    assert!(condenser.should_condense(&events));
    // 2 + 4 steps (one batch) = 12 visible; target 6 → head 2, tail 3, extended past the batch.
    let condensation = condenser
        .condense(&events, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        condensation.forgotten_event_ids,
        ["a0", "o0", "a1", "o1", "a2x", "a2y", "o2x", "o2y"]
    );
    events.push(Event::Condensation(condensation));
    assert!(
        !condenser.should_condense(&events),
        "the request is handled"
    );
    assert_valid_view(&events);

    // Nothing to forget: a clear error, no LLM call.
    let tiny = vec![system(), user("u0", "hi")];
    let before = server.request_count();
    assert!(
        condenser
            .condense(&tiny, CancellationToken::new())
            .await
            .is_err()
    );
    assert_eq!(server.request_count(), before);
}

#[tokio::test]
async fn a_failed_summary_call_is_an_llm_error() {
    let server = ScriptedLlmServer::start(vec![tandem_testkit::Step::error(401, "bad key")]);
    let condenser = condenser(&server, 20, 4);
    let err = condenser
        .condense(&history(8), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, tandem_sdk::SdkError::Llm(_)), "{err:?}");
}
