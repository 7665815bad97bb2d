//! Event-log persistence: upstream conversations load and round-trip, appends are durable and
//! exclusive, damaged logs keep every event before the damage, and credentials never reach disk.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tandem_protocol::{ConversationState, Event};
use tandem_sdk::{ConversationMeta, ConversationStore, EventLog, unmatched_actions};
use tandem_testkit::fixtures::{copy_dir, upstream_conversations};

const FIXTURES: &[(&str, usize)] = &[
    ("53b0201b238848c28c0912bd065f719e", 40),
    ("20d68c67c99e4c5aa3b36fb5a8ee2600", 17),
    ("9054567dddaf4a868cf6e9002d036bea", 315),
];

/// A store holding copies of all three upstream conversations.
fn store_with_fixtures() -> (tempfile::TempDir, ConversationStore) {
    let tmp = tempfile::tempdir().unwrap();
    for (id, _) in FIXTURES {
        copy_dir(&upstream_conversations().join(id), &tmp.path().join(id)).unwrap();
    }
    let store = ConversationStore::new(tmp.path());
    (tmp, store)
}

/// The event files of `events_dir` in index order, as JSON.
fn event_files_json(events_dir: &Path) -> Vec<Value> {
    let mut names: Vec<String> = std::fs::read_dir(events_dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("event-") && n.ends_with(".json"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|n| serde_json::from_slice(&std::fs::read(events_dir.join(n)).unwrap()).unwrap())
        .collect()
}

fn to_json(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .map(|e| serde_json::to_value(e).unwrap())
        .collect()
}

fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// A persisted state-update event with a fresh id.
fn update(n: u64) -> Event {
    Event::state_update("stats", json!({ "n": n }), None)
}

/// A fresh empty log in a temp dir with `n` events.
fn log_with(n: u64) -> (tempfile::TempDir, PathBuf, Vec<Event>) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("events");
    let mut log = EventLog::create(&dir).unwrap();
    let events: Vec<Event> = (0..n).map(update).collect();
    for e in &events {
        log.append(e).unwrap();
    }
    (tmp, dir, events)
}

/// The `index`-th event file of `dir`.
fn event_file(dir: &Path, index: usize) -> PathBuf {
    let prefix = format!("event-{index:05}-");
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            let name = p.file_name().unwrap().to_str().unwrap();
            name.starts_with(&prefix) && name.ends_with(".json")
        })
        .unwrap_or_else(|| panic!("no event file {index}"))
}

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

/// A state whose agent and condenser carry keys and whose registry holds a secret value.
fn state_with_secrets(id: &str) -> ConversationState {
    serde_json::from_value(json!({
        "id": id,
        "agent": {
            "llm": { "model": "openai/fake", "api_key": "sk-agent-SECRET-1", "usage_id": "agent" },
            "condenser": {
                "llm": { "model": "openai/fake", "api_key": "sk-condenser-SECRET-2" },
                "max_size": 80,
                "kind": "LLMSummarizingCondenser"
            },
            "kind": "Agent"
        },
        "workspace": { "working_dir": "/workspace/project", "kind": "LocalWorkspace" },
        "secret_registry": {
            "secret_sources": { "MY_TOKEN": { "value": "hunter2-SECRET-3", "kind": "StaticSecret" } }
        }
    }))
    .unwrap()
}

const NEW_ID: &str = "0b7c59d4-7d0e-4b55-9c46-1b1f3c0a9e11";

fn now() -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::parse_from_rfc3339("2026-11-23T10:00:00.123456Z")
        .unwrap()
        .into()
}

#[test]
fn upstream_fixtures_load_with_all_their_events() {
    let (_tmp, store) = store_with_fixtures();
    for (id, count) in FIXTURES {
        let (state, meta, log, loaded) = store.load(id).unwrap();
        assert_eq!(loaded.events.len(), *count, "{id}");
        assert_eq!(log.len(), *count, "{id}");
        assert_eq!(loaded.warnings, Vec::<String>::new(), "{id}");
        assert_eq!(meta.id, *id);
        assert_eq!(state.id.replace('-', ""), *id);
        assert!(
            loaded
                .events
                .iter()
                .all(|e| !matches!(e, Event::Unknown(_))),
            "{id}"
        );
        // Served exactly as upstream wrote them.
        let dir = store.dir_for(id).unwrap();
        assert_eq!(
            to_json(&loaded.events),
            event_files_json(&dir.join("events")),
            "{id}"
        );
    }
    // Dashed ids name the same conversation.
    let dashed = "53b0201b-2388-48c2-8c09-12bd065f719e";
    assert_eq!(
        store.dir_for(dashed).unwrap(),
        store.dir_for(FIXTURES[0].0).unwrap()
    );
    assert_eq!(store.load(dashed).unwrap().3.events.len(), 40);
}

#[test]
fn upstream_fixtures_survive_a_save_load_round_trip() {
    let (_tmp, store) = store_with_fixtures();
    for (id, count) in FIXTURES {
        let dir = store.dir_for(id).unwrap();
        let original_events = event_files_json(&dir.join("events"));
        let original_meta = read_json(&dir.join("meta.json"));
        let original_state = read_json(&dir.join("base_state.json"));

        let (state, meta, mut log, _) = store.load(id).unwrap();
        store.save_state(&dir, &state).unwrap();
        store.save_meta(&dir, &meta).unwrap();
        let added = update(1);
        log.append(&added).unwrap();
        drop(log);

        let (state2, meta2, log2, loaded) = store.load(id).unwrap();
        assert_eq!(loaded.warnings, Vec::<String>::new());
        assert_eq!(loaded.events.len(), count + 1);
        assert_eq!(log2.len(), count + 1);
        let mut expected = original_events.clone();
        expected.push(serde_json::to_value(&added).unwrap());
        assert_eq!(to_json(&loaded.events), expected, "{id}");
        assert_eq!(meta2, meta);
        // meta.json comes back byte-for-byte as JSON, upstream fields included.
        assert_eq!(read_json(&dir.join("meta.json")), original_meta, "{id}");
        // base_state.json is upstream's minus the credentials.
        let mut without_secrets = original_state.clone();
        for llm in ["/agent/llm", "/agent/condenser/llm"] {
            if let Some(obj) = without_secrets
                .pointer_mut(llm)
                .and_then(Value::as_object_mut)
            {
                obj.remove("api_key");
            }
        }
        if let Some(sources) = without_secrets
            .pointer_mut("/secret_registry/secret_sources")
            .and_then(Value::as_object_mut)
        {
            for source in sources.values_mut() {
                source["value"] = json!("**********");
            }
        }
        assert_eq!(
            read_json(&dir.join("base_state.json")),
            without_secrets,
            "{id}"
        );
        assert_eq!(state2.agent.llm.api_key, None);
    }
}

#[test]
fn conversations_without_meta_are_listed_and_their_entry_written_back() {
    let (tmp, store) = store_with_fixtures();
    // As upstream's SDK writes them: no meta.json at all.
    for (id, _) in FIXTURES {
        std::fs::remove_file(tmp.path().join(id).join("meta.json")).unwrap();
    }
    let listed = store.list();
    let ids: Vec<&str> = listed.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids.len(), 3, "{ids:?}");
    for (id, count) in FIXTURES {
        let meta = listed.iter().find(|m| m.id == *id).unwrap();
        let events = EventLog::read(&tmp.path().join(id).join("events")).unwrap();
        assert_eq!(events.events.len(), *count);
        // Created at the first event, updated at the last.
        let time = |e: &Event| {
            chrono::NaiveDateTime::parse_from_str(e.timestamp(), "%Y-%m-%dT%H:%M:%S%.f")
                .unwrap()
                .and_utc()
        };
        assert_eq!(meta.created_at, time(events.events.first().unwrap()));
        assert_eq!(meta.updated_at, time(events.events.last().unwrap()));
        assert_eq!(meta.title, None);
        // Written back whole (the atomic write leaves no temp file behind).
        let path = tmp.path().join(id).join("meta.json");
        let on_disk: ConversationMeta =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(&on_disk, meta);
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path().join(id))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
    // Listed oldest first, and the same again from the written entries.
    let again = store.list();
    assert_eq!(again, listed);
    let created: Vec<_> = listed.iter().map(|m| m.created_at).collect();
    assert!(created.is_sorted(), "{created:?}");
}

#[test]
fn a_conversation_open_for_writing_is_listed_but_not_written_back() {
    let (tmp, store) = store_with_fixtures();
    let (id, _) = FIXTURES[1];
    let meta_path = tmp.path().join(id).join("meta.json");
    std::fs::remove_file(&meta_path).unwrap();
    let (_state, _meta, writer, _events) = store.load(id).unwrap();
    assert!(store.list().iter().any(|m| m.id == id));
    assert!(!meta_path.exists(), "written while a writer held the log");
    drop(writer);
    assert!(store.list().iter().any(|m| m.id == id));
    assert!(meta_path.exists());
}

#[test]
fn list_reads_every_meta_and_rebuilds_corrupt_ones() {
    let (tmp, store) = store_with_fixtures();
    let ids: Vec<String> = store.list().into_iter().map(|m| m.id).collect();
    assert_eq!(
        ids,
        vec![
            "53b0201b238848c28c0912bd065f719e",
            "20d68c67c99e4c5aa3b36fb5a8ee2600",
            "9054567dddaf4a868cf6e9002d036bea"
        ]
    );
    std::fs::write(
        tmp.path().join(FIXTURES[1].0).join("meta.json"),
        b"{ not json",
    )
    .unwrap();
    std::fs::create_dir(tmp.path().join("not-a-conversation")).unwrap();
    // The unreadable entry is rebuilt from the state for the listing, and left as it is.
    assert_eq!(store.list().len(), 3);
    assert_eq!(
        std::fs::read(tmp.path().join(FIXTURES[1].0).join("meta.json")).unwrap(),
        b"{ not json"
    );
    // Without a readable state there is nothing to list.
    std::fs::write(
        tmp.path().join(FIXTURES[1].0).join("base_state.json"),
        b"{ not json either",
    )
    .unwrap();
    assert_eq!(store.list().len(), 2);
    assert_eq!(
        ConversationStore::new(tmp.path().join("missing")).list(),
        Vec::new()
    );
}

#[test]
fn create_append_reopen_and_delete() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ConversationStore::new(tmp.path().join("conversations"));
    let state = state_with_secrets(NEW_ID);
    let meta = ConversationMeta::new(NEW_ID, Some("A title".into()), now());
    let (dir, mut log) = store.create(&state, &meta).unwrap();
    assert_eq!(
        dir,
        tmp.path()
            .join("conversations/0b7c59d47d0e4b559c461b1f3c0a9e11")
    );
    let events: Vec<Event> = (0..12).map(update).collect();
    for (i, e) in events.iter().enumerate() {
        log.append(e).unwrap();
        assert_eq!(log.len(), i + 1);
    }
    let created_again = store.create(&state, &meta);
    assert!(created_again.is_err());
    drop(log);

    let (state2, meta2, log2, loaded) = store.load(NEW_ID).unwrap();
    assert_eq!(loaded.events, events);
    assert_eq!(loaded.warnings, Vec::<String>::new());
    assert_eq!(log2.len(), 12);
    assert_eq!(
        meta2,
        ConversationMeta {
            id: "0b7c59d47d0e4b559c461b1f3c0a9e11".into(),
            ..meta
        }
    );
    assert_eq!(
        read_json(&dir.join("meta.json"))["created_at"],
        json!("2026-11-23T10:00:00.123456Z")
    );
    assert_eq!(state2.id, NEW_ID);

    // One marker, carrying the count; the lock file; the events.
    let names = names_in(&dir.join("events"));
    let markers: Vec<&String> = names.iter().filter(|n| n.contains("-len-")).collect();
    assert_eq!(markers, vec![".eventlog-len-12.marker"]);
    assert!(names.contains(&".eventlog.lock".to_owned()));
    assert_eq!(names.iter().filter(|n| n.starts_with("event-")).count(), 12);
    // Each file is one compact JSON object.
    let text = std::fs::read_to_string(event_file(&dir.join("events"), 3)).unwrap();
    assert_eq!(text, serde_json::to_string(&events[3]).unwrap());

    assert!(
        store.delete(NEW_ID).is_err(),
        "deleting an open conversation must fail"
    );
    drop(log2);
    store.delete(NEW_ID).unwrap();
    assert!(!dir.exists());
    assert!(matches!(
        store.load(NEW_ID),
        Err(tandem_sdk::SdkError::NotFound(_))
    ));
}

#[test]
fn a_second_writer_gets_a_clear_locked_error() {
    let (_tmp, dir, _) = log_with(3);
    let (first, _) = EventLog::open(&dir).unwrap();
    let err = EventLog::open(&dir).unwrap_err().to_string();
    assert!(err.contains("locked"), "{err}");
    assert!(err.contains(".eventlog.lock"), "{err}");
    // Readers do not need the lock.
    assert_eq!(EventLog::read(&dir).unwrap().events.len(), 3);
    drop(first);
    assert_eq!(EventLog::open(&dir).unwrap().1.events.len(), 3);
}

#[test]
fn a_truncated_last_file_keeps_the_events_before_it() {
    let (_tmp, dir, events) = log_with(5);
    let last = event_file(&dir, 4);
    let bytes = std::fs::read(&last).unwrap();
    std::fs::write(&last, &bytes[..bytes.len() / 2]).unwrap();

    let (mut log, loaded) = EventLog::open(&dir).unwrap();
    assert_eq!(loaded.events, events[..4]);
    assert_eq!(log.len(), 4);
    let name = last.file_name().unwrap().to_str().unwrap();
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains(name) && w.contains("EOF")),
        "{:?}",
        loaded.warnings
    );
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains(&format!("{name}.corrupt"))),
        "{:?}",
        loaded.warnings
    );
    assert!(dir.join(format!("{name}.corrupt")).exists());

    let next = update(99);
    log.append(&next).unwrap();
    drop(log);
    let (_, reloaded) = EventLog::open(&dir).unwrap();
    assert_eq!(reloaded.events.len(), 5);
    assert_eq!(reloaded.events[4], next);
    assert_eq!(reloaded.warnings, Vec::<String>::new());
}

#[test]
fn a_garbage_middle_file_keeps_the_events_before_it() {
    let (_tmp, dir, events) = log_with(6);
    let bad = event_file(&dir, 2);
    std::fs::write(&bad, b"\x00\x01garbage{{").unwrap();

    // A reader changes nothing.
    let read = EventLog::read(&dir).unwrap();
    assert_eq!(read.events, events[..2]);
    assert_eq!(
        names_in(&dir)
            .iter()
            .filter(|n| n.ends_with(".json"))
            .count(),
        6
    );

    let (mut log, loaded) = EventLog::open(&dir).unwrap();
    assert_eq!(loaded.events, events[..2]);
    let name = bad.file_name().unwrap().to_str().unwrap();
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains(name) && w.contains("corrupt")),
        "{:?}",
        loaded.warnings
    );
    // The valid files after it are moved aside too, so new indexes cannot collide.
    assert_eq!(
        names_in(&dir)
            .iter()
            .filter(|n| n.ends_with(".orphaned"))
            .count(),
        3
    );

    let next = update(7);
    log.append(&next).unwrap();
    assert_eq!(log.len(), 3);
    drop(log);
    let (_, reloaded) = EventLog::open(&dir).unwrap();
    assert_eq!(
        reloaded.events,
        vec![events[0].clone(), events[1].clone(), next]
    );
}

#[test]
fn a_gap_stops_loading() {
    let (_tmp, dir, events) = log_with(5);
    std::fs::remove_file(event_file(&dir, 2)).unwrap();
    let read = EventLog::read(&dir).unwrap();
    assert_eq!(read.events, events[..2]);
    assert!(
        read.warnings
            .iter()
            .any(|w| w.contains("index 2 is missing")),
        "{:?}",
        read.warnings
    );

    let (mut log, loaded) = EventLog::open(&dir).unwrap();
    assert_eq!(loaded.events, events[..2]);
    log.append(&update(8)).unwrap();
    log.append(&update(9)).unwrap();
    drop(log);
    let (_, reloaded) = EventLog::open(&dir).unwrap();
    assert_eq!(reloaded.events.len(), 4);
    assert_eq!(reloaded.warnings, Vec::<String>::new());
}

#[test]
fn unknown_names_and_dot_files_are_ignored() {
    let (_tmp, dir, events) = log_with(3);
    std::fs::write(dir.join("notes.txt"), b"hello").unwrap();
    std::fs::write(dir.join("event-1-1343ce37.json"), b"{}").unwrap();
    std::fs::write(dir.join(".DS_Store"), b"").unwrap();
    // A temp file of an interrupted write is never an event.
    let temp = dir.join(".event-00003-1343ce37-1e8a-4d20-957a-e99821d81685.json.0123456789ab");
    std::fs::write(&temp, b"{\"half").unwrap();

    let (_log, loaded) = EventLog::open(&dir).unwrap();
    assert_eq!(loaded.events, events);
    assert_eq!(loaded.warnings.len(), 2, "{:?}", loaded.warnings);
    assert!(loaded.warnings.iter().any(|w| w.contains("notes.txt")));
    assert!(
        loaded
            .warnings
            .iter()
            .any(|w| w.contains("event-1-1343ce37.json"))
    );
    assert!(
        !temp.exists(),
        "the writer removes temp files of interrupted writes"
    );
}

#[test]
fn persisted_files_are_private() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ConversationStore::new(tmp.path());
    let (dir, mut log) = store
        .create(
            &state_with_secrets(NEW_ID),
            &ConversationMeta::new(NEW_ID, None, now()),
        )
        .unwrap();
    log.append(&update(1)).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir.join("base_state.json")), 0o600);
    assert_eq!(mode(&dir.join("meta.json")), 0o600);
    for name in names_in(&dir.join("events")) {
        assert_eq!(mode(&dir.join("events").join(&name)), 0o600, "{name}");
    }
    let standalone = tmp.path().join("x.json");
    tandem_sdk::atomic_write(&standalone, b"{}").unwrap();
    assert_eq!(mode(&standalone), 0o600);
    assert_eq!(std::fs::read(&standalone).unwrap(), b"{}");
}

#[test]
fn save_state_never_writes_credentials() {
    let tmp = tempfile::tempdir().unwrap();
    let store = ConversationStore::new(tmp.path());
    let state = state_with_secrets(NEW_ID);
    let (dir, _log) = store
        .create(&state, &ConversationMeta::new(NEW_ID, None, now()))
        .unwrap();
    store.save_state(&dir, &state).unwrap();
    let text = std::fs::read_to_string(dir.join("base_state.json")).unwrap();
    assert!(!text.contains("SECRET"), "{text}");
    assert!(!text.contains("api_key"), "{text}");
    let saved = read_json(&dir.join("base_state.json"));
    assert_eq!(
        saved.pointer("/secret_registry/secret_sources/MY_TOKEN/value"),
        Some(&json!("**********"))
    );
    assert_eq!(saved.pointer("/agent/condenser/max_size"), Some(&json!(80)));
    // The in-memory state keeps its key.
    assert_eq!(
        state.agent.llm.api_key.as_deref(),
        Some("sk-agent-SECRET-1")
    );
}

#[test]
fn append_refuses_transient_events_and_unusable_ids() {
    let (_tmp, dir, _) = log_with(0);
    let (mut log, _) = EventLog::open(&dir).unwrap();
    assert!(
        log.append(&Event::state_update("full_state", json!({}), None))
            .is_err()
    );
    let mut bad: Value = serde_json::to_value(update(1)).unwrap();
    bad["id"] = json!("../../etc/passwd");
    assert!(log.append(&serde_json::from_value(bad).unwrap()).is_err());
    assert_eq!(log.len(), 0);
    assert_eq!(
        names_in(&dir)
            .iter()
            .filter(|n| !n.starts_with('.'))
            .count(),
        0
    );
}

#[test]
fn ids_that_are_not_uuids_are_refused() {
    let store = ConversationStore::new("/tmp/x");
    for bad in [
        "../../etc",
        "",
        "53b0201b238848c28c0912bd065f719",
        "53b0201b-2388-48c2-8c09-12bd065f719e-",
    ] {
        assert!(store.dir_for(bad).is_err(), "{bad}");
    }
}

/// An action event (parsed when `parsed`), and the events that can answer it.
fn action(id: &str, call: &str, parsed: bool) -> Event {
    let mut v = json!({
        "id": id, "timestamp": "2026-11-22T12:36:30.000000", "source": "agent",
        "thought": [], "thinking_blocks": [],
        "tool_name": "terminal", "tool_call_id": call,
        "tool_call": { "id": call, "name": "terminal", "arguments": "{\"command\":\"sleep 60\"}", "origin": "completion" },
        "llm_response_id": "resp-1", "security_risk": "UNKNOWN", "kind": "ActionEvent"
    });
    if parsed {
        v["action"] = json!({ "command": "sleep 60", "is_input": false, "reset": false, "kind": "TerminalAction" });
    }
    serde_json::from_value(v).unwrap()
}

fn observation(action_id: &str, call: &str) -> Event {
    serde_json::from_value(json!({
        "id": format!("{action_id}-obs"), "timestamp": "2026-11-22T12:36:31.000000", "source": "environment",
        "tool_name": "terminal", "tool_call_id": call, "action_id": action_id,
        "observation": { "content": [], "is_error": false, "timeout": false, "metadata": {}, "kind": "TerminalObservation" },
        "kind": "ObservationEvent"
    }))
    .unwrap()
}

fn agent_error(parent: &str, call: &str) -> Event {
    serde_json::from_value(json!({
        "id": format!("{parent}-err"), "timestamp": "2026-11-22T12:36:31.000000", "source": "agent",
        "parent_id": parent, "tool_name": "terminal", "tool_call_id": call, "error": "boom",
        "kind": "AgentErrorEvent"
    }))
    .unwrap()
}

fn rejection(action_id: &str, call: &str) -> Event {
    serde_json::from_value(json!({
        "id": format!("{action_id}-rej"), "timestamp": "2026-11-22T12:36:31.000000", "source": "environment",
        "tool_name": "terminal", "tool_call_id": call, "action_id": action_id,
        "rejection_reason": "no", "rejection_source": "user", "kind": "UserRejectObservation"
    }))
    .unwrap()
}

#[test]
fn unmatched_actions_finds_the_interrupted_tool_call() {
    let events = vec![
        action("a1", "call-1", true),
        observation("a1", "call-1"),
        action("a2", "call-2", true),
        agent_error("a2", "call-2"),
        action("a3", "call-3", true),
        rejection("a3", "call-3"),
        // Unparsed: never runs, not pending.
        action("a4", "call-4", false),
        // An error answering by call id only (parent is some other event).
        action("a5", "call-5", true),
        update(1),
        agent_error("a4", "call-5"),
        // A reused call id: the earlier action was answered, this one was not.
        action("a6", "call-1", true),
        action("a7", "call-7", true),
    ];
    let pending: Vec<&str> = unmatched_actions(&events)
        .iter()
        .map(|a| a.base.id.as_str())
        .collect();
    assert_eq!(pending, vec!["a6", "a7"]);
    assert!(unmatched_actions(&events[..6]).is_empty());
}

#[test]
fn upstream_fixtures_have_no_unmatched_actions() {
    let (_tmp, store) = store_with_fixtures();
    for (id, _) in FIXTURES {
        let (_, _, _, loaded) = store.load(id).unwrap();
        assert!(unmatched_actions(&loaded.events).is_empty(), "{id}");
    }
    // Cut the 40-event conversation before its finish observation (event 35): finish is pending.
    let (_, _, _, loaded) = store.load(FIXTURES[0].0).unwrap();
    let cut = &loaded.events[..35];
    let pending = unmatched_actions(cut);
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].tool_name, "finish");
}
