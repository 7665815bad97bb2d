//! The demo server: OpenAI Chat Completions on a loopback port, answered by a [`Responder`]
//! (the [`demo_responder`](crate::demo_responder) unless told otherwise). It answers
//! `POST /v1/chat/completions` (JSON, or server-sent events when the request streams) and
//! `GET /v1/models`, and keeps nothing of the requests it answers, so it may run as long as the
//! app does. It also serves the [demo site](crate::site) the tour browses, under `/demo/`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::http::{BackgroundServer, json_response, sleep_ms, sse_response};
use crate::openai_chat::{Rendered, RequestShape, error_body};
use crate::script::{Responder, Step};

/// The model `GET /v1/models` lists.
const MODEL: &str = "tandem-demo";

struct Shared {
    responder: Responder,
    /// Completion requests answered so far (the responder's `index`).
    answered: AtomicUsize,
}

/// A running demo server. It stops when dropped.
#[derive(Debug)]
pub struct DemoServer {
    server: BackgroundServer,
}

impl DemoServer {
    /// Serves the demo model on a free port of 127.0.0.1.
    pub fn start() -> std::io::Result<Self> {
        Self::bind(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            crate::demo_responder(),
        )
    }

    /// Serves `responder` on `addr` (port 0 picks a free one), on its own thread and runtime,
    /// so it may be started from sync code or inside any Tokio runtime.
    pub fn bind(addr: SocketAddr, responder: Responder) -> std::io::Result<Self> {
        let shared = Arc::new(Shared {
            responder,
            answered: AtomicUsize::new(0),
        });
        let router = Router::new()
            .route("/v1/chat/completions", post(completion))
            .route("/v1/models", get(models))
            .merge(crate::site::router())
            .fallback(unexpected)
            .with_state(shared);
        let server = BackgroundServer::bind(addr, router, "demo-llm")?;
        Ok(Self { server })
    }

    /// The OpenAI base URL, e.g. `http://127.0.0.1:41234/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.server.addr())
    }

    /// The demo site's address, e.g. `http://127.0.0.1:41234/demo/`.
    pub fn site_url(&self) -> String {
        format!("http://{}{}", self.server.addr(), crate::site::SITE_PATH)
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }
}

async fn completion(State(shared): State<Arc<Shared>>, headers: HeaderMap, raw: Bytes) -> Response {
    let Ok(mut request) = serde_json::from_slice::<Value>(&raw) else {
        return json_response(
            StatusCode::BAD_REQUEST,
            &error_body(
                "demo LLM: request body is not JSON",
                "invalid_request_error",
            ),
        );
    };
    // The responder learns where the demo site is from the address the client called.
    if let (Some(host), Some(obj)) = (
        headers.get(header::HOST).and_then(|h| h.to_str().ok()),
        request.as_object_mut(),
    ) {
        obj.insert(
            crate::site::SITE_FIELD.into(),
            Value::String(format!("http://{host}{}", crate::site::SITE_PATH)),
        );
    }
    let index = shared.answered.fetch_add(1, Ordering::Relaxed);
    let Step::Reply(reply) = (shared.responder)(&request, index) else {
        return json_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            &error_body(
                "demo LLM: the responder gave a step other than a reply; this server sends replies only",
                "server_error",
            ),
        );
    };
    let shape = RequestShape::of(&request, raw.len());
    sleep_ms(reply.delay_ms).await;
    let rendered = Rendered::new(&reply, &shape, index);
    if shape.stream {
        let events = rendered.chunks(shape.include_usage, false);
        let events = events.into_iter().map(|data| (None, data)).collect();
        return sse_response(events, reply.chunk_delay_ms);
    }
    json_response(StatusCode::OK, &rendered.completion())
}

async fn models() -> Response {
    json_response(
        StatusCode::OK,
        &json!({"object": "list", "data": [
            {"id": MODEL, "object": "model", "created": 1_700_000_000u64, "owned_by": "tandem"},
        ]}),
    )
}

async fn unexpected(method: Method, uri: Uri) -> Response {
    let message = format!("demo LLM: no route for {method} {}", uri.path());
    json_response(
        StatusCode::NOT_FOUND,
        &error_body(&message, "invalid_request_error"),
    )
}
