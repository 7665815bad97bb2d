//! `tool_io`: the schema derived from an action struct, and the lenient reading of the model's
//! arguments into it with errors that name the field.

use serde_json::{Value, json};
use tandem_protocol::tool_io::{self, ToolInput, ToolOutput};
use tandem_protocol::{
    Action, FileEditorAction, FileEditorObservation, Observation, TaskTrackerAction,
    TerminalAction, ThinkAction,
};

fn parse<T: ToolInput>(arguments: Value) -> Result<T, String> {
    tool_io::parse(arguments, &tool_io::parameters::<T>()).map_err(|e| e.to_string())
}

/// Every key anywhere in `v`, with the path leading to it.
fn keys(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, v) in map {
                out.push(format!("{path}/{k}"));
                keys(v, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| keys(v, path, out)),
        _ => {}
    }
}

#[test]
fn schema_is_plain_and_describes_the_fields() {
    let schema = tool_io::parameters::<FileEditorAction>();
    let mut all = Vec::new();
    keys(&schema, "", &mut all);
    for noise in [
        "$schema",
        "title",
        "format",
        "default",
        "definitions",
        "$defs",
        "$ref",
    ] {
        assert!(
            !all.iter().any(|k| k.ends_with(&format!("/{noise}"))),
            "{noise} in {schema}"
        );
    }
    assert_eq!(schema["type"], "object");
    assert!(schema.get("description").is_none());
    assert_eq!(schema["required"], json!(["command", "path"]));
    // Optional fields are absent when unused, never `null`.
    assert_eq!(schema["properties"]["insert_line"]["type"], "integer");
    assert_eq!(
        schema["properties"]["view_range"],
        json!({
            "type": "array",
            "items": {"type": "integer"},
            "description": "For `view` of a file: `[first, last]` line numbers to show, counted \
        from 1; a last line of -1 means the end of the file. Without it the whole file is shown."
        })
    );
    assert_eq!(
        schema["properties"]["command"]["enum"],
        json!(FileEditorAction::COMMANDS)
    );
    // The `extra` catch-all is not a field the model is offered.
    assert!(schema["properties"].get("extra").is_none());
    assert!(schema.get("additionalProperties").is_none());

    let tracker = tool_io::parameters::<TaskTrackerAction>();
    assert!(tracker.get("required").is_none(), "{tracker}");
    let item = &tracker["properties"]["task_list"]["items"];
    assert_eq!(item["required"], json!(["title"]));
    assert!(item.get("description").is_none());
}

#[test]
fn arguments_are_read_leniently() {
    let a: FileEditorAction = parse(json!({
        "command": "view", "path": "/w", "insert_line": "3", "view_range": "[1, -1]",
        "old_str": null,
    }))
    .unwrap();
    assert_eq!(
        (a.insert_line, a.view_range, a.old_str),
        (Some(3), Some(vec![1, -1]), None)
    );
    let a: FileEditorAction = parse(
        json!({"command": "view", "path": "/w", "insert_line": 4.0, "view_range": [" 2 ", 5.0]}),
    )
    .unwrap();
    assert_eq!((a.insert_line, a.view_range), (Some(4), Some(vec![2, 5])));

    let t: TerminalAction =
        parse(json!({"command": "ls", "is_input": "TRUE", "timeout": " 2.5 ", "reset": null}))
            .unwrap();
    assert!(t.is_input && !t.reset);
    assert_eq!(t.timeout, Some(2.5));

    // `null` arguments are an empty object; `null` members take their defaults.
    let tracker: TaskTrackerAction = parse(Value::Null).unwrap();
    assert_eq!(tracker.command, "view");
    let tracker: TaskTrackerAction = parse(json!({"command": null, "task_list": null})).unwrap();
    assert_eq!(tracker.command, "view");
    let tracker: TaskTrackerAction =
        parse(json!({"command": "plan", "task_list": "[{\"title\": \"a\", \"notes\": null}]"}))
            .unwrap();
    assert_eq!(tracker.task_list[0].status, "todo");
    assert_eq!(tracker.task_list[0].notes, "");
}

#[test]
fn unknown_arguments_are_dropped_but_the_wire_keeps_them() {
    // A stray argument from the model never reaches the action (upstream refuses them)...
    let t: ThinkAction = parse(json!({"thought": "t", "mood": {"calm": true}})).unwrap();
    assert!(t.extra.is_empty());
    assert_eq!(
        serde_json::to_value(Action::from(t)).unwrap(),
        json!({"thought": "t", "kind": "ThinkAction"})
    );
    let tracker: TaskTrackerAction = parse(json!({
        "command": "plan",
        "task_list": [{"title": "a", "owner": "me"}],
    }))
    .unwrap();
    assert_eq!(tracker.task_list[0].title, "a");
    assert!(tracker.extra.is_empty());
    // ...while an event written by a newer version keeps the fields this one does not know.
    let logged: Action =
        serde_json::from_value(json!({"kind": "ThinkAction", "thought": "t", "mood": 1})).unwrap();
    assert_eq!(
        serde_json::to_value(logged).unwrap(),
        json!({"kind": "ThinkAction", "thought": "t", "mood": 1})
    );
}

#[test]
fn errors_name_the_field() {
    let err = |args: Value| parse::<FileEditorAction>(args).unwrap_err();
    assert_eq!(
        err(json!({"path": "/w"})),
        "missing required field `command`"
    );
    assert_eq!(
        err(json!({"command": null, "path": "/w"})),
        "missing required field `command`"
    );
    assert_eq!(
        err(json!({"command": "view", "path": ["/w"]})),
        "field `path` must be a string, got an array"
    );
    assert_eq!(
        err(json!({"command": "view", "path": "/w", "insert_line": 1.5})),
        "field `insert_line` must be an integer, got 1.5"
    );
    assert_eq!(
        err(json!({"command": "view", "path": "/w", "view_range": "1-3"})),
        "field `view_range` must be an array, got a string"
    );
    assert_eq!(
        err(json!({"command": "delete", "path": "/w"})),
        "field `command` must be one of view, create, str_replace, insert, undo_edit, got `delete`"
    );
    assert_eq!(
        err(json!(["view"])),
        "the arguments must be a JSON object, got an array"
    );
    assert_eq!(
        parse::<TerminalAction>(json!({"command": "ls", "reset": "yes"})).unwrap_err(),
        "field `reset` must be true or false, got \"yes\""
    );
    let tracker = |args: Value| parse::<TaskTrackerAction>(args).unwrap_err();
    assert_eq!(
        tracker(json!({"command": "plan", "task_list": [{"title": "a"}, {}]})),
        "missing required field `task_list[1].title`"
    );
    assert_eq!(
        tracker(json!({"task_list": "[{\"title\": \"a\", \"status\": \"later\"}]"})),
        "field `task_list[0].status` must be one of todo, in_progress, done, got `later`"
    );
}

#[test]
fn the_wire_stays_strict() {
    // Leniency belongs to reading the model's arguments, not to reading events.
    let wire = json!({"command": "view", "path": "/w", "insert_line": "3"});
    assert!(serde_json::from_value::<FileEditorAction>(wire.clone()).is_err());
    assert!(parse::<FileEditorAction>(wire).is_ok());
    // And a command the schema does not offer still loads from the log.
    let logged: FileEditorAction =
        serde_json::from_value(json!({"command": "delete", "path": "/w"})).unwrap();
    assert_eq!(logged.command, "delete");
}

#[test]
fn inputs_and_outputs_know_their_variants() {
    let action = Action::from(TerminalAction {
        command: "ls".into(),
        ..Default::default()
    });
    assert_eq!(TerminalAction::of(&action).unwrap().command, "ls");
    assert!(FileEditorAction::of(&action).is_none());
    assert_eq!(TerminalAction::KIND, action.kind());

    let failed: Observation = FileEditorObservation::failure("no".into()).into();
    assert_eq!(failed.kind(), FileEditorObservation::KIND);
    assert_eq!(
        serde_json::to_value(&failed).unwrap(),
        json!({
            "content": [{"type": "text", "text": "no", "cache_prompt": false}], "is_error": true,
            "command": "",
            "prev_exist": true, "kind": "FileEditorObservation",
        })
    );
}
