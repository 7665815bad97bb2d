//! Tools a program embedding the server adds: named in an agent spec sent over the network like
//! any built-in, run through the same loop, masked and refused the same way.

use std::sync::Arc;

use serde_json::{Value, json};
use tandem_sdk::{FnTool, Tool};
use tandem_testkit::Step;

use crate::harness::{self, TestServer};

/// `shout`: upper-cases its text; fails on `boom`.
fn shout() -> FnTool {
    FnTool::new(
        "shout",
        "Upper-case a text.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        |args, _ctx| async move {
            let text = args.get("text").and_then(Value::as_str).unwrap_or_default();
            if text == "boom" {
                return Err("shout cannot shout boom".to_owned());
            }
            Ok(text.to_uppercase())
        },
    )
    .read_only()
}

async fn server() -> TestServer {
    TestServer::start_with(|c| {
        c.tools.register_tool(&["shout", "ShoutTool"], |_, _| {
            Ok(Arc::new(shout()) as Arc<dyn Tool>)
        });
    })
    .await
}

fn agent_with_shout(llm: &tandem_testkit::ScriptedLlmServer) -> Value {
    let mut agent = TestServer::agent(llm);
    agent["tools"] = json!([{"name": "terminal"}, {"name": "ShoutTool", "params": {}}]);
    agent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_spec_naming_a_registered_tool_gets_it_and_its_results_reach_the_model() {
    let llm = harness::llm(vec![
        Step::tool_call("shout", json!({"text": "quiet words sk-shh-123"})),
        Step::tool_call("shout", json!({"text": "boom"})),
        Step::tool_call("shout", json!({"loud": true})),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let t = server().await;
    let (_, tools) = t.get("/api/tools/").await;
    assert!(
        tools.as_array().unwrap().contains(&json!("shout")),
        "{tools}"
    );

    let id = t
        .create(
            &llm,
            json!({"agent": agent_with_shout(&llm), "secrets": {"SHH": "SK-SHH-123"}}),
        )
        .await;
    t.message(&id, "shout something", true).await;
    assert_eq!(t.wait_status(&id, &["finished", "error"]).await, "finished");

    let requests = llm.requests();
    let with_tools = requests
        .iter()
        .find(|r| r["tools"].is_array())
        .expect("the agent's first request offers tools");
    let names: Vec<&str> = with_tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .collect();
    assert_eq!(names, ["terminal", "shout", "finish", "think"]);

    let events = t.events(&id).await;
    let observations: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "shout")
        .collect();
    assert_eq!(observations.len(), 2, "{events:?}");
    let first = &observations[0]["observation"];
    assert_eq!(first["kind"], "ShoutObservation");
    assert_eq!(first["is_error"], false);
    let text = first["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        text, "QUIET WORDS <secret-hidden>",
        "the secret's value is masked in a custom tool's observation"
    );
    let action = events
        .iter()
        .find(|e| e["kind"] == "ActionEvent" && e["tool_name"] == "shout")
        .unwrap();
    assert_eq!(action["action"]["kind"], "ShoutAction");
    assert_eq!(action["action"]["text"], "quiet words sk-shh-123");

    let failed = &observations[1]["observation"];
    assert_eq!(failed["is_error"], true);
    assert_eq!(failed["content"][0]["text"], "shout cannot shout boom");

    let error = events
        .iter()
        .find(|e| e["kind"] == "AgentErrorEvent" && e["tool_name"] == "shout")
        .expect("a call without the required argument is an error the model sees");
    assert!(
        error["error"]
            .as_str()
            .unwrap()
            .contains("missing required argument `text`"),
        "{error}"
    );
    let last = requests
        .iter()
        .rfind(|r| r["tools"].is_array())
        .unwrap()
        .to_string();
    assert!(last.contains("QUIET WORDS"), "the result reached the model");
    assert!(!last.contains("SK-SHH-123"), "never the secret");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_unknown_tool_name_is_refused_naming_it_and_what_there_is() {
    let llm = harness::llm(vec![]);
    let t = server().await;
    let mut agent = TestServer::agent(&llm);
    agent["tools"] = json!([{"name": "terminal"}, {"name": "shoutt"}]);
    let body = json!({"agent": agent, "workspace": {"working_dir": t.workspace.to_string_lossy()}});
    let (status, err) = t.post("/api/conversations", body).await;
    assert_eq!(status, 422, "{err}");
    let detail = &err["detail"][0];
    assert_eq!(
        detail["loc"],
        json!(["body", "agent", "tools", "1", "name"])
    );
    let msg = detail["msg"].as_str().unwrap();
    assert!(msg.contains("unknown tool `shoutt`"), "{msg}");
    assert!(msg.contains("shout") && msg.contains("terminal"), "{msg}");
}
