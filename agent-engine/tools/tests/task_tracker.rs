//! `task_tracker`: plan/view texts, validation, and `TASKS.json` persistence across instances.

use std::path::Path;

use serde_json::{Value, json};
use tandem_sdk::{Masker, Tool, ToolContext};
use tandem_tools::TaskTrackerTool;
use tokio_util::sync::CancellationToken;

fn ctx(conversation_dir: Option<&Path>) -> ToolContext {
    ToolContext {
        cancel: CancellationToken::new(),
        working_dir: std::env::temp_dir(),
        conversation_dir: conversation_dir.map(Path::to_path_buf),
        env: Default::default(),
        masker: Masker::default(),
    }
}

async fn call(tool: &TaskTrackerTool, dir: Option<&Path>, args: Value) -> Value {
    let action = tool.parse_action(args).unwrap();
    serde_json::to_value(tool.execute(&action, ctx(dir)).await).unwrap()
}

const FIXTURE_TASKS: &str = include_str!(
    "../../../tests/fixtures/upstream/conversations/53b0201b238848c28c0912bd065f719e/TASKS.json"
);

#[tokio::test]
async fn plan_matches_the_upstream_observation_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TaskTrackerTool::new();
    let obs = call(
        &tool,
        Some(dir.path()),
        json!({"command": "plan", "task_list": [{"title": "Run echo", "status": "in_progress"}, {"title": "Write hello.txt", "status": "todo"}]}),
    )
    .await;
    assert_eq!(
        obs,
        json!({
            "content": [{"cache_prompt": false, "type": "text", "text": "Task list has been updated with 2 item(s)."}],
            "is_error": false,
            "command": "plan",
            "task_list": [
                {"title": "Run echo", "notes": "", "status": "in_progress"},
                {"title": "Write hello.txt", "notes": "", "status": "todo"}
            ],
            "kind": "TaskTrackerObservation"
        })
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("TASKS.json")).unwrap(),
        FIXTURE_TASKS
    );
}

#[tokio::test]
async fn the_list_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("TASKS.json"), FIXTURE_TASKS).unwrap();
    let fresh = TaskTrackerTool::new();
    let obs = call(&fresh, Some(dir.path()), json!({"command": "view"})).await;
    assert_eq!(obs["is_error"], false);
    assert_eq!(
        obs["content"][0]["text"],
        "# Task List\n\n1. 🔄 Run echo\n\n2. ⏳ Write hello.txt"
    );
    assert_eq!(obs["task_list"][1]["title"], "Write hello.txt");

    call(&fresh, Some(dir.path()), json!({"command": "plan", "task_list": [{"title": "Ship", "notes": "tag v1", "status": "done"}]})).await;
    let another = TaskTrackerTool::new();
    let obs = call(&another, Some(dir.path()), json!({})).await;
    assert_eq!(obs["command"], "view");
    assert_eq!(
        obs["content"][0]["text"],
        "# Task List\n\n1. ✅ Ship\n   tag v1"
    );
}

#[tokio::test]
async fn view_of_an_empty_list_and_in_memory_lists() {
    let tool = TaskTrackerTool::new();
    let obs = call(&tool, None, json!({"command": "view"})).await;
    assert_eq!(
        obs["content"][0]["text"],
        "No task list found. Use the \"plan\" command to create one."
    );
    assert_eq!(obs["task_list"], json!([]));
    call(
        &tool,
        None,
        json!({"command": "plan", "task_list": [{"title": "A"}]}),
    )
    .await;
    let obs = call(&tool, None, json!({"command": "view"})).await;
    assert_eq!(obs["content"][0]["text"], "# Task List\n\n1. ⏳ A");
}

#[tokio::test]
async fn a_corrupt_file_reads_as_empty() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("TASKS.json"), "{not json").unwrap();
    let obs = call(
        &TaskTrackerTool::new(),
        Some(dir.path()),
        json!({"command": "view"}),
    )
    .await;
    assert_eq!(obs["is_error"], false);
    assert_eq!(obs["task_list"], json!([]));
}

#[tokio::test]
async fn invalid_items_in_a_typed_action_are_reported_not_saved() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TaskTrackerTool::new();
    let action = tandem_protocol::Action::TaskTracker(tandem_protocol::TaskTrackerAction {
        command: "plan".into(),
        task_list: vec![tandem_protocol::TaskItem {
            title: "x".into(),
            notes: String::new(),
            status: "blocked".into(),
        }],
        extra: Default::default(),
    });
    let obs = serde_json::to_value(tool.execute(&action, ctx(Some(dir.path()))).await).unwrap();
    assert_eq!(obs["is_error"], true);
    assert_eq!(
        obs["content"][0]["text"],
        "Task list not updated: `task_list[0].status` must be one of todo, in_progress, done, got `blocked`."
    );
    assert!(!dir.path().join("TASKS.json").exists());
}

#[test]
fn parse_action_names_the_bad_field() {
    let tool = TaskTrackerTool::new();
    let err = |args: Value| tool.parse_action(args).unwrap_err().to_string();
    assert_eq!(
        err(json!({"command": "list"})),
        "field `command` must be one of view, plan, got `list`"
    );
    assert_eq!(
        err(json!({"command": "plan", "task_list": {}})),
        "field `task_list` must be an array, got an object"
    );
    assert_eq!(
        err(json!({"command": "plan", "task_list": ["x"]})),
        "field `task_list[0]` must be an object, got a string"
    );
    assert_eq!(
        err(json!({"command": "plan", "task_list": [{"notes": "n"}]})),
        "missing required field `task_list[0].title`"
    );
    assert_eq!(
        err(json!({"command": "plan", "task_list": [{"title": "  "}]})),
        "field `task_list[0].title` must not be empty"
    );
    assert_eq!(
        err(
            json!({"command": "plan", "task_list": [{"title": "a"}, {"title": "b", "status": "blocked"}]})
        ),
        "field `task_list[1].status` must be one of todo, in_progress, done, got `blocked`"
    );
    assert_eq!(
        err(json!({"command": "plan", "task_list": [{"title": 5}]})),
        "field `task_list[0].title` must be a string, got a number"
    );
}
