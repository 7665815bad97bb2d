//! The tool definitions against upstream's: same argument schemas (descriptions aside, which
//! are our own words), same names, kinds and security-risk flags, in the default order.

use serde_json::Value;
use tandem_testkit::tool_schema::{strip_descriptions, without_agent_fields};

/// Upstream's `parameters` per tool, as sent to the LLM (copied from the captured request).
const UPSTREAM: &str = include_str!("fixtures/upstream_tool_parameters.json");

/// Our `parameters` per tool as the model saw them when they were hand-written `json!`, before
/// they were generated from the action structs: what the model reads must not drift.
const OURS: &str = include_str!("fixtures/tool_parameters.json");

#[test]
fn schemas_match_upstream() {
    let upstream: Value = serde_json::from_str(UPSTREAM).unwrap();
    let tools = tandem_tools::default_tools(None);
    let mut checked = 0;
    for tool in &tools {
        let def = tool.definition();
        if def.name == "terminal" {
            continue;
        }
        let theirs = &upstream[def.name.as_str()];
        assert!(theirs.is_object(), "no upstream schema for {}", def.name);
        assert_eq!(
            strip_descriptions(&def.parameters),
            strip_descriptions(&without_agent_fields(theirs)),
            "{}",
            def.name
        );
        // Upstream shows the risk field exactly on the tools that ask for it.
        assert_eq!(
            def.asks_security_risk,
            theirs["properties"].get("security_risk").is_some(),
            "{}",
            def.name
        );
        assert!(!def.description.is_empty());
        checked += 1;
    }
    assert_eq!(checked, 4);
}

#[test]
fn generated_parameters_are_what_the_model_read_before() {
    let ours: Value = serde_json::from_str(OURS).unwrap();
    let tools = tandem_tools::default_tools(None);
    for tool in &tools {
        let def = tool.definition();
        assert_eq!(def.parameters, ours[def.name.as_str()], "{}", def.name);
        // Byte for byte, as serialised into the request.
        assert_eq!(
            def.parameters.to_string(),
            ours[def.name.as_str()].to_string(),
            "{}",
            def.name
        );
    }
    assert_eq!(tools.len(), ours.as_object().unwrap().len());
}

#[test]
fn terminal_schema_matches_upstream() {
    let upstream: Value = serde_json::from_str(UPSTREAM).unwrap();
    let tool = tandem_tools::terminal::TerminalTool::new();
    let def = tandem_sdk::Tool::definition(&tool);
    assert_eq!(
        strip_descriptions(&def.parameters),
        strip_descriptions(&without_agent_fields(&upstream["terminal"]))
    );
    assert!(def.asks_security_risk);
    assert_eq!(
        (def.action_type.as_str(), def.observation_type.as_str()),
        ("TerminalAction", "TerminalObservation")
    );
}

#[test]
fn kinds_and_annotations() {
    let tools = tandem_tools::default_tools(None);
    let by_name = |name: &str| {
        tools
            .iter()
            .find(|t| t.definition().name == name)
            .unwrap()
            .definition()
            .clone()
    };
    for (name, action, observation, read_only) in [
        (
            "file_editor",
            "FileEditorAction",
            "FileEditorObservation",
            false,
        ),
        (
            "task_tracker",
            "TaskTrackerAction",
            "TaskTrackerObservation",
            false,
        ),
        ("think", "ThinkAction", "ThinkObservation", true),
        ("finish", "FinishAction", "FinishObservation", true),
    ] {
        let def = by_name(name);
        assert_eq!(def.action_type, action);
        assert_eq!(def.observation_type, observation);
        assert_eq!(def.annotations.read_only, read_only, "{name}");
    }
}

#[test]
fn default_order_matches_tool_names() {
    let names: Vec<String> = tandem_tools::default_tools(None)
        .iter()
        .map(|t| t.definition().name.clone())
        .collect();
    assert_eq!(names, tandem_tools::tool_names());
    assert_eq!(
        &tandem_tools::tool_names()[1..],
        ["file_editor", "task_tracker", "finish", "think"]
    );
}
