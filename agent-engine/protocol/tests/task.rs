//! The `task` tool's action and observation: upstream's schema and wire shape.

use serde_json::{Value, json};
use tandem_protocol::tool_io::{self, ToolOutput};
use tandem_protocol::{Action, Observation, TaskAction, TaskObservation};

#[test]
fn schema_matches_upstream() {
    let schema = tool_io::parameters::<TaskAction>();
    assert_eq!(schema["required"], json!(["prompt"]));
    let props = schema["properties"].as_object().unwrap();
    let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["description", "prompt", "resume", "subagent_type"]);
    assert_eq!(
        props["description"],
        json!({"type": "string", "description": "A short (3-5 word) description of the task."})
    );
    assert_eq!(
        props["subagent_type"],
        json!({"type": "string", "description": "The type of specialized agent to use for this task."})
    );
    assert_eq!(
        props["resume"],
        json!({"type": "string", "description": "Task ID of the task to resume from."})
    );
}

#[test]
fn action_defaults_to_the_general_purpose_agent_and_round_trips() {
    let parsed: TaskAction = tool_io::parse(
        json!({"prompt": "look around"}),
        &tool_io::parameters::<TaskAction>(),
    )
    .unwrap();
    assert_eq!(parsed.subagent_type, "general-purpose");
    let wire = serde_json::to_value(Action::Task(parsed)).unwrap();
    assert_eq!(
        wire,
        json!({"prompt": "look around", "subagent_type": "general-purpose", "kind": "TaskAction"})
    );
    let back: Action = serde_json::from_value(wire).unwrap();
    assert!(matches!(back, Action::Task(_)));
}

#[test]
fn observation_reads_like_upstream_for_the_model() {
    let wire = json!({
        "content": [{"type": "text", "text": "all done", "cache_prompt": false}],
        "is_error": false,
        "task_id": "abc",
        "subagent": "general-purpose",
        "status": "completed",
        "kind": "TaskObservation"
    });
    let obs: Observation = serde_json::from_value(wire.clone()).unwrap();
    let Observation::Task(task) = &obs else {
        panic!("not a task observation: {obs:?}")
    };
    assert_eq!(task.task_id, "abc");
    assert_eq!(serde_json::to_value(&obs).unwrap(), wire);
    let texts: Vec<String> = obs
        .content()
        .iter()
        .filter_map(|c| c.as_text().map(str::to_owned))
        .collect();
    assert_eq!(
        texts,
        [
            "Task ID: abc\nSubagent: general-purpose\nStatus: completed",
            "all done"
        ]
    );

    let failed: Observation = TaskObservation::failure("boom".into()).into();
    assert!(failed.is_error());
    let text: Vec<Value> = failed
        .content()
        .iter()
        .map(|c| serde_json::to_value(c).unwrap()["text"].clone())
        .collect();
    assert_eq!(
        text,
        [
            json!("Task ID: unknown\nSubagent: general-purpose\nStatus: error"),
            json!("[An error occurred during execution.]\n"),
            json!("boom")
        ]
    );
}
