//! Sub-agents on the server: a `task_tool_set` agent's tasks are conversations of the server,
//! linked both ways (`parent_conversation_id`, `sub_conversation_ids`), readable and pausable
//! through the usual routes, and their outcome reaches the parent.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tandem_testkit::{Responder, ScriptedLlmServer, Step, ToolCallSpec};

use crate::harness::TestServer;

fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn texts(request: &Value, role: &str) -> Vec<String> {
    request["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == role)
        .map(text_of)
        .collect()
}

fn is_parent(request: &Value) -> bool {
    request["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "task"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_are_child_conversations_listed_openable_and_pausable() {
    let responder: Responder = Arc::new(|request: &Value, index| {
        if is_parent(request) {
            return if texts(request, "tool").is_empty() {
                Step::tool_calls(vec![
                    ToolCallSpec::new(
                        "task",
                        json!({"description": "quick", "prompt": "answer quickly"}),
                    ),
                    ToolCallSpec::new(
                        "task",
                        json!({"description": "slow", "prompt": "keep thinking"}),
                    ),
                ])
            } else {
                Step::text("both reported")
            };
        }
        if texts(request, "user").join(" ").contains("answer quickly") {
            Step::text("quick answer")
        } else {
            // Thinks step after step until someone pauses it.
            Step::tool_call("think", json!({"thought": format!("step {index}")}))
        }
    });
    let llm = ScriptedLlmServer::with_responder(responder);
    llm.set_no_tools_text("A short title");
    let server = TestServer::start().await;
    let mut agent = TestServer::agent(&llm);
    agent["tools"] = json!([{"name": "task_tool_set", "params": {}}]);
    let (status, info) = server
        .post(
            "/api/conversations",
            json!({"agent": agent, "workspace": {"kind": "LocalWorkspace", "working_dir": server.workspace.to_string_lossy()}}),
        )
        .await;
    assert_eq!(status, 201, "{info}");
    let parent = info["id"].as_str().unwrap().to_owned();
    server.message(&parent, "go", true).await;

    let mut children = Vec::new();
    for _ in 0..400 {
        let (_, info) = server.get(&format!("/api/conversations/{parent}")).await;
        children = info["sub_conversation_ids"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if children.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(children.len(), 2, "the parent lists its two children");
    let mut slow = None;
    for child in &children {
        let id = child.as_str().unwrap();
        let (status, info) = server.get(&format!("/api/conversations/{id}")).await;
        assert_eq!(status, 200, "{info}");
        assert_eq!(info["parent_conversation_id"], json!(parent));
        // The child runs on the parent's LLM with the parent's tools less `task`.
        assert_eq!(info["agent"]["llm"]["model"], "openai/fake");
        assert_eq!(info["agent"]["tools"], json!([]));
        if info["title"] == "slow" {
            slow = Some(id.to_owned());
        } else {
            assert_eq!(info["title"], "quick");
            server.wait_status(id, &["finished"]).await;
        }
    }
    let slow = slow.expect("a child titled slow");
    let (status, body) = server
        .post(&format!("/api/conversations/{slow}/pause"), json!({}))
        .await;
    assert_eq!(status, 200, "{body}");
    server.wait_status(&slow, &["paused"]).await;
    server.wait_status(&parent, &["finished"]).await;

    let observations: Vec<Value> = server
        .events(&parent)
        .await
        .into_iter()
        .filter(|e| e["kind"] == "ObservationEvent")
        .map(|e| e["observation"].clone())
        .collect();
    assert_eq!(observations.len(), 2, "{observations:?}");
    assert_eq!(observations[0]["kind"], "TaskObservation");
    assert_eq!(observations[0]["status"], "completed");
    assert_eq!(observations[0]["content"][0]["text"], "quick answer");
    assert_eq!(observations[1]["status"], "error");
    assert_eq!(observations[1]["is_error"], true);
    assert_eq!(observations[1]["task_id"], json!(slow));
    let why = observations[1]["content"][0]["text"].as_str().unwrap();
    assert!(why.contains("paused"), "{why}");

    // Both children are conversations of the server's list too.
    let (_, page) = server.get("/api/conversations/search?limit=100").await;
    let listed: Vec<&Value> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["parent_conversation_id"] == json!(parent))
        .collect();
    assert_eq!(listed.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_children_route_starts_a_linked_child() {
    let llm = crate::harness::llm(vec![Step::text("child done")]);
    let server = TestServer::start().await;
    let parent = server.create(&llm, json!({})).await;
    let (status, body) = server
        .post(
            &format!("/api/conversations/{parent}/children"),
            json!({"task": "count the files", "title": "counting"}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["parent_conversation_id"], json!(parent));
    assert_eq!(body["title"], "counting");
    assert_eq!(body["isolation"], "shared");
    let child = body["conversation_id"].as_str().unwrap().to_owned();
    server.wait_status(&child, &["finished"]).await;
    let (_, info) = server.get(&format!("/api/conversations/{child}")).await;
    assert_eq!(info["parent_conversation_id"], json!(parent));
    let (_, info) = server.get(&format!("/api/conversations/{parent}")).await;
    assert_eq!(info["sub_conversation_ids"], json!([child]));

    let missing = uuid::Uuid::new_v4();
    let (status, _) = server
        .post(
            &format!("/api/conversations/{missing}/children"),
            json!({"task": "x"}),
        )
        .await;
    assert_eq!(status, 404);
    let (status, body) = server
        .post(
            &format!("/api/conversations/{parent}/children"),
            json!({"task": " "}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["detail"][0]["loc"], json!(["body", "task"]));
}
