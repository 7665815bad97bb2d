//! The OpenAI-compatible gateway: OpenAI clients call the agent as a model.
//!
//! - `GET /v1/models` lists every LLM profile as `openhands_{profile}`: the saved ones
//!   (`/api/profiles`) and the ones the server was started with (`LLM_MODEL` → `default`,
//!   `--llm demo`). `tandem_{profile}` and the bare profile name are accepted as aliases.
//! - `POST /v1/chat/completions` runs the agent on the latest user message with the model's
//!   profile and answers its final text in OpenAI's shape; `system` / `developer` messages are
//!   appended to the agent's system prompt (its `system_message_suffix`), never replacing it;
//!   image parts (`image_url`, data URLs included) reach the model as images. Every answer,
//!   streamed or not, carries `X-OpenHands-ServerConversation-ID`: sent back in the next
//!   request (alias `X-Tandem-Conversation-ID`) it continues that conversation. A header
//!   naming no conversation starts one with that id (as upstream). `stream: true` answers
//!   `chat.completion.chunk` events (the role at once, the text when the run ends, then
//!   `finish_reason: stop`), with `stream_options.include_usage` a last chunk with `usage`
//!   and no choices, then `data: [DONE]`.
//! - `POST /v1/responses` takes `input` (text or messages; `instructions` and system messages
//!   are appended to the system prompt) and answers a `response` whose `output_text` is the
//!   final answer. Its id names the conversation, so `previous_response_id` continues it (an
//!   unknown or deleted one is a 404). `stream: true` sends `response.created`,
//!   `response.in_progress`, `response.output_item.added`, `response.content_part.added`,
//!   `response.output_text.delta`, `response.output_text.done`, `response.content_part.done`,
//!   `response.output_item.done` and `response.completed` (or `response.failed`).
//! - `usage` counts the prompt and completion tokens of this request's LLM calls, from the
//!   conversation's metrics; zero where the provider reported none.
//!
//! **Cleanup policy.** Conversations the gateway starts are tagged `source: gateway` and kept
//! so a client can continue them, then deleted: when unused (no request has run on them) for
//! `gateway_retention` (1 hour; `TANDEM_GATEWAY_RETENTION_SECONDS`), and beyond
//! `gateway_max_retained` of them (100; `TANDEM_GATEWAY_MAX_RETAINED`) the least recently used
//! first. A conversation with a request in flight is never deleted, and each request restarts
//! its clock. The policy survives restarts (the server finds its gateway conversations on disk
//! and ages them from their last update). Conversations created through `/api` and continued
//! through the gateway are never deleted by it.
//!
//! **Titles.** Conversations the gateway starts are not titled by the LLM (a title is an
//! extra paid call the client never sees), unless the request asks: a body field
//! `"autotitle": true` (OpenAI SDKs send it with `extra_body`) or the header
//! `X-Tandem-Autotitle: true`.
//!
//! **LLM failures** answer at once when they are permanent (a profile whose host does not
//! resolve, a refused loopback port, a refused key, an unknown model): the error names what
//! failed and what to check. A rate limit answers 429, an unavailable provider 503, a
//! provider timeout 504, an overlong prompt 400 `context_length_exceeded`, anything else 502
//! `agent_error`; a streamed request gets the same error as its last chunk before `[DONE]`.
//!
//! Errors anywhere under `/v1` (bad JSON, a missing field, an unknown model, route or
//! `previous_response_id`, a wrong method, a wrong key, a failed run) answer OpenAI's
//! `{"error": {"message", "type", "param", "code"}}`.

mod chat;
mod input;
mod responses;
mod retention;
mod run;

use std::borrow::Cow;
use std::convert::Infallible;

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use futures::channel::mpsc::UnboundedReceiver;
use serde::de::DeserializeOwned;
use tandem_protocol::{LlmConfig, ModelEntry, ModelList, OpenAiError, OpenAiErrorResponse};

pub use chat::chat;
pub use responses::responses;
pub use retention::Retained;

use crate::AppState;
use crate::error::ApiError;

/// Header naming the conversation to continue (and naming it in every answer).
pub const CONVERSATION_HEADER: &str = "x-openhands-serverconversation-id";
/// Tandem's alias of [`CONVERSATION_HEADER`] in requests.
pub const CONVERSATION_HEADER_ALIAS: &str = "x-tandem-conversation-id";
/// Header a request sets to `true` to have its new conversation titled by the LLM.
pub const AUTOTITLE_HEADER: &str = "x-tandem-autotitle";
/// The model prefix of a profile.
pub const MODEL_PREFIX: &str = "openhands_";

/// An error response in OpenAI's shape.
pub fn openai_error(status: StatusCode, message: &str, kind: &str, code: &str) -> Response {
    GatewayError::new(status, message, kind.to_owned(), code.to_owned()).into_response()
}

/// An error of a `/v1` route (boxed: results stay small).
#[derive(Debug, Clone)]
pub struct GatewayError(Box<Detail>);

/// What a [`GatewayError`] says.
#[derive(Debug, Clone)]
pub struct Detail {
    status: StatusCode,
    message: String,
    kind: Cow<'static, str>,
    code: Cow<'static, str>,
    param: Option<String>,
    /// The conversation the request ran on, named in the answer's header.
    conversation: Option<String>,
}

impl GatewayError {
    fn new(
        status: StatusCode,
        message: impl Into<String>,
        kind: impl Into<Cow<'static, str>>,
        code: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self(Box::new(Detail {
            status,
            message: message.into(),
            kind: kind.into(),
            code: code.into(),
            param: None,
            conversation: None,
        }))
    }

    /// A 400 `invalid_request_error` about `param`.
    fn invalid(message: impl Into<String>, param: Option<&str>) -> Self {
        let mut e = Self::new(
            StatusCode::BAD_REQUEST,
            message,
            "invalid_request_error",
            "invalid_request",
        );
        e.param = param.map(str::to_owned);
        e
    }

    fn with_param(mut self, param: &str) -> Self {
        self.param = Some(param.to_owned());
        self
    }

    fn in_conversation(mut self, id: &str) -> Self {
        self.conversation = Some(id.to_owned());
        self
    }

    /// The body (for SSE `data:` lines too).
    fn body(&self) -> OpenAiErrorResponse {
        OpenAiErrorResponse {
            error: OpenAiError {
                message: self.message.clone(),
                kind: self.kind.to_string(),
                param: self.param.clone(),
                code: Some(self.code.to_string()),
            },
        }
    }
}

impl std::ops::Deref for GatewayError {
    type Target = Detail;
    fn deref(&self) -> &Detail {
        &self.0
    }
}

impl std::ops::DerefMut for GatewayError {
    fn deref_mut(&mut self) -> &mut Detail {
        &mut self.0
    }
}

impl IntoResponse for GatewayError {
    fn into_response(self) -> Response {
        if self.status.is_server_error() {
            tracing::warn!(code = %self.code, "gateway: {}", self.message);
        }
        let mut resp = (self.status, Json(self.body())).into_response();
        if let Some(id) = &self.conversation {
            name_conversation(&mut resp, id);
        }
        resp
    }
}

impl From<ApiError> for GatewayError {
    fn from(e: ApiError) -> Self {
        let status = e.status();
        let kind = match status {
            StatusCode::UNAUTHORIZED => "authentication_error",
            StatusCode::NOT_FOUND => "not_found_error",
            StatusCode::TOO_MANY_REQUESTS => "rate_limit_error",
            StatusCode::CONFLICT => "conflict_error",
            s if s.is_client_error() => "invalid_request_error",
            _ => "server_error",
        };
        let param = match &e {
            ApiError::Validation(items) => items.first().map(|i| {
                i.loc
                    .iter()
                    .skip(1)
                    .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    .collect::<Vec<_>>()
                    .join(".")
            }),
            _ => None,
        };
        let mut out = Self::new(status, e.to_string(), kind, e.code());
        out.param = param.filter(|p| !p.is_empty());
        out
    }
}

/// Parses a JSON body as `T`: 400 for JSON that does not parse, 422 naming the field that
/// does not fit.
fn parse_body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, GatewayError> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        let mut err = GatewayError::invalid(format!("The body is not valid JSON: {e}"), None);
        err.code = "invalid_json".into();
        err
    })?;
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.inner().to_string();
        let param = match inner
            .strip_prefix("missing field `")
            .and_then(|r| r.split('`').next())
        {
            Some(field) if path == "." => field.to_owned(),
            Some(field) => format!("{path}.{field}"),
            None => path,
        };
        let mut err = GatewayError::invalid(format!("Invalid request body: {inner}"), None)
            .with_param(&param);
        err.status = StatusCode::UNPROCESSABLE_ENTITY;
        err.code = "invalid_request_body".into();
        err
    })
}

/// Whether a request asks for its new conversation to be titled by the LLM: the body field
/// `autotitle` (a boolean) or the header [`AUTOTITLE_HEADER`] (`true`/`false`, `1`/`0`);
/// off when neither says. 400 naming the field or header when it is not a boolean.
fn wants_title(headers: &HeaderMap, extra: &tandem_protocol::Extra) -> Result<bool, GatewayError> {
    if let Some(v) = extra.get("autotitle") {
        return v.as_bool().ok_or_else(|| {
            GatewayError::invalid(
                format!("`autotitle` must be true or false, not {v}."),
                Some("autotitle"),
            )
        });
    }
    let Some(raw) = headers.get(AUTOTITLE_HEADER) else {
        return Ok(false);
    };
    match raw
        .to_str()
        .map(|s| s.trim().to_ascii_lowercase())
        .as_deref()
    {
        Ok("true" | "1") => Ok(true),
        Ok("false" | "0") => Ok(false),
        _ => Err(GatewayError::invalid(
            "The X-Tandem-Autotitle header must be `true` or `false`.",
            Some("X-Tandem-Autotitle"),
        )),
    }
}

/// Puts the conversation's id in the answer's [`CONVERSATION_HEADER`].
fn name_conversation(resp: &mut Response, id: &str) {
    if let Ok(v) = HeaderValue::from_str(id) {
        resp.headers_mut().insert(CONVERSATION_HEADER, v);
    }
}

/// An SSE answer of the events sent to `rx` (kept alive while the run goes on), naming
/// conversation `id`.
fn sse(rx: UnboundedReceiver<SseEvent>, id: &str) -> Response {
    let mut resp = Sse::new(rx.map(Ok::<_, Infallible>))
        .keep_alive(KeepAlive::default())
        .into_response();
    name_conversation(&mut resp, id);
    resp
}

/// Unix seconds now.
fn now() -> i64 {
    chrono::Utc::now().timestamp()
}

/// The LLM profile a model id names: `openhands_{p}`, `tandem_{p}` or `{p}`; 404
/// `model_not_found` otherwise.
fn profile_for(state: &AppState, model: &str) -> Result<LlmConfig, GatewayError> {
    let name = model
        .strip_prefix(MODEL_PREFIX)
        .or_else(|| model.strip_prefix("tandem_"))
        .unwrap_or(model);
    let name = tandem_host::profiles::canonical(name);
    state
        .config
        .profile_store
        .get(name)
        .or_else(|| state.config.profiles.get(name).cloned())
        .ok_or_else(|| {
            GatewayError::new(
                StatusCode::NOT_FOUND,
                format!("The model `{model}` does not exist; GET /v1/models lists the models."),
                "invalid_request_error",
                "model_not_found",
            )
            .with_param("model")
        })
}

/// `GET /v1/models`: every profile as `openhands_{profile}`, sorted.
pub async fn models(State(state): State<AppState>) -> Json<ModelList> {
    let data = state
        .config
        .all_profiles()
        .keys()
        .map(|p| ModelEntry {
            id: format!("{MODEL_PREFIX}{p}"),
            object: "model".into(),
            created: 0,
            owned_by: "tandem".into(),
        })
        .collect();
    Json(ModelList {
        object: "list".into(),
        data,
    })
}

/// Middleware: an answer under `/v1` that is not JSON (axum's own 404 for an unknown route,
/// 405 for a wrong method, 413 for a body over the limit) becomes an OpenAI-shaped error.
pub async fn openai_errors(req: Request, next: Next) -> Response {
    let path = req.uri().path().to_owned();
    if path != "/v1" && !path.starts_with("/v1/") {
        return next.run(req).await;
    }
    let method = req.method().clone();
    let resp = next.run(req).await;
    let status = resp.status();
    let json = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/event-stream"));
    if status.is_success() || json || method == Method::OPTIONS {
        return resp;
    }
    let (message, kind, code) = match status {
        StatusCode::NOT_FOUND => (
            format!(
                "Unknown route {method} {path}; the gateway serves /v1/models, /v1/chat/completions and /v1/responses."
            ),
            "invalid_request_error",
            "unknown_route",
        ),
        StatusCode::METHOD_NOT_ALLOWED => (
            format!("{method} is not allowed on {path}."),
            "invalid_request_error",
            "method_not_allowed",
        ),
        StatusCode::PAYLOAD_TOO_LARGE => (
            "The request body is larger than this server accepts.".to_owned(),
            "invalid_request_error",
            "payload_too_large",
        ),
        s if s.is_client_error() => (
            format!("The request was refused ({s})."),
            "invalid_request_error",
            "invalid_request",
        ),
        s => (
            format!("The server failed ({s})."),
            "server_error",
            "internal_error",
        ),
    };
    let mut out = GatewayError::new(status, message, kind, code).into_response();
    if let Some(allow) = resp.headers().get(header::ALLOW) {
        out.headers_mut().insert(header::ALLOW, allow.clone());
    }
    drop(resp);
    out
}
