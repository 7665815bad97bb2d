//! Golden fixtures written by the upstream OpenHands agent server must read into our wire types
//! and write back to the same JSON: every persisted event of the three upstream conversations,
//! every event frame of the recorded WebSocket session, and each `base_state.json`.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tandem_protocol::{ConversationState, Event};

/// The kinds `Event` models; anything else may load as `Event::Unknown`.
const MODELED_KINDS: &[&str] = &[
    "SystemPromptEvent",
    "MessageEvent",
    "ActionEvent",
    "ObservationEvent",
    "AgentErrorEvent",
    "UserRejectObservation",
    "PauseEvent",
    "InterruptEvent",
    "ConversationErrorEvent",
    "CondensationRequest",
    "Condensation",
    "ConversationStateUpdateEvent",
    "StreamingDeltaEvent",
    "ServerErrorEvent",
];

fn upstream() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/upstream")
}

fn conversation_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(upstream().join("conversations"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Every place where two JSON values differ, as JSON-pointer-like paths (empty when equal).
fn differences(path: &str, a: &Value, b: &Value) -> Vec<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut out = Vec::new();
            for (k, va) in x {
                match y.get(k) {
                    Some(vb) => out.extend(differences(&format!("{path}/{k}"), va, vb)),
                    None => out.push(format!("{path}/{k}: dropped (was {})", short(va))),
                }
            }
            out.extend(
                y.iter()
                    .filter(|(k, _)| !x.contains_key(*k))
                    .map(|(k, v)| format!("{path}/{k}: added ({})", short(v))),
            );
            out
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .flat_map(|(i, (va, vb))| differences(&format!("{path}/{i}"), va, vb))
            .collect(),
        _ if a == b => Vec::new(),
        _ => vec![format!("{path}: {} became {}", short(a), short(b))],
    }
}

/// A value's JSON, cut to a readable length for failure messages.
fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() <= 120 {
        s
    } else {
        format!("{}…", s.chars().take(120).collect::<String>())
    }
}

/// Reads `json` as an `Event` and writes it back; the description of what went wrong, if anything.
fn event_round_trip(json: &Value) -> Result<(), String> {
    let kind = json
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let event: Event = serde_json::from_value(json.clone()).map_err(|e| format!("{kind}: {e}"))?;
    if MODELED_KINDS.contains(&kind.as_str()) && matches!(event, Event::Unknown(_)) {
        return Err(format!("{kind}: loaded as Event::Unknown"));
    }
    if event.kind() != kind {
        return Err(format!("{kind}: reports kind {}", event.kind()));
    }
    let back = serde_json::to_value(&event).map_err(|e| format!("{kind}: {e}"))?;
    let diffs = differences("", json, &back);
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(format!("{kind}: {}", diffs.join("; ")))
    }
}

#[test]
fn every_persisted_upstream_event_round_trips() {
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for dir in conversation_dirs() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("events"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        counts.push(files.len());
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let json: Value = serde_json::from_str(&text).unwrap();
            // The event log's fast path must give exactly what the generic path gives.
            match (
                serde_json::from_str::<Event>(&text),
                Event::from_json_slice(text.as_bytes()),
            ) {
                (Ok(generic), Ok(fast)) if generic == fast => {}
                (generic, fast) => failures.push(format!(
                    "{}: from_json_slice differs: {:?} vs {:?}",
                    file.display(),
                    generic.map(|e| e.kind().to_owned()),
                    fast.map(|e| e.kind().to_owned())
                )),
            }
            if let Err(e) = event_round_trip(&json) {
                failures.push(format!("{}: {e}", file.display()));
            }
        }
    }
    counts.sort_unstable();
    assert_eq!(counts, vec![17, 40, 315]);
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The JSON blocks of `client_trace.md` section 3 (one per WebSocket frame kind).
fn trace_frames() -> Vec<(String, Value)> {
    let text = std::fs::read_to_string(upstream().join("client_trace.md")).unwrap();
    let start = text.find("\n## 3.").expect("section 3");
    let section = &text[start + 1..];
    let section = match section[3..].find("\n## ") {
        Some(end) => &section[..end + 3],
        None => section,
    };
    let mut frames = Vec::new();
    let mut heading = String::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if let Some(h) = line.strip_prefix("### ") {
            heading = h.to_owned();
        } else if line.trim() == "```json" {
            let block: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
            let json = serde_json::from_str(&block.join("\n"))
                .unwrap_or_else(|e| panic!("{heading}: not JSON: {e}"));
            frames.push((heading.clone(), json));
        }
    }
    frames
}

#[test]
fn every_websocket_event_frame_round_trips() {
    let frames = trace_frames();
    let events: Vec<&(String, Value)> = frames
        .iter()
        .filter(|(_, v)| v.get("kind").is_some_and(Value::is_string))
        .collect();
    // Every event kind the trace shows (BashCommand/BashOutput are not conversation events).
    assert!(
        events.len() >= 25,
        "only {} event frames found",
        events.len()
    );
    let mut seen: Vec<&str> = events
        .iter()
        .filter_map(|(_, v)| v["kind"].as_str())
        .collect();
    seen.sort_unstable();
    seen.dedup();
    for kind in MODELED_KINDS
        .iter()
        .filter(|k| !k.starts_with("Stream") && !k.starts_with("Server"))
    {
        assert!(seen.contains(kind), "the trace has no {kind} frame");
    }
    let failures: Vec<String> = events
        .iter()
        .filter_map(|(heading, json)| {
            event_round_trip(json)
                .err()
                .map(|e| format!("{heading}: {e}"))
        })
        .collect();
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn full_state_frame_value_is_a_conversation_state() {
    let frames = trace_frames();
    let (_, frame) = frames
        .iter()
        .find(|(_, v)| v.get("key").and_then(Value::as_str) == Some("full_state"))
        .expect("a full_state frame");
    let state: ConversationState = serde_json::from_value(frame["value"].clone()).unwrap();
    let back = serde_json::to_value(&state).unwrap();
    assert_eq!(
        differences("", &frame["value"], &back),
        Vec::<String>::new()
    );
}

#[test]
fn every_upstream_base_state_round_trips() {
    let mut failures = Vec::new();
    for dir in conversation_dirs() {
        let file = dir.join("base_state.json");
        let json: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        match serde_json::from_value::<ConversationState>(json.clone()) {
            Err(e) => failures.push(format!("{}: {e}", file.display())),
            Ok(state) => {
                let back = serde_json::to_value(&state).unwrap();
                failures.extend(
                    differences("", &json, &back)
                        .into_iter()
                        .map(|d| format!("{}: {d}", file.display())),
                );
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
