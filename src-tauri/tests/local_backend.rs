//! The in-process local backend as the desktop starts it: loopback only, a random key that the
//! server demands, CORS for the webview's origin only, and the demo LLM running a conversation
//! to the end when no provider is configured.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_desktop::local_backend::{DEMO_MODEL, LocalBackend, LocalBackendOptions};

fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_keyed_and_open_to_the_webview_only() {
    let home = tempfile::tempdir().unwrap();
    let mut b = LocalBackend::start(LocalBackendOptions {
        home: home.path().to_path_buf(),
        llm: None,
    })
    .await
    .unwrap();
    let info = b.info().clone();
    assert!(
        info.base_url.starts_with("http://127.0.0.1:"),
        "{}",
        info.base_url
    );
    assert!(info.demo);
    assert_eq!(info.model, DEMO_MODEL);
    assert_eq!(info.key.len(), 64);
    let c = client();
    let search = format!("{}/api/conversations/search", info.base_url);

    let r = c.get(&search).send().await.unwrap();
    assert_eq!(r.status(), 401, "no key");
    let r = c
        .get(&search)
        .header("X-Session-API-Key", "wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401, "wrong key");
    let r = c
        .get(&search)
        .header("X-Session-API-Key", &info.key)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);

    // The webview's preflight is answered without the key; a foreign origin gets no CORS grant.
    let pre = c
        .request(reqwest::Method::OPTIONS, &search)
        .header("Origin", "tauri://localhost")
        .header("Access-Control-Request-Method", "GET")
        .header(
            "Access-Control-Request-Headers",
            "x-session-api-key,content-type",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(pre.status(), 204);
    assert_eq!(
        pre.headers()["access-control-allow-origin"],
        "tauri://localhost"
    );
    let allowed = pre.headers()["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    for asked in ["x-session-api-key", "content-type"] {
        assert!(allowed.contains(asked), "{allowed}");
    }
    let r = c
        .get(&search)
        .header("Origin", "tauri://localhost")
        .header("X-Session-API-Key", &info.key)
        .send()
        .await
        .unwrap();
    assert_eq!(
        r.headers()["access-control-allow-origin"],
        "tauri://localhost"
    );
    let r = c
        .get(&search)
        .header("Origin", "http://evil.example")
        .header("X-Session-API-Key", &info.key)
        .send()
        .await
        .unwrap();
    assert!(r.headers().get("access-control-allow-origin").is_none());

    b.shutdown().await;
    assert!(c.get(&search).send().await.is_err(), "stopped");
}

/// What the UI does in demo mode: start a conversation with the model `default` (no key,
/// no base URL) and a task, then read the events until the agent finishes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn demo_conversation_runs_to_the_end() {
    let home = tempfile::tempdir().unwrap();
    let mut b = LocalBackend::start(LocalBackendOptions {
        home: home.path().to_path_buf(),
        llm: None,
    })
    .await
    .unwrap();
    let info = b.info().clone();
    let c = client();
    let body = json!({
        "agent": {
            "kind": "Agent",
            "llm": {"model": "default", "usage_id": "agent"},
            "tools": [{"name": "terminal", "params": {}}, {"name": "file_editor", "params": {}}, {"name": "task_tracker", "params": {}}],
            "include_default_tools": ["FinishTool", "ThinkTool"],
        },
        "workspace": {"kind": "LocalWorkspace", "working_dir": info.workspace},
        "initial_message": {"role": "user", "content": [{"type": "text", "text": "Show me around"}], "run": true},
    });
    let r = c
        .post(format!("{}/api/conversations", info.base_url))
        .header("X-Session-API-Key", &info.key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status();
    let created: Value = r.json().await.unwrap();
    assert!(status.is_success(), "{status}: {created}");
    let id = created["id"].as_str().unwrap().to_owned();

    let deadline = Instant::now() + Duration::from_secs(60);
    let (state, kinds) = loop {
        let conv: Value = c
            .get(format!("{}/api/conversations/{id}", info.base_url))
            .header("X-Session-API-Key", &info.key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let state = conv["execution_status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if ["finished", "error", "stuck"].contains(&state.as_str()) || Instant::now() > deadline {
            let events: Value = c
                .get(format!(
                    "{}/api/conversations/{id}/events/search?limit=100",
                    info.base_url
                ))
                .header("X-Session-API-Key", &info.key)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let kinds: Vec<String> = events["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["kind"].as_str().unwrap_or("?").to_owned())
                .collect();
            break (state, kinds);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(state, "finished", "events: {kinds:?}");
    assert!(
        kinds.iter().filter(|k| *k == "ActionEvent").count() >= 3,
        "{kinds:?}"
    );
    assert!(kinds.contains(&"ObservationEvent".to_owned()), "{kinds:?}");
    assert!(!kinds.contains(&"AgentErrorEvent".to_owned()), "{kinds:?}");
    b.shutdown().await;
}
