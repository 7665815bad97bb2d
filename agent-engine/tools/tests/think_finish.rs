//! `think` and `finish`: the texts the model reads back and their argument errors.

use serde_json::json;
use tandem_sdk::{Masker, Tool, ToolContext};
use tandem_tools::{FinishTool, ThinkTool};
use tokio_util::sync::CancellationToken;

fn ctx() -> ToolContext {
    ToolContext {
        cancel: CancellationToken::new(),
        working_dir: std::env::temp_dir(),
        conversation_dir: None,
        env: Default::default(),
        masker: Masker::default(),
    }
}

#[tokio::test]
async fn think_logs_the_thought() {
    let tool = ThinkTool::new();
    let action = tool
        .parse_action(json!({"thought": "I will plan, run a command, and write a file."}))
        .unwrap();
    let obs = serde_json::to_value(tool.execute(&action, ctx()).await).unwrap();
    assert_eq!(
        obs,
        json!({
            "content": [{"cache_prompt": false, "type": "text", "text": "Your thought has been logged."}],
            "is_error": false,
            "kind": "ThinkObservation"
        })
    );
    assert_eq!(
        tool.parse_action(json!({})).unwrap_err().to_string(),
        "missing required field `thought`"
    );
    assert!(!tool.definition().asks_security_risk);
}

#[tokio::test]
async fn finish_echoes_the_message() {
    let tool = FinishTool::new();
    let action = tool.parse_action(json!({"message": "All done."})).unwrap();
    let obs = serde_json::to_value(tool.execute(&action, ctx()).await).unwrap();
    assert_eq!(
        obs,
        json!({
            "content": [{"cache_prompt": false, "type": "text", "text": "All done."}],
            "is_error": false,
            "kind": "FinishObservation"
        })
    );
    assert_eq!(
        tool.parse_action(json!({"message": 1}))
            .unwrap_err()
            .to_string(),
        "field `message` must be a string, got a number"
    );
    assert!(!tool.definition().asks_security_risk);
}

#[tokio::test]
async fn a_tool_given_another_tools_action_reports_an_error() {
    let think = ThinkTool::new();
    let finish = FinishTool::new();
    let action = finish.parse_action(json!({"message": "m"})).unwrap();
    assert!(think.execute(&action, ctx()).await.is_error());
}
