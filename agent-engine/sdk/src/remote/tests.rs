//! The remote client against a small in-process fake agent server that speaks the wire
//! protocol (REST paging, first-frame auth, `full_state` frames) and can drop its sockets.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::ws::{Message as AxMessage, WebSocket, WebSocketUpgrade};
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tandem_protocol::{AgentSpec, Event, ExecutionStatus, LlmConfig, Message, SecurityRisk};
use tandem_testkit::{ScriptedLlmServer, Step};
use tokio::sync::broadcast;

use super::*;
use crate::{
    Conversation, ConversationClient, ConversationOptions, ConversationStore, Runtime, SdkError,
    SecretSource,
};

const KEY: &str = "k1";
const CID: &str = "0b7e6c1e-0000-4000-8000-000000000001";

#[derive(Clone)]
struct Fake {
    events: Arc<Mutex<Vec<Value>>>,
    status: Arc<Mutex<String>>,
    frames: broadcast::Sender<Value>,
    kill: broadcast::Sender<()>,
    steps: usize,
    /// Send the post-run `full_state` frame (off to test the REST fallback).
    post_run_frame: bool,
    /// The last `POST .../secrets` body.
    secrets: Arc<Mutex<Value>>,
    /// When set, `POST .../run` answers 409 with this body.
    run_conflict: Arc<Mutex<Option<Value>>>,
}

impl Fake {
    fn new(steps: usize) -> Self {
        Self {
            events: Arc::default(),
            status: Arc::new(Mutex::new("idle".into())),
            frames: broadcast::channel(10_000).0,
            kill: broadcast::channel(16).0,
            steps,
            post_run_frame: true,
            secrets: Arc::default(),
            run_conflict: Arc::default(),
        }
    }

    fn append(&self, kind: &str, extra: Value) {
        let mut ev = json!({"id": uuid::Uuid::new_v4().to_string(), "timestamp": "2026-01-01T00:00:00", "source": "environment", "kind": kind});
        if let (Value::Object(o), Value::Object(x)) = (&mut ev, extra) {
            o.extend(x);
        }
        let mut events = self.events.lock().unwrap();
        events.push(ev.clone());
        let _ = self.frames.send(ev);
    }

    fn set_status(&self, s: &str) {
        *self.status.lock().unwrap() = s.into();
        self.append(
            "ConversationStateUpdateEvent",
            json!({"key": "execution_status", "value": s}),
        );
    }

    fn full_state(&self) -> Value {
        json!({"id": uuid::Uuid::new_v4().to_string(), "timestamp": "2026-01-01T00:00:00", "source": "environment",
               "kind": "ConversationStateUpdateEvent", "key": "full_state",
               "value": {"execution_status": *self.status.lock().unwrap()}})
    }

    fn ids(&self) -> Vec<String> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .collect()
    }
}

fn authed(h: &HeaderMap) -> bool {
    h.get("X-Session-API-Key").and_then(|v| v.to_str().ok()) == Some(KEY)
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        axum::Json(json!({"detail": "Unauthorized"})),
    )
        .into_response()
}

async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    format!("http://{addr}")
}

async fn start_fake(fake: Fake) -> String {
    let router = Router::new()
        .route(
            "/server_info",
            get(|| async { axum::Json(json!({"version": "fake", "uptime": 1.0})) }),
        )
        .route(
            "/api/conversations/search",
            get(|h: HeaderMap| async move {
                if !authed(&h) {
                    return unauthorized();
                }
                axum::Json(json!({"items": [], "next_page_id": null})).into_response()
            }),
        )
        .route(
            "/api/conversations",
            post(|h: HeaderMap| async move {
                if !authed(&h) {
                    return unauthorized();
                }
                (
                    StatusCode::CREATED,
                    axum::Json(json!({"id": CID, "execution_status": "idle"})),
                )
                    .into_response()
            }),
        )
        .route(
            "/api/conversations/{id}",
            get(|State(f): State<Fake>, h: HeaderMap| async move {
                if !authed(&h) {
                    return unauthorized();
                }
                axum::Json(json!({"id": CID, "execution_status": *f.status.lock().unwrap()}))
                    .into_response()
            }),
        )
        .route("/api/conversations/{id}/events/search", get(search))
        .route(
            "/api/conversations/{id}/events",
            post(|| async { axum::Json(json!({"success": true})) }),
        )
        .route("/api/conversations/{id}/run", post(run))
        .route(
            "/api/conversations/{id}/secrets",
            post(
                |State(f): State<Fake>, axum::Json(body): axum::Json<Value>| async move {
                    *f.secrets.lock().unwrap() = body;
                    axum::Json(json!({"success": true}))
                },
            ),
        )
        .route(
            "/api/conversations/{id}/events/approve_edited",
            post(|| async { axum::Json(json!({"success": true, "security_risk": "HIGH"})) }),
        )
        .route("/sockets/events/{id}", get(socket))
        .with_state(fake);
    serve(router).await
}

async fn search(
    State(f): State<Fake>,
    h: HeaderMap,
    Query(q): Query<std::collections::HashMap<String, String>>,
) -> Response {
    if !authed(&h) {
        return unauthorized();
    }
    let events = f.events.lock().unwrap().clone();
    let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(100);
    let start = match q.get("page_id") {
        Some(p) => match events.iter().position(|e| e["id"] == p.as_str()) {
            Some(i) => i,
            None => return (StatusCode::BAD_REQUEST, "bad page").into_response(),
        },
        None => 0,
    };
    let end = (start + limit).min(events.len());
    let next = events.get(end).map(|e| e["id"].clone());
    axum::Json(json!({"items": &events[start..end], "next_page_id": next})).into_response()
}

async fn run(State(f): State<Fake>) -> Response {
    if let Some(body) = f.run_conflict.lock().unwrap().clone() {
        return (StatusCode::CONFLICT, axum::Json(body)).into_response();
    }
    if *f.status.lock().unwrap() == "running" {
        let detail = json!({"detail": "Conversation already running"});
        return (StatusCode::CONFLICT, axum::Json(detail)).into_response();
    }
    f.set_status("running");
    tokio::spawn(async move {
        for i in 0..f.steps {
            f.append("MessageEvent", json!({"source": "agent", "llm_message": {"role": "assistant", "content": [{"type": "text", "text": format!("step {i}")}]}}));
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        f.set_status("finished");
        if f.post_run_frame {
            let _ = f.frames.send(f.full_state());
        }
    });
    axum::Json(json!({"success": true})).into_response()
}

async fn socket(State(f): State<Fake>, ws: WebSocketUpgrade) -> Response {
    ws.on_upgrade(move |mut sock: WebSocket| async move {
        let Some(Ok(AxMessage::Text(auth))) = sock.recv().await else { return };
        let auth: Value = serde_json::from_str(auth.as_str()).unwrap_or_default();
        if auth["session_api_key"] != KEY {
            let _ = sock.send(AxMessage::Close(Some(axum::extract::ws::CloseFrame { code: 4001, reason: "Authentication failed".into() }))).await;
            return;
        }
        let mut frames = f.frames.subscribe();
        let mut kill = f.kill.subscribe();
        let _ = sock.send(AxMessage::Text(f.full_state().to_string().into())).await;
        loop {
            tokio::select! {
                _ = kill.recv() => return,
                fr = frames.recv() => match fr {
                    Ok(v) => if sock.send(AxMessage::Text(v.to_string().into())).await.is_err() { return },
                    Err(_) => return,
                },
            }
        }
    })
    .into_response()
}

fn options() -> RemoteConversationOptions {
    RemoteConversationOptions::new(AgentSpec::default_for(LlmConfig::new("openai/fake")))
}

#[tokio::test]
async fn socket_drops_mid_run_lose_and_double_nothing() {
    let fake = Fake::new(300);
    let url = start_fake(fake.clone()).await;
    let ws = RemoteWorkspace::connect(&url, Some(KEY.into()), "/tmp")
        .await
        .unwrap();
    let conv = ws.create_conversation(&options()).await.unwrap();
    let (_, mut rx) = conv.subscribe();
    let runner = {
        let conv = conv.clone();
        tokio::spawn(async move { conv.run_to_end().await })
    };
    for i in 0..8 {
        tokio::time::sleep(Duration::from_millis(40)).await;
        if i % 2 == 0 {
            conv.reconnect();
        } else {
            let _ = fake.kill.send(());
        }
    }
    let status = tokio::time::timeout(Duration::from_secs(20), runner)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(status, ExecutionStatus::Finished);
    let got: Vec<String> = conv.events().iter().map(|e| e.id().to_owned()).collect();
    assert_eq!(
        got,
        fake.ids(),
        "the client's log equals the server's: no gap, no duplicate, same order"
    );
    assert!(conv.live().borrow().connections >= 3, "it reconnected");
    // Subscribers saw each persisted event exactly once too.
    let mut live_ids = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if !ev.is_transient() {
            live_ids.push(ev.id().to_owned());
        }
    }
    assert_eq!(live_ids, fake.ids());
}

#[tokio::test]
async fn lost_post_run_frame_falls_back_to_rest() {
    let mut fake = Fake::new(5);
    fake.post_run_frame = false;
    let url = start_fake(fake.clone()).await;
    let ws = RemoteWorkspace::connect(&url, Some(KEY.into()), "/tmp")
        .await
        .unwrap();
    let conv = ws.create_conversation(&options()).await.unwrap();
    // Drop the socket for good right after the run starts: the server will not come back.
    let runner = {
        let conv = conv.clone();
        tokio::spawn(async move { conv.run_to_end().await })
    };
    tokio::time::sleep(Duration::from_millis(5)).await;
    conv.close().await.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), runner)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(status, ExecutionStatus::Finished);
    assert_eq!(conv.events().len(), fake.ids().len());
}

#[tokio::test]
async fn clear_errors_for_wrong_servers_and_keys() {
    let fake = Fake::new(1);
    let url = start_fake(fake).await;
    let err = RemoteWorkspace::connect(&url, Some("wrong".into()), "/tmp")
        .await
        .unwrap_err();
    assert_eq!(err.code(), "unauthorized", "{err}");
    assert!(err.to_string().starts_with("unauthorized"), "{err}");

    let html =
        serve(Router::new().fallback(|| async { Html("<html><body>hello</body></html>") })).await;
    let err = RemoteWorkspace::connect(&html, None, "/tmp")
        .await
        .unwrap_err();
    assert_eq!(err.code(), "not_an_agent_server", "{err}");

    let notfound = serve(Router::new()).await;
    let err = RemoteWorkspace::connect(&notfound, None, "/tmp")
        .await
        .unwrap_err();
    assert_eq!(err.code(), "not_an_agent_server", "{err}");
    assert!(err.to_string().contains("404"), "{err}");

    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let err = RemoteWorkspace::connect(&format!("http://127.0.0.1:{port}"), None, "/tmp")
        .await
        .unwrap_err();
    assert_eq!(err.code(), "unreachable", "{err}");
    assert!(err.to_string().contains("cannot reach"), "{err}");
}

#[tokio::test]
async fn socket_auth_failure_is_unauthorized() {
    let fake = Fake::new(1);
    let url = start_fake(fake).await;
    // The HTTP side accepts k1, but give the socket another key through a second client.
    let client = ServerClient::new(&url, Some("wrong".into())).unwrap();
    let shared = super::stream::Shared::new(CID.into(), client, ExecutionStatus::Idle);
    let err = super::stream::start(shared).await.unwrap_err();
    assert_eq!(err.code(), "unauthorized", "{err}");
}

/// What a caller of the one interface does, whichever conversation it holds: say something,
/// run to the end watching the events, let go.
async fn say_and_run<C: ConversationClient>(conv: &C, text: &str) -> ExecutionStatus {
    let (_, mut rx) = conv.subscribe();
    conv.send_message(Message::user(text), false).await.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(20), conv.run_to_end())
        .await
        .expect("the run ends")
        .unwrap();
    assert!(rx.try_recv().is_ok(), "subscribers saw the run");
    conv.close().await.unwrap();
    status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_interface_drives_a_local_and_a_remote_conversation_alike() {
    // On this machine: the scripted LLM answers with text, which finishes the run.
    let llm_server = ScriptedLlmServer::start(vec![Step::text("Hello from here.")]);
    let mut config = LlmConfig::new("openai/scripted");
    config.base_url = Some(llm_server.base_url());
    config.api_key = Some("sk-test".into());
    config.num_retries = 0;
    let home = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    let mut agent = AgentSpec::default_for(LlmConfig::new("openai/scripted"));
    agent.tools.clear();
    let mut local_options = ConversationOptions::new(agent, workspace.path().to_path_buf());
    local_options.autotitle = false;
    let runtime = Runtime {
        llm: Arc::new(tandem_llm::OpenAiChat::new(config).unwrap()),
        tools: Vec::new(),
        checkpoints: None,
        run_gate: None,
    };
    let store = ConversationStore::new(home.path().join("conversations"));
    let local = Conversation::create(&store, local_options, runtime)
        .await
        .unwrap();
    assert_eq!(say_and_run(&local, "hi").await, ExecutionStatus::Finished);
    let said = local.events().into_iter().rev().find_map(|e| match e {
        Event::Message(m) => Some(m.llm_message.text()),
        _ => None,
    });
    assert_eq!(said.as_deref(), Some("Hello from here."));

    // On a server: the same code, the server's run and log.
    let fake = Fake::new(3);
    let url = start_fake(fake.clone()).await;
    let ws = RemoteWorkspace::connect(&url, Some(KEY.into()), "/tmp")
        .await
        .unwrap();
    let remote = ws.create_conversation(&options()).await.unwrap();
    assert_eq!(say_and_run(&remote, "hi").await, ExecutionStatus::Finished);
    let got: Vec<String> = remote.events().iter().map(|e| e.id().to_owned()).collect();
    assert_eq!(got, fake.ids());
}

#[tokio::test]
async fn through_the_interface_a_server_s_answers_read_as_a_local_conversation_s() {
    let fake = Fake::new(1);
    let url = start_fake(fake.clone()).await;
    let ws = RemoteWorkspace::connect(&url, Some(KEY.into()), "/tmp")
        .await
        .unwrap();
    let conv = ws.create_conversation(&options()).await.unwrap();
    // A run in progress: the server's 409 is `AlreadyRunning`, as a local conversation says.
    fake.set_status("running");
    let err = ConversationClient::run(&conv).await.unwrap_err();
    assert!(matches!(err, SdkError::AlreadyRunning), "{err}");
    // An edited action's risk comes back as the server rated it.
    let risk = ConversationClient::approve_edited(&conv, "a1", json!({"command": "ls"}))
        .await
        .unwrap();
    assert_eq!(risk, SecurityRisk::High);
    // Secrets go in upstream's shapes: a plain value as a string, the rest as objects.
    let secrets = vec![
        (
            "TOKEN".to_owned(),
            SecretSource::Static {
                value: "t0k".into(),
                description: None,
            },
        ),
        (
            "API".to_owned(),
            SecretSource::Lookup {
                url: "http://127.0.0.1:1/key".into(),
                headers: [("Authorization".to_owned(), "Bearer x".to_owned())].into(),
                description: Some("the API key".into()),
            },
        ),
    ];
    ConversationClient::update_secrets(&conv, secrets)
        .await
        .unwrap();
    assert_eq!(
        *fake.secrets.lock().unwrap(),
        json!({"secrets": {
            "TOKEN": "t0k",
            "API": {"kind": "LookupSecret", "url": "http://127.0.0.1:1/key",
                    "headers": {"Authorization": "Bearer x"}, "description": "the API key"},
        }})
    );
    // Anything else keeps the remote error and its code (this server has no condense route).
    let err = ConversationClient::condense(&conv).await.unwrap_err();
    let SdkError::Remote(remote) = &err else {
        panic!("not a remote error: {err}")
    };
    assert_eq!(remote.code(), "not_found", "{err}");
}

#[tokio::test]
async fn a_server_s_409s_on_run_read_as_a_local_conversation_s_errors() {
    let fake = Fake::new(1);
    let url = start_fake(fake.clone()).await;
    let ws = RemoteWorkspace::connect(&url, Some(KEY.into()), "/tmp")
        .await
        .unwrap();
    let conv = ws.create_conversation(&options()).await.unwrap();
    let run_answers = |body: Value| *fake.run_conflict.lock().unwrap() = Some(body);

    // A Tandem server's run in progress (its ApiError::AlreadyRunning).
    run_answers(json!({
        "detail": "Conversation already running. Wait for completion or pause first.",
        "code": "already_running",
    }));
    let err = ConversationClient::run(&conv).await.unwrap_err();
    assert!(matches!(err, SdkError::AlreadyRunning), "{err}");

    // A Tandem server's run that cannot start (its ApiError::Conflict from the local
    // conversation's InvalidState): the same InvalidState, so nobody waits for that run.
    run_answers(json!({"detail": "nothing to run: send a message first", "code": "conflict"}));
    let err = ConversationClient::run(&conv).await.unwrap_err();
    let SdkError::InvalidState(why) = &err else {
        panic!("not InvalidState: {err:?}")
    };
    assert_eq!(why, "nothing to run: send a message first");
    let err = ConversationClient::run_to_end(&conv).await.unwrap_err();
    assert!(matches!(err, SdkError::InvalidState(_)), "{err}");

    // Upstream's only 409 on run, which has no code, is a run in progress.
    run_answers(json!({
        "detail": "Conversation already running. Wait for completion or pause first."
    }));
    let err = ConversationClient::run(&conv).await.unwrap_err();
    assert!(matches!(err, SdkError::AlreadyRunning), "{err}");
}
