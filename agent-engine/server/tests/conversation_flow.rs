//! The core flow over a real listener: create (201, then 200 for the same id) → WebSocket
//! (first-frame auth, full_state first) → message → run → events live, with a full_state after
//! the run; pagination and filters; 409 while running; confirmation reject/accept; pause and
//! interrupt; approve with edited arguments; resend_mode all/since; restart recovery.

use crate::harness;

use std::time::Duration;

use harness::{TestServer, is_full_state, next_json, until};
use serde_json::{Value, json};
use tandem_testkit::{Reply, Step, ToolCallSpec};

fn slow(step: Step, ms: u64) -> Step {
    match step {
        Step::Reply(mut r) => {
            r.delay_ms = ms;
            Step::Reply(r)
        }
        other => other,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn create_message_run_over_websocket() {
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "echo hello-ws"})),
        Step::tool_call("finish", json!({"message": "All done."})),
    ]);
    let t = TestServer::start().await;
    let id = t.create(&llm, json!({})).await;

    // Same id again: 200 and the same conversation.
    let again = json!({"agent": TestServer::agent(&llm), "conversation_id": id, "workspace": {"working_dir": t.workspace.to_string_lossy()}});
    let (status, info) = t.post("/api/conversations", again).await;
    assert_eq!(status, 200);
    assert_eq!(info["id"], id);
    assert_eq!(
        info["agent"]["llm"]["api_key"],
        Value::Null,
        "REST replies never show the key"
    );
    assert_eq!(
        info["agent"]["llm"]["openrouter_app_name"], "OpenHands",
        "the posted agent is echoed"
    );
    assert_eq!(info["execution_status"], "idle");

    let mut ws = t.ws(&format!("/sockets/events/{id}")).await;
    let first = next_json(&mut ws).await;
    assert!(is_full_state(&first, "idle"), "{first}");
    assert_eq!(first["value"]["agent"]["llm"]["api_key"], "**********");

    t.message(&id, "say hello", false).await;
    let (s, b) = t
        .post(&format!("/api/conversations/{id}/run"), json!({}))
        .await;
    assert_eq!(s, 200, "{b}");
    let frames = until(&mut ws, |v| is_full_state(v, "finished")).await;
    let kinds: Vec<&str> = frames.iter().map(|f| f["kind"].as_str().unwrap()).collect();
    assert!(kinds.contains(&"ObservationEvent"), "{kinds:?}");
    let status_pos = frames
        .iter()
        .position(|f| f["key"] == "execution_status" && f["value"] == "finished")
        .expect("execution_status frame");
    assert_eq!(
        status_pos,
        frames.len() - 2,
        "the full_state follows the final execution_status"
    );
    let obs = frames
        .iter()
        .find(|f| f["kind"] == "ObservationEvent" && f["tool_name"] == "terminal")
        .unwrap();
    assert!(
        obs["observation"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("hello-ws")
    );

    // REST sees the same events; pagination: next_page_id is the next page's first id.
    let all = t.events(&id).await;
    assert!(all.len() >= 8);
    let (_, p1) = t
        .get(&format!("/api/conversations/{id}/events/search?limit=3"))
        .await;
    assert_eq!(p1["items"].as_array().unwrap().len(), 3);
    let next = p1["next_page_id"].as_str().unwrap();
    assert_eq!(next, all[3]["id"]);
    let (_, p2) = t
        .get(&format!(
            "/api/conversations/{id}/events/search?limit=3&page_id={next}"
        ))
        .await;
    assert_eq!(p2["items"][0]["id"], all[3]["id"]);
    let (_, desc) = t.get(&format!("/api/conversations/{id}/events/search?kind=ActionEvent&sort_order=TIMESTAMP_DESC&limit=1")).await;
    assert_eq!(desc["items"][0]["tool_name"], "finish");
    let (_, users) = t
        .get(&format!(
            "/api/conversations/{id}/events/search?source=user&body=HELLO"
        ))
        .await;
    assert_eq!(users["items"].as_array().unwrap().len(), 1);
    let (_, count) = t
        .get(&format!("/api/conversations/{id}/events/count"))
        .await;
    assert_eq!(count.as_u64().unwrap() as usize, all.len());
    let ts = all[2]["timestamp"].as_str().unwrap();
    let (_, later) = t
        .get(&format!(
            "/api/conversations/{id}/events/count?timestamp__gte={ts}"
        ))
        .await;
    assert!(later.as_u64().unwrap() as usize <= all.len() - 2);
    let eid = all[0]["id"].as_str().unwrap();
    let (s, one) = t
        .get(&format!("/api/conversations/{id}/events/{eid}"))
        .await;
    assert_eq!((s, one["id"].as_str()), (200, Some(eid)));
    // Batch get with the ids in a GET body.
    let resp = t
        .http
        .get(t.url(&format!("/api/conversations/{id}/events")))
        .header("X-Session-API-Key", harness::KEY)
        .json(&json!([eid, "no-such-id"]))
        .send()
        .await
        .unwrap();
    let batch: Value = resp.json().await.unwrap();
    assert_eq!(batch[0]["id"], eid);
    assert_eq!(batch[1], Value::Null);
    let (_, fin) = t
        .get(&format!("/api/conversations/{id}/agent_final_response"))
        .await;
    assert_eq!(fin["response"], "All done.");

    // Conversation listing.
    let (_, search) = t.get("/api/conversations/search?limit=10").await;
    assert_eq!(search["items"][0]["id"], id);
    let (_, n) = t.get("/api/conversations/count?status=finished").await;
    assert_eq!(n, 1);
    let (_, b) = t
        .get(&format!(
            "/api/conversations?ids={id}&ids=00000000-0000-0000-0000-000000000000"
        ))
        .await;
    assert_eq!(b[0]["id"], id);
    assert_eq!(b[1], Value::Null);

    // PATCH title and tags, then DELETE.
    let (s, _) = t
        .req(
            reqwest::Method::PATCH,
            &format!("/api/conversations/{id}"),
            Some(json!({"title": "Hello", "tags": {"a": "b"}})),
        )
        .await;
    assert_eq!(s, 200);
    let (_, info) = t.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(
        (info["title"].as_str(), info["tags"]["a"].as_str()),
        (Some("Hello"), Some("b"))
    );
    let (s, _) = t
        .req(
            reqwest::Method::DELETE,
            &format!("/api/conversations/{id}"),
            None,
        )
        .await;
    assert_eq!(s, 200);
    let (s, _) = t.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(s, 404);
    assert!(llm.violations().is_empty(), "{:?}", llm.violations());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn run_while_running_is_409_and_pause_interrupt_work() {
    let llm = harness::llm(vec![
        slow(
            Step::tool_call("terminal", json!({"command": "echo slow-1"})),
            800,
        ),
        Step::tool_call("finish", json!({"message": "after pause"})),
        slow(
            Step::tool_call("terminal", json!({"command": "echo never"})),
            5000,
        ),
        Step::tool_call("finish", json!({"message": "after interrupt"})),
    ]);
    let t = TestServer::start().await;
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "go", true).await;
    let (s, b) = t
        .post(&format!("/api/conversations/{id}/run"), json!({}))
        .await;
    assert_eq!(s, 409, "{b}");
    assert_eq!(
        b["detail"],
        "Conversation already running. Wait for completion or pause first."
    );
    let (s, _) = t
        .post(&format!("/api/conversations/{id}/pause"), json!({}))
        .await;
    assert_eq!(s, 200);
    t.wait_status(&id, &["paused"]).await;
    // The in-flight step still lands; the loop then stops.
    for _ in 0..100 {
        if t.server.running().await == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (s, _) = t
        .post(&format!("/api/conversations/{id}/run"), json!({}))
        .await;
    assert_eq!(s, 200);
    t.wait_status(&id, &["finished"]).await;

    t.message(&id, "again", true).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (s, _) = t
        .post(&format!("/api/conversations/{id}/interrupt"), json!({}))
        .await;
    assert_eq!(s, 200);
    t.wait_status(&id, &["paused"]).await;
    let kinds: Vec<String> = t
        .events(&id)
        .await
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        kinds.contains(&"PauseEvent".to_owned()) && kinds.contains(&"InterruptEvent".to_owned()),
        "{kinds:?}"
    );
    assert!(
        !t.events(&id)
            .await
            .iter()
            .any(|e| e["action"]["command"] == "echo never"),
        "the interrupted reply never becomes an event"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn confirmation_reject_then_accept() {
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "echo rejected-command"})),
        Step::tool_call("terminal", json!({"command": "echo accepted-command"})),
        Step::tool_call("finish", json!({"message": "Confirmed flow done."})),
    ]);
    let t = TestServer::start().await;
    let id = t.create(&llm, json!({})).await;
    let (s, _) = t
        .post(
            &format!("/api/conversations/{id}/confirmation_policy"),
            json!({"policy": {"kind": "AlwaysConfirm"}}),
        )
        .await;
    assert_eq!(s, 200);
    t.message(&id, "run things", true).await;
    t.wait_status(&id, &["waiting_for_confirmation"]).await;
    let (s, _) = t
        .post(
            &format!("/api/conversations/{id}/events/respond_to_confirmation"),
            json!({"accept": false, "reason": "Not this one"}),
        )
        .await;
    assert_eq!(s, 200);
    t.wait_status(&id, &["idle"]).await;
    let events = t.events(&id).await;
    let reject = events
        .iter()
        .find(|e| e["kind"] == "UserRejectObservation")
        .unwrap();
    assert_eq!(reject["rejection_reason"], "Not this one");
    assert!(
        !events
            .iter()
            .any(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "terminal"),
        "a rejected action never runs"
    );

    let (s, _) = t
        .post(&format!("/api/conversations/{id}/run"), json!({}))
        .await;
    assert_eq!(s, 200);
    t.wait_status(&id, &["waiting_for_confirmation"]).await;
    let (s, _) = t
        .post(
            &format!("/api/conversations/{id}/events/respond_to_confirmation"),
            json!({"accept": true}),
        )
        .await;
    assert_eq!(s, 200);
    t.wait_status(&id, &["finished"]).await;
    let events = t.events(&id).await;
    let obs = events
        .iter()
        .find(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "terminal")
        .unwrap();
    assert!(
        obs["observation"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("accepted-command")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn approve_edited_runs_the_person_s_command_and_answers_each_failure() {
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "touch original.txt"})),
        Step::tool_call("finish", json!({"message": "Edited flow done."})),
    ]);
    let t = TestServer::start().await;
    // Clients learn that the route exists from the server's capabilities.
    let (_, info) = t.get("/server_info").await;
    assert!(
        info["capabilities"]
            .as_array()
            .unwrap()
            .contains(&json!("tandem_approve_edited_v1")),
        "{info}"
    );
    let id = t.create(&llm, json!({})).await;
    let (s, _) = t
        .post(
            &format!("/api/conversations/{id}/confirmation_policy"),
            json!({"policy": {"kind": "AlwaysConfirm"}}),
        )
        .await;
    assert_eq!(s, 200);
    t.message(&id, "make a file", true).await;
    t.wait_status(&id, &["waiting_for_confirmation"]).await;
    let action = t
        .events(&id)
        .await
        .into_iter()
        .find(|e| e["kind"] == "ActionEvent")
        .unwrap();
    let action_id = action["id"].as_str().unwrap().to_owned();
    let path = format!("/api/conversations/{id}/events/approve_edited");
    let edited = json!({"action_id": action_id, "arguments": {"command": "touch edited.txt"}});

    // The session key is required.
    let status = t
        .http
        .post(t.url(&path))
        .json(&edited)
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, 401);
    // Unknown conversation.
    let (s, _) = t
        .post(
            "/api/conversations/00000000-0000-4000-8000-000000000000/events/approve_edited",
            edited.clone(),
        )
        .await;
    assert_eq!(s, 404);
    // No such pending action.
    let (s, body) = t
        .post(
            &path,
            json!({"action_id": "not-an-action", "arguments": {"command": "true"}}),
        )
        .await;
    assert_eq!(s, 409, "{body}");
    assert_eq!(body["code"], "conflict");
    // Arguments the terminal rejects: 422 at body.arguments, naming the field; nothing runs.
    let (s, body) = t
        .post(
            &path,
            json!({"action_id": action_id, "arguments": {"command": 5}}),
        )
        .await;
    assert_eq!(s, 422, "{body}");
    assert_eq!(body["detail"][0]["loc"], json!(["body", "arguments"]));
    assert!(
        body["detail"][0]["msg"]
            .as_str()
            .unwrap()
            .contains("`command`"),
        "{body}"
    );
    // A body without the action id.
    let (s, body) = t
        .post(&path, json!({"arguments": {"command": "true"}}))
        .await;
    assert_eq!(s, 422, "{body}");
    assert_eq!(t.status(&id).await, "waiting_for_confirmation");

    let (s, body) = t.post(&path, edited.clone()).await;
    assert_eq!(s, 200, "{body}");
    assert_eq!(body["success"], true);
    assert!(body["security_risk"].is_string(), "{body}");
    t.wait_status(&id, &["finished"]).await;
    assert!(t.workspace.join("edited.txt").exists());
    assert!(
        !t.workspace.join("original.txt").exists(),
        "the original command never ran"
    );
    let events = t.events(&id).await;
    let obs = events
        .iter()
        .find(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "terminal")
        .unwrap();
    assert_eq!(obs["action_id"], action_id.as_str());
    assert_eq!(obs["tool_call_id"], action["tool_call_id"]);
    let text = obs["observation"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "[The person edited this action before it ran; it ran as: $ touch edited.txt]"
        ),
        "{text}"
    );
    // It ran once: it is not pending any more.
    let (s, _) = t.post(&path, edited).await;
    assert_eq!(s, 409);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn resend_all_and_since_and_client_message_frames() {
    let llm = harness::llm(vec![
        Step::Reply(Reply::text("first answer")),
        Step::Reply(Reply::text("second answer")),
    ]);
    let t = TestServer::start().await;
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "hi", true).await;
    t.wait_status(&id, &["finished"]).await;
    let stored = t.events(&id).await;

    let mut ws = t.ws(&format!("/sockets/events/{id}?resend_mode=all")).await;
    let first = next_json(&mut ws).await;
    assert!(is_full_state(&first, "finished"));
    // The replay: every stored event, in order. A `full_state` may come between them: the
    // one sent after the first run can reach a socket that subscribed while it was on its way.
    for e in &stored {
        let f = until(&mut ws, |v| v["key"] != "full_state").await;
        assert_eq!(f.last().unwrap()["id"], e["id"], "the replay in order");
    }
    // A garbage frame: an error frame, the socket stays up.
    use futures::SinkExt;
    ws.send(tokio_tungstenite::tungstenite::Message::Text(
        "{not json".into(),
    ))
    .await
    .unwrap();
    let frames = until(&mut ws, |v| v["kind"] == "ServerErrorEvent").await;
    assert!(
        frames[..frames.len() - 1]
            .iter()
            .all(|f| f["kind"] == "ConversationStateUpdateEvent"),
        "nothing but state before the error frame: {frames:?}"
    );
    // A Message frame runs the agent.
    ws.send(tokio_tungstenite::tungstenite::Message::Text(
        json!({"role": "user", "content": [{"type": "text", "text": "more"}]})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    until(&mut ws, |f| {
        f["kind"] == "MessageEvent" && f["llm_message"]["content"][0]["text"] == "second answer"
    })
    .await;
    until(&mut ws, |v| is_full_state(v, "finished")).await;

    let since = stored.last().unwrap()["timestamp"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut ws2 = t
        .ws(&format!(
            "/sockets/events/{id}?resend_mode=since&after_timestamp={since}"
        ))
        .await;
    let _full = next_json(&mut ws2).await;
    let f = next_json(&mut ws2).await;
    assert_eq!(
        f["id"],
        stored.last().unwrap()["id"],
        "since replays from the timestamp on"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn restart_recovers_a_conversation_persisted_as_running() {
    let llm = harness::llm(vec![
        Step::Reply(Reply::text("one")),
        Step::Reply(Reply::text("resumed")),
    ]);
    let t = TestServer::start().await;
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "hi", true).await;
    t.wait_status(&id, &["finished"]).await;
    let home = t.stop().await;
    // Simulate a crash mid-run: the state and the log say running.
    let dir = home.path().join("conversations").join(id.replace('-', ""));
    let path = dir.join("base_state.json");
    let mut state: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    state["execution_status"] = json!("running");
    std::fs::write(&path, serde_json::to_vec(&state).unwrap()).unwrap();
    let events_dir = dir.join("events");
    let n = std::fs::read_dir(&events_dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("event-")
        })
        .count();
    let eid = "0b6f6c1e-1111-4222-8333-944455556666";
    let running = json!({"id": eid, "timestamp": "2026-01-01T00:00:00.000000", "source": "environment", "key": "execution_status", "value": "running", "kind": "ConversationStateUpdateEvent"});
    std::fs::write(
        events_dir.join(format!("event-{n:05}-{eid}.json")),
        running.to_string(),
    )
    .unwrap();

    let t = TestServer::start_in(home, |_| {}).await;
    assert_eq!(
        t.status(&id).await,
        "error",
        "recovered at startup, before any access"
    );
    let events = t.events(&id).await;
    assert!(
        events.iter().any(|e| e["kind"] == "ConversationErrorEvent"),
        "the restart is recorded"
    );
    t.message(&id, "continue", false).await;
    let (s, b) = t
        .post(&format!("/api/conversations/{id}/run"), json!({}))
        .await;
    assert_eq!(s, 200, "{b}");
    t.wait_status(&id, &["finished"]).await;
    let _ = ToolCallSpec::new("x", json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn idle_conversations_leave_memory_and_come_back() {
    let llm = harness::llm(vec![
        Step::Reply(Reply::text("one")),
        Step::Reply(Reply::text("two")),
    ]);
    let t = TestServer::start_with(|c| c.idle_ttl = Duration::from_millis(200)).await;
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "hi", true).await;
    t.wait_status(&id, &["finished"]).await;
    let before = t.events(&id).await;
    // Search serves each event exactly as it is stored on disk.
    assert_eq!(before, events_on_disk(&t, &id));
    tokio::time::sleep(Duration::from_millis(900)).await;
    // Reopened on access, with every event (the same JSON), and it still runs.
    assert_eq!(t.events(&id).await, before);
    t.message(&id, "again", true).await;
    t.wait_status(&id, &["finished"]).await;
}

/// Every event file of conversation `id`, in log order, as JSON values.
fn events_on_disk(t: &TestServer, id: &str) -> Vec<Value> {
    let dir = std::fs::read_dir(t.home.path().join("conversations"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().replace('-', "") == id.replace('-', ""))
        .expect("the conversation's folder")
        .join("events");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("event-") && name.ends_with(".json")
        })
        .collect();
    files.sort();
    files
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap())
        .collect()
}
