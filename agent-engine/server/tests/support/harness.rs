//! Shared test harness: a real server on a loopback port over a temp `TANDEM_HOME`, a scripted
//! LLM, and small HTTP/WebSocket helpers.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tandem_server::{Server, ServerConfig};
use tandem_testkit::ScriptedLlmServer;
use tokio_tungstenite::tungstenite::Message as WsMessage;

pub const KEY: &str = "test-key";

pub struct TestServer {
    pub server: Server,
    pub addr: SocketAddr,
    pub home: tempfile::TempDir,
    pub workspace: PathBuf,
    pub http: reqwest::Client,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    pub async fn start() -> Self {
        Self::start_with(|_| {}).await
    }

    pub async fn start_with(tweak: impl FnOnce(&mut ServerConfig)) -> Self {
        let home = tempfile::tempdir().unwrap();
        Self::start_in(home, tweak).await
    }

    pub async fn start_in(home: tempfile::TempDir, tweak: impl FnOnce(&mut ServerConfig)) -> Self {
        let mut config = ServerConfig::new(home.path());
        config.session_keys = vec![KEY.to_owned()];
        config.terminal_soft_timeout = Some(Duration::from_secs(5));
        tweak(&mut config);
        let workspace = home.path().join("ws");
        std::fs::create_dir_all(&workspace).unwrap();
        let server = Server::start(config).await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = server.router();
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self {
            server,
            addr,
            home,
            workspace,
            http: reqwest::Client::new(),
            task,
        }
    }

    /// Stops serving and closes every conversation; returns the home for a restart.
    pub async fn stop(self) -> tempfile::TempDir {
        self.task.abort();
        self.server.shutdown().await;
        self.home
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{}", self.addr, path)
    }

    pub fn ws_url(&self, path: &str) -> String {
        format!("ws://{}{}", self.addr, path)
    }

    pub async fn req(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut r = self
            .http
            .request(method, self.url(path))
            .header("X-Session-API-Key", KEY);
        if let Some(b) = body {
            r = r.json(&b);
        }
        let resp = r.send().await.unwrap();
        let status = resp.status().as_u16();
        let text = resp.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.req(reqwest::Method::GET, path, None).await
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.req(reqwest::Method::POST, path, Some(body)).await
    }

    pub fn agent(llm: &ScriptedLlmServer) -> Value {
        json!({
            "llm": {"model": "openai/fake", "api_key": "sk-secret-x", "base_url": llm.base_url(), "num_retries": 0,
                    "usage_id": "agent", "temperature": null, "openrouter_app_name": "OpenHands"},
            "tools": [{"name": "terminal", "params": {}}, {"name": "file_editor", "params": {}}, {"name": "task_tracker", "params": {}}],
            "include_default_tools": ["FinishTool", "ThinkTool"],
            "system_prompt_kwargs": {"cli_mode": true, "llm_security_analyzer": true},
            "kind": "Agent"
        })
    }

    pub async fn create(&self, llm: &ScriptedLlmServer, extra: Value) -> String {
        let mut body = json!({"agent": Self::agent(llm), "workspace": {"kind": "LocalWorkspace", "working_dir": self.workspace.to_string_lossy()}});
        if let (Some(b), Value::Object(e)) = (body.as_object_mut(), extra) {
            b.extend(e);
        }
        let (status, info) = self.post("/api/conversations", body).await;
        assert_eq!(status, 201, "{info}");
        info["id"].as_str().unwrap().to_owned()
    }

    pub async fn message(&self, id: &str, text: &str, run: bool) {
        let (s, b) = self
            .post(
                &format!("/api/conversations/{id}/events"),
                json!({"role": "user", "content": [{"type": "text", "text": text}], "run": run}),
            )
            .await;
        assert_eq!(s, 200, "{b}");
    }

    pub async fn status(&self, id: &str) -> String {
        let (_, info) = self.get(&format!("/api/conversations/{id}")).await;
        info["execution_status"].as_str().unwrap_or("").to_owned()
    }

    pub async fn wait_status(&self, id: &str, want: &[&str]) -> String {
        for _ in 0..400 {
            let s = self.status(id).await;
            if want.contains(&s.as_str()) {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!(
            "conversation {id} never reached {want:?} (now {})",
            self.status(id).await
        );
    }

    pub async fn events(&self, id: &str) -> Vec<Value> {
        let (_, page) = self
            .get(&format!("/api/conversations/{id}/events/search?limit=100"))
            .await;
        page["items"].as_array().cloned().unwrap_or_default()
    }

    /// Opens a socket and authenticates with a first frame.
    pub async fn ws(&self, path: &str) -> Ws {
        self.ws_as(path, KEY).await
    }

    /// A socket at `path` whose first frame authenticates with `key` (right or wrong).
    pub async fn ws_as(&self, path: &str, key: &str) -> Ws {
        let (mut ws, _) = tokio_tungstenite::connect_async(self.ws_url(path))
            .await
            .unwrap();
        ws.send(WsMessage::Text(
            json!({"type": "auth", "session_api_key": key})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
        ws
    }
}

pub type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The close code the server ends the socket with (`None`: it ended without one, or nothing
/// came within 60 s).
pub async fn close_code(ws: &mut Ws) -> Option<u16> {
    loop {
        match tokio::time::timeout(Duration::from_secs(60), ws.next())
            .await
            .ok()??
        {
            Ok(WsMessage::Close(Some(f))) => return Some(u16::from(f.code)),
            Ok(WsMessage::Close(None)) | Err(_) => return None,
            Ok(_) => continue,
        }
    }
}

/// The PTY socket's output until it shows `needle` (all of it so far), within 60 s.
pub async fn pty_until(ws: &mut Ws, needle: &str) -> String {
    let mut seen = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !seen.contains(needle) {
        let msg = tokio::time::timeout_at(deadline, ws.next())
            .await
            .unwrap_or_else(|_| panic!("`{needle}` never appeared in: {seen}"))
            .expect("the socket ended")
            .unwrap();
        if let WsMessage::Binary(b) = msg {
            seen.push_str(&String::from_utf8_lossy(&b));
        }
    }
    seen
}

/// The next JSON text frame (skipping pings), within 20 s.
pub async fn next_json(ws: &mut Ws) -> Value {
    loop {
        let msg = tokio::time::timeout(Duration::from_secs(20), ws.next())
            .await
            .expect("no frame within 20 s")
            .expect("socket ended")
            .unwrap();
        match msg {
            WsMessage::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
            WsMessage::Ping(_) | WsMessage::Pong(_) => continue,
            other => panic!("unexpected frame {other:?}"),
        }
    }
}

/// Frames until `pred` matches one (returned last).
pub async fn until(ws: &mut Ws, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
    let mut seen = Vec::new();
    loop {
        let v = next_json(ws).await;
        let done = pred(&v);
        seen.push(v);
        if done {
            return seen;
        }
    }
}

pub fn is_full_state(v: &Value, status: &str) -> bool {
    v["kind"] == "ConversationStateUpdateEvent"
        && v["key"] == "full_state"
        && v["value"]["execution_status"] == status
}

/// A scripted LLM; requests without tools (titles, summaries) get a fixed text and consume
/// no step.
pub fn llm(steps: Vec<tandem_testkit::Step>) -> ScriptedLlmServer {
    ScriptedLlmServer::start(tandem_testkit::Script::new(steps).with_no_tools_text("A short title"))
}
