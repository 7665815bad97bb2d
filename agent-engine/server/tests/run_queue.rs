//! Runs beyond `max_concurrent_runs` wait their turn instead of being refused, and a
//! conversation's budget pauses its run: over REST, as a client sees them.

use crate::harness;

use std::time::Duration;

use harness::TestServer;
use serde_json::{Value, json};
use tandem_testkit::{Reply, Step, ToolCallSpec};

/// Waits (polling) until `ok` holds.
async fn until(what: &str, mut ok: impl AsyncFnMut() -> bool) {
    for _ in 0..1200 {
        if ok().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

/// 20 conversations started together on a server running 10 at once: none is refused, 10
/// wait their turn (the state says how many are ahead), none runs twice, all finish.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_runs_started_together_queue_and_all_finish() {
    let t = TestServer::start_with(|c| c.max_concurrent_runs = 10).await;
    let release = t.workspace.join("release");
    // Each run's one step waits for the release file in the real shell, then finishes: ten
    // hold the slots until the test lets them go.
    let wait = format!(
        "while [ ! -f {} ]; do sleep 0.05; done; echo released",
        release.display()
    );
    let step = || {
        Step::Reply(Reply::tool_calls(vec![
            ToolCallSpec::new("terminal", json!({"command": wait})),
            ToolCallSpec::new("finish", json!({"message": "done"})),
        ]))
    };
    let llm = harness::llm((0..20).map(|_| step()).collect());
    let agent = TestServer::agent(&llm);
    let starts = (0..20).map(|i| {
        let body = json!({
            "agent": agent,
            "workspace": {"kind": "LocalWorkspace", "working_dir": t.workspace.to_string_lossy()},
            "initial_message": {"role": "user", "content": [{"type": "text", "text": format!("run {i}")}], "run": true},
        });
        t.post("/api/conversations", body)
    });
    let mut ids = Vec::new();
    for (status, info) in futures::future::join_all(starts).await {
        assert_eq!(status, 201, "no run is refused: {info}");
        ids.push(info["id"].as_str().unwrap().to_owned());
    }
    until("10 running and 10 waiting", async || {
        t.server.run_queue() == (10, 10)
    })
    .await;

    // The waiting ones say where they stand: 0 to 9 ahead, each once.
    let mut ahead = Vec::new();
    let mut waiting = None;
    for id in &ids {
        let (_, info) = t.get(&format!("/api/conversations/{id}")).await;
        assert_eq!(info["execution_status"], "running", "{info}");
        if let Some(n) = info["queued_ahead"].as_u64() {
            ahead.push(n);
            waiting = Some(id.clone());
        }
    }
    ahead.sort_unstable();
    assert_eq!(ahead, (0..10).collect::<Vec<u64>>());
    // A waiting run is running as far as a client knows: it is not started twice.
    let waiting = waiting.unwrap();
    let (s, body) = t
        .post(&format!("/api/conversations/{waiting}/run"), json!({}))
        .await;
    assert_eq!(s, 409, "{body}");

    std::fs::write(&release, "").unwrap();
    for id in &ids {
        t.wait_status(id, &["finished"]).await;
    }
    until("every slot free", async || t.server.run_queue() == (0, 0)).await;
    for id in &ids {
        let (_, info) = t.get(&format!("/api/conversations/{id}")).await;
        assert!(info.get("queued_ahead").is_none(), "{info}");
        let events = t.events(id).await;
        let commands = events
            .iter()
            .filter(|e| e["kind"] == "ActionEvent" && e["tool_name"] == "terminal")
            .count();
        assert_eq!(commands, 1, "each ran its step once");
    }
    let agent_calls = llm
        .requests()
        .iter()
        .filter(|r| r["tools"].as_array().is_some_and(|t| !t.is_empty()))
        .count();
    assert_eq!(agent_calls, 20, "one agent step each (titles aside)");
}

/// A budget given at creation pauses the run when reached (not an error); the state says what
/// was spent; a run is refused (409) until the budget is raised over REST; bad budgets get 422
/// naming the field.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_budget_pauses_the_run_and_raising_it_resumes() {
    let t = TestServer::start().await;
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "echo one"})),
        Step::tool_call("terminal", json!({"command": "echo two"})),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let agent = TestServer::agent(&llm);

    // Bad budgets are refused before anything is made, naming the field.
    for (budget, field) in [
        (json!({"max_cost": 0}), "max_cost"),
        (json!({"max_cost": -2.5}), "max_cost"),
        (json!({"max_tokens": 0}), "max_tokens"),
    ] {
        let (s, body) = t
            .post(
                "/api/conversations",
                json!({"agent": agent, "budget": budget}),
            )
            .await;
        assert_eq!(s, 422, "{body}");
        assert_eq!(
            body["detail"][0]["loc"],
            json!(["body", "budget", field]),
            "{body}"
        );
        assert!(
            body["detail"][0]["msg"].as_str().unwrap().contains(field),
            "{body}"
        );
    }
    let (s, body) = t
        .post(
            "/api/conversations",
            json!({"agent": agent, "budget": {"max_tokens": -1}}),
        )
        .await;
    assert_eq!(s, 422, "{body}");
    assert_eq!(
        body["detail"][0]["loc"],
        json!(["body", "budget"]),
        "{body}"
    );
    let (_, list) = t.get("/api/conversations/search").await;
    assert_eq!(list["items"], json!([]), "nothing was made");

    // One step's tokens reach a budget of 1 token.
    let id = t.create(&llm, json!({"budget": {"max_tokens": 1}})).await;
    let (s, budget) = t.get(&format!("/api/conversations/{id}/budget")).await;
    assert_eq!((s, budget), (200, json!({"max_tokens": 1})));
    t.message(&id, "go", true).await;
    t.wait_status(&id, &["paused"]).await;
    let (_, state) = t.get(&format!("/api/conversations/{id}")).await;
    let events = t.events(&id).await;
    let reached: Vec<&Value> = events
        .iter()
        .filter(|e| e["key"] == "budget_reached")
        .map(|e| &e["value"])
        .collect();
    assert_eq!(reached.len(), 1, "{events:?}");
    assert_eq!(reached[0]["limit"], "max_tokens");
    assert!(reached[0]["spent_tokens"].as_u64().unwrap() > 1);
    assert!(
        !events.iter().any(|e| e["kind"] == "ConversationErrorEvent"),
        "a budget is no error: {state}"
    );
    let (s, body) = t
        .post(&format!("/api/conversations/{id}/run"), json!({}))
        .await;
    assert_eq!(s, 409, "{body}");
    assert!(
        body["detail"].as_str().unwrap().contains("max_tokens"),
        "{body}"
    );

    for (budget, field) in [
        (json!({"max_tokens": 0}), "max_tokens"),
        (json!({"max_cost": -1}), "max_cost"),
    ] {
        let (s, body) = t
            .req(
                reqwest::Method::PUT,
                &format!("/api/conversations/{id}/budget"),
                Some(budget),
            )
            .await;
        assert_eq!(s, 422, "{body}");
        assert_eq!(body["detail"][0]["loc"], json!(["body", field]), "{body}");
    }
    let (s, body) = t
        .req(
            reqwest::Method::PUT,
            &format!("/api/conversations/{id}/budget"),
            Some(json!({"max_tokens": 1_000_000, "max_cost": 5})),
        )
        .await;
    assert_eq!(
        (s, body),
        (200, json!({"max_tokens": 1_000_000, "max_cost": 5.0}))
    );
    let (s, body) = t
        .post(&format!("/api/conversations/{id}/run"), json!({}))
        .await;
    assert_eq!(s, 200, "{body}");
    t.wait_status(&id, &["finished"]).await;
    let events = t.events(&id).await;
    assert_eq!(
        events
            .iter()
            .filter(|e| e["kind"] == "ActionEvent" && e["tool_name"] == "terminal")
            .count(),
        2,
        "it went on where it paused"
    );
}
