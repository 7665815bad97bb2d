//! The browser tool definitions against upstream's: same names in the same order, same argument
//! schemas (descriptions aside, which are our own words), same security-risk flags; and the
//! model's arguments read into the actions as upstream reads them.

use serde_json::{Value, json};
use tandem_browser::definitions::{self, ALL, REQUEST_HANDOFF};
use tandem_protocol::tool_io::{self, parameters};
use tandem_protocol::{
    BrowserGetContentAction, BrowserScrollAction, BrowserSetStorageAction, BrowserTypeAction,
};
use tandem_testkit::tool_schema::{strip_descriptions, without_agent_fields};

/// Upstream's browser tools as sent to the LLM: `[{"name", "parameters"}]` in its order.
const UPSTREAM: &str = include_str!("fixtures/upstream_browser_tools.json");

fn upstream() -> Vec<(String, Value)> {
    let tools: Vec<Value> = serde_json::from_str(UPSTREAM).unwrap();
    tools
        .into_iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["parameters"].clone(),
            )
        })
        .collect()
}

#[test]
fn names_are_upstreams_in_its_order_then_the_handoff() {
    let names: Vec<String> = upstream().into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ALL[..14]);
    assert_eq!(ALL[14], REQUEST_HANDOFF);
    let defined: Vec<String> = definitions::definitions()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(defined, ALL);
}

#[test]
fn schemas_and_security_risk_match_upstream() {
    for (name, theirs) in upstream() {
        let def = definitions::definition(&name);
        assert_eq!(def.name, name);
        assert_eq!(
            strip_descriptions(&def.parameters),
            strip_descriptions(&without_agent_fields(&theirs)),
            "{name}"
        );
        // Upstream shows the risk field exactly on the tools that ask for it.
        assert_eq!(
            def.asks_security_risk,
            theirs["properties"].get("security_risk").is_some(),
            "{name}"
        );
        // Every argument the model sees is described.
        for (arg, schema) in def.parameters["properties"].as_object().unwrap() {
            if arg != "storage_state" {
                assert!(schema["description"].is_string(), "{name}.{arg}");
            }
        }
        assert!(!def.description.is_empty(), "{name}");
        assert_eq!(def.observation_type, "BrowserObservation", "{name}");
    }
}

#[test]
fn kinds_are_the_upstream_action_classes() {
    let kinds: Vec<String> = ALL
        .iter()
        .map(|name| definitions::definition(name).action_type)
        .collect();
    assert_eq!(
        kinds,
        [
            "BrowserNavigateAction",
            "BrowserClickAction",
            "BrowserGetStateAction",
            "BrowserGetContentAction",
            "BrowserTypeAction",
            "BrowserScrollAction",
            "BrowserGoBackAction",
            "BrowserListTabsAction",
            "BrowserSwitchTabAction",
            "BrowserCloseTabAction",
            "BrowserGetStorageAction",
            "BrowserSetStorageAction",
            "BrowserStartRecordingAction",
            "BrowserStopRecordingAction",
            "BrowserRequestHandoffAction",
        ]
    );
}

#[test]
fn annotations_say_which_tools_read_and_which_reach_the_web() {
    let with = |flag: fn(&tandem_sdk::ToolAnnotations) -> bool| -> Vec<&str> {
        ALL.iter()
            .copied()
            .filter(|name| flag(&definitions::definition(name).annotations))
            .collect()
    };
    assert_eq!(
        with(|a| a.read_only),
        [
            "browser_get_state",
            "browser_get_content",
            "browser_list_tabs",
            "browser_get_storage"
        ]
    );
    assert_eq!(
        with(|a| a.open_world),
        ["browser_navigate", "browser_click", "browser_type"]
    );
}

#[test]
fn the_handoff_requires_a_reason_and_asks_no_risk() {
    let def = definitions::definition(REQUEST_HANDOFF);
    assert_eq!(def.parameters["required"], json!(["reason"]));
    assert!(def.parameters["properties"]["reason"]["description"].is_string());
    assert!(!def.asks_security_risk);
    assert!(!def.annotations.read_only);
}

#[test]
fn model_arguments_read_with_upstreams_defaults() {
    // `{}` reads as upstream records it: every optional argument at its default.
    let content: BrowserGetContentAction =
        tool_io::parse(json!({}), &parameters::<BrowserGetContentAction>()).unwrap();
    assert_eq!(
        serde_json::to_value(&content).unwrap(),
        json!({"extract_links": false, "start_from_char": 0})
    );
    let scroll: BrowserScrollAction =
        tool_io::parse(json!({}), &parameters::<BrowserScrollAction>()).unwrap();
    assert_eq!(scroll.direction, "down");
    // Models' usual slips are forgiven, the agent's own fields dropped.
    let typed: BrowserTypeAction = tool_io::parse(
        json!({"index": "4", "text": "alice", "security_risk": "LOW", "summary": "type"}),
        &parameters::<BrowserTypeAction>(),
    )
    .unwrap();
    assert_eq!((typed.index, typed.text.as_str()), (4, "alice"));
    assert!(typed.extra.is_empty());
    let storage: BrowserSetStorageAction = tool_io::parse(
        json!({"storage_state": {"cookies": [{"name": "sid", "value": "x"}], "origins": []}}),
        &parameters::<BrowserSetStorageAction>(),
    )
    .unwrap();
    assert_eq!(storage.storage_state["origins"], json!([]));
}

#[test]
fn bad_arguments_are_refused_naming_the_field() {
    let err = tool_io::parse::<BrowserScrollAction>(
        json!({"direction": "left"}),
        &parameters::<BrowserScrollAction>(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("direction") && err.contains("up, down"),
        "{err}"
    );
    let err = tool_io::parse::<BrowserTypeAction>(
        json!({"text": "x"}),
        &parameters::<BrowserTypeAction>(),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("index"), "{err}");
    let err = tool_io::parse::<BrowserSetStorageAction>(
        json!({"storage_state": "cookies"}),
        &parameters::<BrowserSetStorageAction>(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("storage_state") || err.contains("map"),
        "{err}"
    );
}
