//! The demo model driven through `OpenAiChat` as the agent loop would: every tool call is
//! answered, the tour ends with `finish`, and the server sees no invariant violation. With no
//! browser and no `task` tool the tour neither browses nor delegates.

use serde_json::json;
use tandem_llm::{Llm, LlmRequest, OpenAiChat};
use tandem_protocol::{Content, Message};
use tandem_testkit::{ScriptedLlmServer, demo_responder};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn demo_tour_through_the_client() {
    let dir = tempfile::tempdir().unwrap();
    let server = ScriptedLlmServer::with_responder(demo_responder());
    let llm = OpenAiChat::new(server.llm_config("openai/tandem-demo")).unwrap();
    let tools: Vec<_> = ["terminal", "file_editor", "task_tracker", "finish"]
        .iter()
        .map(|name| json!({"type": "function", "function": {"name": name, "parameters": {}}}))
        .collect();
    let mut messages = vec![
        Message::system(format!(
            "You are a demo.\n* Workspace: `{}`",
            dir.path().display()
        )),
        Message::user("write some notes"),
    ];
    let mut names = Vec::new();
    for _ in 0..10 {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let request = LlmRequest {
            messages: messages.clone(),
            tools: tools.clone(),
            prompt_cache_key: None,
            on_delta: Some(tx),
            on_retry: None,
        };
        let response = llm
            .completion(request, CancellationToken::new())
            .await
            .unwrap();
        let calls = response.message.tool_calls.clone().unwrap_or_default();
        messages.push(response.message);
        for call in &calls {
            names.push(call.name.clone());
            messages.push(Message::tool(
                &call.id,
                &call.name,
                vec![Content::text("ok")],
            ));
        }
        if calls.iter().any(|c| c.name == "finish") {
            break;
        }
    }
    assert_eq!(
        names,
        [
            "task_tracker",
            "terminal",
            "terminal",
            "file_editor",
            "file_editor",
            "terminal",
            "task_tracker",
            "finish"
        ]
    );
    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(server.request_count(), 8);
}
