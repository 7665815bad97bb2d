//! The upstream conversation in which the agent browsed (navigate, get_state with a screenshot,
//! click, get_content, list_tabs) loads: every event reads into its typed variant and writes
//! back to the same JSON.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tandem_protocol::{Action, Event, Observation, ToolInput};

fn events_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/upstream/1c8d051cd2514e828786ea7e71f72af5/events")
}

/// Every event file's JSON, in order.
fn events() -> Vec<(String, Value)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(events_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            (name, serde_json::from_str(&text).unwrap())
        })
        .collect()
}

#[test]
fn every_event_round_trips() {
    let events = events();
    assert_eq!(events.len(), 13);
    for (file, json) in &events {
        let event: Event = serde_json::from_value(json.clone()).unwrap();
        assert!(!matches!(event, Event::Unknown(_)), "{file}");
        // The event log's fast path reads the same.
        let fast = Event::from_json_slice(json.to_string().as_bytes()).unwrap();
        assert_eq!(fast, event, "{file}");
        assert_eq!(&serde_json::to_value(&event).unwrap(), json, "{file}");
    }
}

#[test]
fn browser_actions_and_observations_are_typed() {
    let mut actions = Vec::new();
    let mut observations = 0;
    for (file, json) in events() {
        match serde_json::from_value::<Event>(json).unwrap() {
            Event::Action(a) => {
                let action = a.action.unwrap();
                assert!(!matches!(action, Action::Unknown(_)), "{file}");
                assert!(a.tool_name.starts_with("browser_"), "{file}");
                actions.push(action);
            }
            Event::Observation(o) => {
                let Observation::Browser(b) = &o.observation else {
                    panic!(
                        "{file}: {} is not a BrowserObservation",
                        o.observation.kind()
                    );
                };
                assert!(!b.is_error && !b.content.is_empty(), "{file}");
                assert!(b.extra.is_empty(), "{file}: {:?}", b.extra.keys());
                // Only the state asked with a screenshot carries one.
                assert_eq!(
                    b.screenshot_data.is_some(),
                    o.tool_name == "browser_get_state",
                    "{file}"
                );
                observations += 1;
            }
            _ => {}
        }
    }
    assert_eq!(observations, 5);
    let kinds: Vec<&str> = actions.iter().map(Action::kind).collect();
    assert_eq!(
        kinds,
        [
            "BrowserNavigateAction",
            "BrowserGetStateAction",
            "BrowserClickAction",
            "BrowserGetContentAction",
            "BrowserListTabsAction",
        ]
    );
    let navigate = tandem_protocol::BrowserNavigateAction::of(&actions[0]).unwrap();
    assert_eq!(navigate.url, "http://127.0.0.1:18801/index.html");
    assert!(!navigate.new_tab);
    let state = tandem_protocol::BrowserGetStateAction::of(&actions[1]).unwrap();
    assert!(state.include_screenshot);
    let click = tandem_protocol::BrowserClickAction::of(&actions[2]).unwrap();
    assert_eq!(click.index, 1);
}

#[test]
fn the_screenshot_is_a_png() {
    let (_, json) = events()
        .into_iter()
        .find(|(_, j)| j["tool_name"] == "browser_get_state" && j["kind"] == "ObservationEvent")
        .unwrap();
    let Event::Observation(o) = serde_json::from_value::<Event>(json).unwrap() else {
        panic!("not an observation");
    };
    let Observation::Browser(b) = o.observation else {
        panic!("not a BrowserObservation");
    };
    // Base64 of the PNG signature.
    assert!(b.screenshot_data.unwrap().starts_with("iVBORw0KGgo"));
}
