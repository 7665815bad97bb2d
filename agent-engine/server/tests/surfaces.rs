//! Tandem's additions and the side endpoints: the PTY socket (the agent's own shell and a
//! separate one), workspace tree/file/write-conflict/diff, the SSE stream, bash, files,
//! server secrets and ask_agent (the OpenAI gateway has its own tests in `gateway.rs`).

use crate::harness;

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use harness::{KEY, TestServer, pty_until};
use serde_json::{Value, json};
use tandem_testkit::{Reply, Step};
use tokio_tungstenite::tungstenite::Message as WsMessage;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pty_socket_sees_the_agents_commands_and_types() {
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "echo agent-was-here"})),
        Step::tool_call("finish", json!({"message": "ok"})),
    ]);
    let t = TestServer::start().await;
    let id = t.create(&llm, json!({})).await;
    let mut pty = t.ws(&format!("/sockets/pty/{id}")).await;
    t.message(&id, "run it", true).await;
    pty_until(&mut pty, "agent-was-here").await;
    t.wait_status(&id, &["finished"]).await;
    pty.send(WsMessage::Text(
        json!({"type": "resize", "rows": 30, "cols": 100})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    pty.send(WsMessage::Text(
        json!({"type": "input", "data": "echo typed-$((6*7))\n"})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    pty_until(&mut pty, "typed-42").await;
    pty.send(WsMessage::Text("garbage".into())).await.unwrap();

    // A late viewer gets the scrollback; a separate shell is its own.
    let mut late = t.ws(&format!("/sockets/pty/{id}")).await;
    pty_until(&mut late, "agent-was-here").await;
    let mut own = t.ws(&format!("/sockets/pty/{id}?mode=shell")).await;
    own.send(WsMessage::Text(
        json!({"type": "input", "data": "pwd; echo own-$((1+1))\n"})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    let out = pty_until(&mut own, "own-2").await;
    assert!(!out.contains("agent-was-here"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workspace_tree_file_conflict_and_diff() {
    let llm = harness::llm(vec![Step::Reply(Reply::text("hi"))]);
    let t = TestServer::start().await;
    std::fs::write(t.workspace.join("keep.txt"), "one\ntwo\n").unwrap();
    std::fs::write(t.workspace.join("gone.txt"), "bye\n").unwrap();
    let id = t.create(&llm, json!({})).await;
    std::fs::create_dir_all(t.workspace.join("src")).unwrap();
    std::fs::write(t.workspace.join("src/new.rs"), "fn main() {}\n").unwrap();
    std::fs::remove_file(t.workspace.join("gone.txt")).unwrap();

    let (s, tree) = t
        .get(&format!("/api/conversations/{id}/workspace/tree"))
        .await;
    assert_eq!(s, 200);
    let paths: Vec<&str> = tree["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"keep.txt") && paths.contains(&"src") && paths.contains(&"src/new.rs"),
        "{paths:?}"
    );

    let (s, f) = t
        .get(&format!(
            "/api/conversations/{id}/workspace/file?path=keep.txt"
        ))
        .await;
    assert_eq!(s, 200);
    assert_eq!(
        (f["content"].as_str(), f["binary"].as_bool()),
        (Some("one\ntwo\n"), Some(false))
    );
    let mtime = f["mtime_ms"].as_u64().unwrap();
    let (s, w) = t
        .req(
            reqwest::Method::PUT,
            &format!("/api/conversations/{id}/workspace/file"),
            Some(json!({"path": "keep.txt", "content": "one\nTWO\n", "expected_mtime_ms": mtime})),
        )
        .await;
    assert_eq!(s, 200, "{w}");
    let (s, b) = t
        .req(
            reqwest::Method::PUT,
            &format!("/api/conversations/{id}/workspace/file"),
            Some(
                json!({"path": "keep.txt", "content": "stale", "expected_mtime_ms": mtime - 5000}),
            ),
        )
        .await;
    assert_eq!(s, 409, "{b}");
    std::fs::write(t.workspace.join("blob.bin"), [0u8, 1, 2, 3]).unwrap();
    let (s, f) = t
        .get(&format!(
            "/api/conversations/{id}/workspace/file?path=blob.bin"
        ))
        .await;
    assert_eq!(
        (s, f["binary"].as_bool(), f["content"].clone()),
        (200, Some(true), Value::Null)
    );
    let (s, _) = t
        .get(&format!(
            "/api/conversations/{id}/workspace/file?path=missing.txt"
        ))
        .await;
    assert_eq!(s, 404);

    let (s, d) = t
        .get(&format!("/api/conversations/{id}/workspace/diff"))
        .await;
    assert_eq!(s, 200);
    let files = d["files"].as_array().unwrap();
    let find = |p: &str| {
        files
            .iter()
            .find(|f| f["path"] == p)
            .unwrap_or_else(|| panic!("{p} not in {d}"))
    };
    assert_eq!(find("keep.txt")["status"], "modified");
    assert!(
        find("keep.txt")["diff"]
            .as_str()
            .unwrap()
            .contains("-two\n+TWO\n")
    );
    assert_eq!(find("gone.txt")["status"], "deleted");
    assert_eq!(find("src/new.rs")["status"], "added");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sse_stream_carries_the_socket_frames() {
    let llm = harness::llm(vec![Step::Reply(Reply::text("streamed answer"))]);
    let t = TestServer::start().await;
    let id = t.create(&llm, json!({})).await;
    let resp = t
        .http
        .get(t.url(&format!("/api/conversations/{id}/events/stream")))
        .header("X-Session-API-Key", KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let mut body = resp.bytes_stream();
    t.message(&id, "hello", true).await;
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let mut frames: Vec<Value> = Vec::new();
    while !frames
        .iter()
        .any(|f| f["key"] == "full_state" && f["value"]["execution_status"] == "finished")
    {
        let chunk = tokio::time::timeout_at(deadline, body.next())
            .await
            .expect("SSE frames")
            .unwrap()
            .unwrap();
        text.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = text.find("\n\n") {
            let block: String = text.drain(..end + 2).collect();
            if let Some(data) = block.lines().find_map(|l| l.strip_prefix("data: ")) {
                frames.push(serde_json::from_str(data).unwrap());
            }
        }
    }
    assert_eq!(frames[0]["key"], "full_state");
    assert!(frames.iter().any(|f| f["kind"] == "MessageEvent"
        && f["llm_message"]["content"][0]["text"] == "streamed answer"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bash_files_secrets_info_and_ask_agent() {
    let llm = harness::llm(vec![
        Step::Reply(Reply::text("done")),
        Step::Reply(Reply::text("I ran the scripted steps.")),
        Step::tool_call("terminal", json!({"command": "ls"})),
    ]);
    let t = TestServer::start().await;
    let ws = t.workspace.to_string_lossy().into_owned();
    let (s, cmd) = t
        .post(
            "/api/bash/start_bash_command",
            json!({"command": "echo hello-from-bash && pwd", "cwd": ws, "timeout": 30}),
        )
        .await;
    assert_eq!(s, 200);
    assert_eq!(cmd["kind"], "BashCommand");
    let cid = cmd["id"].as_str().unwrap();
    let mut out = Value::Null;
    for _ in 0..100 {
        let (_, page) = t.get(&format!("/api/bash/bash_events/search?kind__eq=BashOutput&command_id__eq={cid}&sort_order=TIMESTAMP&limit=100")).await;
        if let Some(o) = page["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| !o["exit_code"].is_null())
        {
            out = o.clone();
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(out["stdout"], format!("hello-from-bash\n{ws}\n"));
    assert_eq!(
        (out["exit_code"].as_i64(), out["stderr"].clone()),
        (Some(0), Value::Null)
    );
    let (_, one) = t
        .get(&format!(
            "/api/bash/bash_events/{}",
            out["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(one["id"], out["id"]);
    let (s, sync) = t
        .post(
            "/api/bash/execute_bash_command",
            json!({"command": "echo sync-bash; exit 3", "cwd": ws}),
        )
        .await;
    assert_eq!(
        (s, sync["stdout"].as_str(), sync["exit_code"].as_i64()),
        (200, Some("sync-bash\n"), Some(3))
    );
    let (s, slow) = t
        .post(
            "/api/bash/start_bash_command",
            json!({"command": "sleep 30", "cwd": ws}),
        )
        .await;
    assert_eq!(s, 200);
    let (s, _) = t
        .post(
            &format!(
                "/api/bash/bash_commands/{}/stop",
                slow["id"].as_str().unwrap()
            ),
            json!({}),
        )
        .await;
    assert_eq!(s, 200);

    // Bash over the socket.
    let mut sock = t.ws("/sockets/bash-events").await;
    sock.send(WsMessage::Text(
        json!({"command": "echo via-bash-socket", "cwd": ws})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    let frames = harness::until(&mut sock, |v| {
        v["kind"] == "BashOutput" && v["stdout"] == "via-bash-socket\n"
    })
    .await;
    assert!(
        frames
            .iter()
            .any(|f| f["kind"] == "BashCommand" && f["command"] == "echo via-bash-socket")
    );

    // Files: upload then download.
    let dest = format!("{ws}/uploaded.txt");
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(b"uploaded content\n".to_vec()).file_name("src.txt"),
    );
    let resp = t
        .http
        .post(t.url(&format!("/api/file/upload?path={dest}")))
        .header("X-Session-API-Key", KEY)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.json::<Value>().await.unwrap(),
        json!({"success": true, "file_size": 17})
    );
    let resp = t
        .http
        .get(t.url(&format!("/api/file/download?path={dest}")))
        .header("X-Session-API-Key", KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.bytes().await.unwrap().as_ref(), b"uploaded content\n");

    // Server secrets: values are never listed.
    let (s, b) = t
        .req(
            reqwest::Method::PUT,
            "/api/settings/secrets",
            Some(json!({"name": "GLOBAL_TOKEN", "value": "g-123", "description": "demo"})),
        )
        .await;
    assert_eq!(
        (s, b),
        (200, json!({"name": "GLOBAL_TOKEN", "description": "demo"}))
    );
    let (_, list) = t.get("/api/settings/secrets").await;
    assert_eq!(
        list,
        json!({"secrets": [{"name": "GLOBAL_TOKEN", "description": "demo"}]})
    );
    let resp = t
        .http
        .get(t.url("/api/settings/secrets/GLOBAL_TOKEN"))
        .header("X-Session-API-Key", KEY)
        .send()
        .await
        .unwrap();
    assert!(
        resp.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    assert_eq!(resp.text().await.unwrap(), "g-123");
    let (s, b) = t
        .req(
            reqwest::Method::DELETE,
            "/api/settings/secrets/GLOBAL_TOKEN",
            None,
        )
        .await;
    assert_eq!((s, b), (200, json!({"deleted": true})));

    let (s, info) = t.get("/server_info").await;
    assert_eq!(s, 200);
    assert!(
        info["usable_tools"]
            .as_array()
            .unwrap()
            .contains(&json!("terminal"))
    );

    // ask_agent: text comes back; a tool-call answer is a clear 502, not a crash.
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "work", true).await;
    t.wait_status(&id, &["finished"]).await;
    // The title is asked for in the background when the first message arrives; its cost is
    // recorded whenever it answers, which on a loaded machine can be after the run finished.
    let not_title = |events: Vec<Value>| {
        events
            .into_iter()
            .filter(|e| {
                !(e["key"] == "stats"
                    && e["value"]["usage_to_metrics"]["title"]["response_latencies"]
                        .as_array()
                        .is_some_and(|l| !l.is_empty()))
            })
            .count()
    };
    let n = not_title(t.events(&id).await);
    let (s, b) = t
        .post(
            &format!("/api/conversations/{id}/ask_agent"),
            json!({"question": "What did you do?"}),
        )
        .await;
    assert_eq!(
        (s, b),
        (200, json!({"response": "I ran the scripted steps."}))
    );
    let (s, b) = t
        .post(
            &format!("/api/conversations/{id}/ask_agent"),
            json!({"question": "again?"}),
        )
        .await;
    assert_eq!(s, 502, "{b}");
    assert!(b["detail"].as_str().unwrap().contains("terminal"));
    assert_eq!(
        not_title(t.events(&id).await),
        n,
        "ask_agent leaves the conversation unchanged"
    );
    let last = llm.last_request().unwrap();
    let q = last["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(q.contains("<QUESTION>"));

    // Per-conversation bash runs in the workspace.
    let (s, o) = t
        .post(
            &format!("/api/conversations/{id}/bash/execute_bash_command"),
            json!({"command": "pwd"}),
        )
        .await;
    assert_eq!(
        (s, o["stdout"].as_str().map(str::trim)),
        (200, Some(ws.as_str()))
    );
    let (s, p) = t
        .get(&format!(
            "/api/conversations/{id}/bash/bash_events/search?kind__eq=BashCommand"
        ))
        .await;
    assert_eq!((s, p["items"].as_array().unwrap().len()), (200, 1));
}
