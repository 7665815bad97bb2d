//! The scripted LLM server: a real HTTP server on loopback speaking OpenAI Chat Completions
//! (`/v1/chat/completions`), OpenAI Responses (`/v1/responses`) and Anthropic Messages
//! (`/v1/messages`), answering from one [`Script`] or [`Responder`] whatever the protocol,
//! capturing every request and checking each protocol's invariants on it.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::Response;
use axum::routing::{get, post};
use serde_json::{Value, json};
use tandem_demo::http::{BackgroundServer, json_response, sleep_ms, sse_response, text_response};
use tandem_demo::openai_chat::{Rendered, RequestShape, error_body};
use tandem_demo::{ErrorReply, RawReply, Reply, Responder, Script, Step};
use tandem_protocol::LlmConfig;

use crate::invariants::check_request;
use crate::{anthropic, responses};

/// One request the server received.
#[derive(Debug, Clone, PartialEq)]
pub struct CapturedRequest {
    /// HTTP method.
    pub method: String,
    /// Request path (`/v1/chat/completions`).
    pub path: String,
    /// Headers, names lowercased.
    pub headers: BTreeMap<String, String>,
    /// The JSON body; the raw text as a JSON string when it was not JSON.
    pub body: Value,
}

/// The wire protocol of a request, by path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireProtocol {
    /// OpenAI Chat Completions (`/v1/chat/completions`).
    Chat,
    /// OpenAI Responses (`/v1/responses`).
    Responses,
    /// Anthropic Messages (`/v1/messages`).
    Anthropic,
}

impl WireProtocol {
    /// The protocol of a completion request path, `None` for other paths.
    pub fn of_path(path: &str) -> Option<Self> {
        if path.ends_with("/chat/completions") {
            Some(Self::Chat)
        } else if path.ends_with("/responses") {
            Some(Self::Responses)
        } else if path.ends_with("/messages") {
            Some(Self::Anthropic)
        } else {
            None
        }
    }

    /// The error body this protocol's servers send.
    fn error_body(self, status: u16, message: &str, kind: &str) -> Value {
        match self {
            Self::Anthropic => anthropic::error_body(message, status),
            Self::Chat | Self::Responses => error_body(message, kind),
        }
    }
}

/// Where answers come from.
#[derive(Clone)]
pub enum Source {
    /// Steps consumed in order.
    Script(Script),
    /// A function of the request.
    Responder(Responder),
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Script(script) => f.debug_tuple("Script").field(script).finish(),
            Self::Responder(_) => f.write_str("Responder(..)"),
        }
    }
}

struct ServerState {
    steps: VecDeque<Step>,
    responder: Option<Responder>,
    no_tools_text: Option<String>,
    scripted: usize,
    captured: Vec<CapturedRequest>,
    exhausted: usize,
    violations: Vec<String>,
}

impl ServerState {
    /// Keeps `request` and returns its number.
    fn record(&mut self, request: CapturedRequest) -> usize {
        self.captured.push(request);
        self.captured.len() - 1
    }
}

type Shared = Arc<Mutex<ServerState>>;

fn lock(shared: &Shared) -> MutexGuard<'_, ServerState> {
    // A panic while holding the lock cannot leave the state half-updated in a way that matters
    // to a test kit, so a poisoned lock is used as it is.
    shared
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A scripted OpenAI-compatible LLM server on `127.0.0.1`. It runs on its own thread and
/// runtime (so it works from sync tests and is unaffected by paused test clocks) and shuts
/// down when dropped.
pub struct ScriptedLlmServer {
    server: BackgroundServer,
    state: Shared,
}

impl std::fmt::Debug for ScriptedLlmServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScriptedLlmServer")
            .field("addr", &self.server.addr())
            .finish_non_exhaustive()
    }
}

impl ScriptedLlmServer {
    /// Starts a server answering from `script` on a free loopback port.
    ///
    /// # Panics
    /// When no loopback port can be bound: a test kit should fail the test loudly then.
    pub fn start(script: impl Into<Script>) -> Self {
        Self::start_source(Source::Script(script.into()))
    }

    /// Starts a server whose answers `responder` makes (for generated conversations).
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub fn with_responder(responder: Responder) -> Self {
        Self::start_source(Source::Responder(responder))
    }

    fn start_source(source: Source) -> Self {
        match Self::bind(SocketAddr::from(([127, 0, 0, 1], 0)), source) {
            Ok(server) => server,
            Err(err) => panic!("scripted LLM server: cannot bind 127.0.0.1:0: {err}"),
        }
    }

    /// Starts a server on `addr` (port 0 picks a free one).
    pub fn bind(addr: SocketAddr, source: Source) -> std::io::Result<Self> {
        let (steps, responder, no_tools_text) = match source {
            Source::Script(script) => (script.steps.into(), None, script.no_tools_text),
            Source::Responder(responder) => (VecDeque::new(), Some(responder), None),
        };
        let state = Arc::new(Mutex::new(ServerState {
            steps,
            responder,
            no_tools_text,
            scripted: 0,
            captured: Vec::new(),
            exhausted: 0,
            violations: Vec::new(),
        }));
        let chat = post(
            |state: State<Shared>, method: Method, uri: Uri, headers: HeaderMap, raw: Bytes| {
                completion(WireProtocol::Chat, state, method, uri, headers, raw)
            },
        );
        let responses = post(
            |state: State<Shared>, method: Method, uri: Uri, headers: HeaderMap, raw: Bytes| {
                completion(WireProtocol::Responses, state, method, uri, headers, raw)
            },
        );
        let messages = post(
            |state: State<Shared>, method: Method, uri: Uri, headers: HeaderMap, raw: Bytes| {
                completion(WireProtocol::Anthropic, state, method, uri, headers, raw)
            },
        );
        let router = Router::new()
            .route("/v1/chat/completions", chat.clone())
            .route("/chat/completions", chat)
            .route("/v1/responses", responses.clone())
            .route("/responses", responses)
            .route("/v1/messages", messages.clone())
            .route("/messages", messages)
            .route("/v1/models", get(models))
            .route("/models", get(models))
            .fallback(unexpected)
            .with_state(state.clone());
        let server = BackgroundServer::bind(addr, router, "scripted-llm")?;
        Ok(Self { server, state })
    }

    /// The OpenAI base URL, e.g. `http://127.0.0.1:41234/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.server.addr())
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.server.addr()
    }

    /// The Anthropic base URL, e.g. `http://127.0.0.1:41234` (the client adds `/v1/messages`).
    pub fn anthropic_base_url(&self) -> String {
        format!("http://{}", self.server.addr())
    }

    /// [`llm::config`](crate::llm::config) of `model` sending here: to the Anthropic base URL
    /// for `anthropic/` models (the protocol `tandem-llm` picks for them), else the OpenAI one.
    pub fn llm_config(&self, model: &str) -> LlmConfig {
        let base_url = if model.starts_with("anthropic/") {
            self.anthropic_base_url()
        } else {
            self.base_url()
        };
        crate::llm::config(model, &base_url)
    }

    /// Bodies of every completion request received (any protocol), in order.
    pub fn requests(&self) -> Vec<Value> {
        lock(&self.state)
            .captured
            .iter()
            .filter(|r| WireProtocol::of_path(&r.path).is_some())
            .map(|r| r.body.clone())
            .collect()
    }

    /// Every request received (chat completions, models, unexpected paths), with headers.
    pub fn captured(&self) -> Vec<CapturedRequest> {
        lock(&self.state).captured.clone()
    }

    /// The last completion request body.
    pub fn last_request(&self) -> Option<Value> {
        self.requests().pop()
    }

    /// How many completion requests were received (any protocol).
    pub fn request_count(&self) -> usize {
        lock(&self.state)
            .captured
            .iter()
            .filter(|r| WireProtocol::of_path(&r.path).is_some())
            .count()
    }

    /// Whether a request arrived after the script ran out (each was answered with a 500).
    pub fn exhausted(&self) -> bool {
        lock(&self.state).exhausted > 0
    }

    /// Steps not consumed yet.
    pub fn remaining_steps(&self) -> usize {
        lock(&self.state).steps.len()
    }

    /// Invariant violations seen in requests (`request #N: ...`), and unexpected paths.
    pub fn violations(&self) -> Vec<String> {
        lock(&self.state).violations.clone()
    }

    /// Appends a step to the script.
    pub fn push_step(&self, step: Step) {
        lock(&self.state).steps.push_back(step);
    }

    /// Answers requests without `tools` with `text` from now on, consuming no step.
    pub fn set_no_tools_text(&self, text: impl Into<String>) {
        lock(&self.state).no_tools_text = Some(text.into());
    }
}

/// What to answer, decided under the lock.
enum Decision {
    Step { step: Box<Step>, number: usize },
    Canned { text: String, number: usize },
    Exhausted(String),
    NotJson,
}

fn capture(method: &Method, uri: &Uri, headers: &HeaderMap, body: Value) -> CapturedRequest {
    CapturedRequest {
        method: method.to_string(),
        path: uri.path().to_owned(),
        headers: headers
            .iter()
            .map(|(name, value)| {
                (
                    name.as_str().to_owned(),
                    String::from_utf8_lossy(value.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body,
    }
}

async fn completion(
    protocol: WireProtocol,
    State(shared): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    raw: Bytes,
) -> Response {
    let parsed: Option<Value> = serde_json::from_slice(&raw).ok();
    let body = parsed
        .clone()
        .unwrap_or_else(|| Value::String(String::from_utf8_lossy(&raw).into()));
    let decision = {
        let mut state = lock(&shared);
        let number = state.record(capture(&method, &uri, &headers, body.clone()));
        match &parsed {
            None => Decision::NotJson,
            Some(request) => {
                let found = match protocol {
                    WireProtocol::Chat => check_request(request),
                    WireProtocol::Responses => responses::check_request(request),
                    WireProtocol::Anthropic => anthropic::check_request(request),
                };
                state
                    .violations
                    .extend(found.into_iter().map(|v| format!("request #{number}: {v}")));
                let has_tools = request
                    .get("tools")
                    .and_then(Value::as_array)
                    .is_some_and(|t| !t.is_empty());
                if let (false, Some(text)) = (has_tools, state.no_tools_text.clone()) {
                    Decision::Canned { text, number }
                } else {
                    let index = state.scripted;
                    let next = match &state.responder {
                        Some(responder) => Some(responder(request, index)),
                        None => state.steps.pop_front(),
                    };
                    match next {
                        Some(step) => {
                            state.scripted += 1;
                            Decision::Step {
                                step: Box::new(step),
                                number,
                            }
                        }
                        None => {
                            state.exhausted += 1;
                            Decision::Exhausted(format!(
                                "scripted LLM: script exhausted after {index} step(s); \
                                 request #{number} has no answer"
                            ))
                        }
                    }
                }
            }
        }
    };
    let shape = RequestShape::of(&body, raw.len());
    match decision {
        Decision::NotJson => json_response(
            StatusCode::BAD_REQUEST,
            &protocol.error_body(
                400,
                "scripted LLM: request body is not JSON",
                "invalid_request_error",
            ),
        ),
        Decision::Exhausted(message) => {
            eprintln!("{message}");
            json_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                &protocol.error_body(500, &message, "script_exhausted"),
            )
        }
        Decision::Canned { text, number } => {
            reply(protocol, &Reply::text(text), &shape, number, false).await
        }
        Decision::Step { step, number } => answer(protocol, *step, &shape, number).await,
    }
}

async fn answer(
    protocol: WireProtocol,
    step: Step,
    shape: &RequestShape,
    number: usize,
) -> Response {
    match step {
        Step::Reply(r) => reply(protocol, &r, shape, number, false).await,
        Step::Truncated(r) => reply(protocol, &r, shape, number, true).await,
        Step::Error(e) => error(protocol, e).await,
        Step::Garbled { delay_ms } => {
            sleep_ms(delay_ms).await;
            garbled(protocol, shape)
        }
        Step::Raw(r) => raw(r).await,
    }
}

async fn reply(
    protocol: WireProtocol,
    r: &Reply,
    shape: &RequestShape,
    number: usize,
    truncated: bool,
) -> Response {
    sleep_ms(r.delay_ms).await;
    let body = match protocol {
        WireProtocol::Chat => {
            let rendered = Rendered::new(r, shape, number);
            if shape.stream {
                let events = rendered.chunks(shape.include_usage, truncated);
                let events = events.into_iter().map(|data| (None, data)).collect();
                return sse_response(events, r.chunk_delay_ms);
            }
            rendered.completion()
        }
        WireProtocol::Responses => {
            let rendered = responses::Rendered::new(r, shape, number);
            if shape.stream {
                return sse_response(named(rendered.events(truncated)), r.chunk_delay_ms);
            }
            rendered.response()
        }
        WireProtocol::Anthropic => {
            let rendered = anthropic::Rendered::new(r, shape, number);
            if shape.stream {
                return sse_response(named(rendered.events(truncated)), r.chunk_delay_ms);
            }
            rendered.message()
        }
    };
    let body = body.to_string();
    let body = if truncated { cut_in_half(&body) } else { body };
    text_response(StatusCode::OK, "application/json", body)
}

fn cut_in_half(text: &str) -> String {
    let mut end = text.len() / 2;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

fn named(events: Vec<(String, String)>) -> Vec<(Option<String>, String)> {
    events
        .into_iter()
        .map(|(name, data)| (Some(name), data))
        .collect()
}

fn garbled(protocol: WireProtocol, shape: &RequestShape) -> Response {
    if shape.stream {
        let events = match protocol {
            WireProtocol::Chat => vec![
                (None, r#"{"id":"chatcmpl-garbled","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hel"#
                    .to_owned()),
                (None, "[DONE]".to_owned()),
            ],
            WireProtocol::Responses => vec![
                (Some("response.output_text.delta".to_owned()),
                    r#"{"type":"response.output_text.delta","delta":"Hel"#.to_owned()),
            ],
            WireProtocol::Anthropic => vec![
                (Some("message_start".to_owned()),
                    r#"{"type":"message_start","message":{"id":"msg_garbled","#.to_owned()),
            ],
        };
        return sse_response(events, 0);
    }
    text_response(
        StatusCode::OK,
        "application/json",
        r#"{"id": "chatcmpl-garbled", "choices": [{"message": <<<garbled>>>"#.to_owned(),
    )
}

async fn error(protocol: WireProtocol, e: ErrorReply) -> Response {
    sleep_ms(e.delay_ms).await;
    let status = StatusCode::from_u16(e.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = match (e.body, e.content_type) {
        (Some(Value::String(text)), Some(content_type)) => {
            text_response(status, &content_type, text)
        }
        (Some(Value::String(message)), None) => json_response(
            status,
            &protocol.error_body(status.as_u16(), &message, error_kind(status)),
        ),
        (Some(other), _) => json_response(status, &other),
        (None, _) => {
            let message = format!("scripted error {}", status.as_u16());
            json_response(
                status,
                &protocol.error_body(status.as_u16(), &message, error_kind(status)),
            )
        }
    };
    if let Some(retry_after) = e.retry_after
        && let Ok(value) = HeaderValue::from_str(&retry_after)
    {
        response.headers_mut().insert(header::RETRY_AFTER, value);
    }
    response
}

fn error_kind(status: StatusCode) -> &'static str {
    match status.as_u16() {
        401 | 403 => "authentication_error",
        429 => "rate_limit_error",
        500.. => "server_error",
        _ => "invalid_request_error",
    }
}

async fn raw(r: RawReply) -> Response {
    sleep_ms(r.delay_ms).await;
    let status = if r.status == 0 {
        StatusCode::OK
    } else {
        StatusCode::from_u16(r.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
    };
    let content_type = r.content_type.as_deref().unwrap_or("application/json");
    let mut response = text_response(status, content_type, r.body);
    for (name, value) in r.headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value),
        ) {
            response.headers_mut().insert(name, value);
        }
    }
    response
}

async fn models(
    State(shared): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    lock(&shared).record(capture(&method, &uri, &headers, Value::Null));
    json_response(
        StatusCode::OK,
        &json!({"object": "list", "data": [
            {"id": "scripted", "object": "model", "created": 1_700_000_000u64, "owned_by": "tandem-testkit"},
        ]}),
    )
}

async fn unexpected(
    State(shared): State<Shared>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let mut state = lock(&shared);
    state
        .violations
        .push(format!("unexpected request {method} {}", uri.path()));
    state.record(capture(&method, &uri, &headers, Value::Null));
    let message = format!("scripted LLM: no route for {method} {}", uri.path());
    json_response(
        StatusCode::NOT_FOUND,
        &error_body(&message, "invalid_request_error"),
    )
}
