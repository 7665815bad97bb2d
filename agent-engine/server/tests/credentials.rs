//! The server's credentials stay out of the agent's reach: Tandem's sockets take the key only in
//! their first frame, the agent's commands get the allowlisted environment, and every
//! credential value the server knows is masked in what the model and the timeline see.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::json;
use tandem_testkit::{Reply, Step};
use tokio_tungstenite::tungstenite::Message as WsMessage;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

use crate::harness::{self, KEY, TestServer, Ws, pty_until};

/// Guards against hangs only.
const HANG: Duration = Duration::from_secs(60);

/// The close frame the server ends the socket with.
async fn close_frame(ws: &mut Ws) -> Option<(u16, String)> {
    loop {
        match tokio::time::timeout(HANG, ws.next()).await.ok()?? {
            Ok(WsMessage::Close(Some(f))) => {
                return Some((u16::from(f.code), f.reason.to_string()));
            }
            Ok(WsMessage::Close(None)) | Err(_) => return None,
            Ok(_) => continue,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tandem_sockets_take_the_key_only_in_the_first_frame() {
    let llm = harness::llm(vec![Step::Reply(Reply::text("hi"))]);
    let t = TestServer::start().await;
    let id = t.create(&llm, json!({})).await;
    for kind in ["pty", "vnc", "browser"] {
        let path = format!("/sockets/{kind}/{id}");
        // In the URL: refused, valid as it is.
        let (mut ws, _) =
            tokio_tungstenite::connect_async(t.ws_url(&format!("{path}?session_api_key={KEY}")))
                .await
                .unwrap();
        let (code, reason) = close_frame(&mut ws).await.unwrap();
        assert_eq!(code, 4001, "{kind}: a key in the URL");
        assert!(reason.contains("first frame"), "{kind}: {reason}");
        // In a header: refused too.
        let mut req = t.ws_url(&path).into_client_request().unwrap();
        req.headers_mut()
            .insert("X-Session-API-Key", KEY.parse().unwrap());
        let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
        let (code, reason) = close_frame(&mut ws).await.unwrap();
        assert_eq!(code, 4001, "{kind}: a key in a header");
        assert!(reason.contains("first frame"), "{kind}: {reason}");
        // A wrong first frame: refused.
        let mut ws = t.ws_as(&path, "not-the-key").await;
        assert_eq!(
            close_frame(&mut ws).await.map(|f| f.0),
            Some(4001),
            "{kind}"
        );
    }
    // The first frame opens them: the PTY answers, the VNC and browser sockets get past
    // authentication to say this server has no desktop and the conversation no browser.
    let mut pty = t.ws(&format!("/sockets/pty/{id}")).await;
    pty.send(WsMessage::Text(
        json!({"type": "input", "data": "echo first-$((2+3))\n"})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    pty_until(&mut pty, "first-5").await;
    for kind in ["vnc", "browser"] {
        let mut ws = t.ws(&format!("/sockets/{kind}/{id}")).await;
        assert_eq!(
            close_frame(&mut ws).await.map(|f| f.0),
            Some(4004),
            "{kind}"
        );
    }
}

/// Names the agent's shell or the terminal tool sets itself.
const SET_BY_THE_SHELL: &[&str] = &[
    "PWD",
    "OLDPWD",
    "SHLVL",
    "_",
    "TERM",
    "PS0",
    "PS1",
    "PS2",
    "PROMPT_COMMAND",
    "INPUTRC",
    "HISTFILE",
    "HISTCONTROL",
    "PAGER",
    "GIT_PAGER",
    "SYSTEMD_PAGER",
    "LINES",
    "COLUMNS",
];

fn env_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, _)| k.trim().to_owned())
        .filter(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
        .collect()
}

/// The host's variables that must not reach the agent: every one of this test process's
/// environment the allowlist does not name (cargo's and the test runner's, at least).
fn host_only_names() -> Vec<String> {
    let names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| !tandem_sdk::agent_env::is_allowed(k, &[]))
        .filter(|k| !SET_BY_THE_SHELL.contains(&k.as_str()))
        .collect();
    assert!(
        !names.is_empty(),
        "the test runner sets variables of its own"
    );
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn agent_commands_get_only_the_allowlisted_environment() {
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "env | sort"})),
        Step::tool_call("finish", json!({"message": "ok"})),
    ]);
    let t = TestServer::start().await;
    let id = t.create(&llm, json!({})).await;
    t.message(&id, "show the environment", true).await;
    t.wait_status(&id, &["finished"]).await;
    let events = t.events(&id).await;
    let terminal = events
        .iter()
        .find(|e| e["observation"]["kind"] == "TerminalObservation")
        .unwrap_or_else(|| panic!("no terminal observation in {events:?}"));
    let text = terminal["observation"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    let names = env_names(&text);
    assert!(names.iter().any(|n| n == "PATH"), "{text}");
    for name in host_only_names() {
        assert!(
            !names.contains(&name),
            "the terminal got the host's `{name}`:\n{text}"
        );
    }

    // `/api/bash` the same.
    let (s, out) = t
        .post(
            "/api/bash/execute_bash_command",
            json!({"command": "env", "timeout": 30}),
        )
        .await;
    assert_eq!(s, 200, "{out}");
    let stdout = out["stdout"].as_str().unwrap_or("").to_owned();
    let names = env_names(&stdout);
    assert!(names.iter().any(|n| n == "PATH"), "{out}");
    for name in host_only_names() {
        assert!(
            !names.contains(&name),
            "/api/bash got the host's `{name}`:\n{stdout}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_credential_the_server_knows_is_masked_for_the_model() {
    let llm = harness::llm(vec![
        Step::tool_call("terminal", json!({"command": "cat creds.txt"})),
        Step::tool_call("finish", json!({"message": "ok"})),
    ]);
    let t = TestServer::start().await;
    let profile_key = "sk-profile-credential-0123456789";
    let (s, b) = t
        .post(
            "/api/profiles/masked",
            json!({"llm": {"model": "openai/other", "api_key": profile_key}, "include_secrets": true}),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    let other_secret = "other-conversation-secret-0123456789";
    t.create(&llm, json!({"secrets": {"OTHER": other_secret}}))
        .await;
    let mcp_env_token = "mcp-env-token-0123456789";
    let mcp_header_token = "mcp-header-token-0123456789";
    let mut body = json!({
        "agent": TestServer::agent(&llm),
        "workspace": {"kind": "LocalWorkspace", "working_dir": t.workspace.to_string_lossy()},
    });
    body["agent"]["mcp_config"] = json!({"mcpServers": {
        "local": {"command": "/nonexistent/mcp-server", "env": {"SERVICE_TOKEN": mcp_env_token}},
        "remote": {"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": format!("Bearer {mcp_header_token}")}},
    }});
    let (s, info) = t.post("/api/conversations", body).await;
    assert_eq!(s, 201, "{info}");
    let id = info["id"].as_str().unwrap().to_owned();
    // The values reach an output some way (a file the agent reads).
    let known = [
        KEY,
        "sk-secret-x",
        profile_key,
        other_secret,
        mcp_env_token,
        mcp_header_token,
    ];
    std::fs::write(t.workspace.join("creds.txt"), known.join("\n")).unwrap();
    t.message(&id, "read creds.txt", true).await;
    t.wait_status(&id, &["finished"]).await;
    let requests = serde_json::to_string(&llm.requests()).unwrap();
    assert!(requests.contains("<secret-hidden>"), "{requests}");
    let events = serde_json::to_string(&t.events(&id).await).unwrap();
    for value in known {
        assert!(
            !requests.contains(value),
            "`{value}` reached the model: {requests}"
        );
        assert!(
            !events.contains(value),
            "`{value}` is in an event: {events}"
        );
    }
    // `/api/bash` the same.
    let ws = t.workspace.to_string_lossy().into_owned();
    let (s, out) = t
        .post(
            "/api/bash/execute_bash_command",
            json!({"command": "cat creds.txt", "cwd": ws, "timeout": 30}),
        )
        .await;
    assert_eq!(s, 200, "{out}");
    let text = out.to_string();
    assert!(text.contains("<secret-hidden>"), "{text}");
    for value in known {
        assert!(
            !text.contains(value),
            "`{value}` in /api/bash output: {text}"
        );
    }
}
