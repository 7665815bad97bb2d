//! Errors of the server: each has a machine-readable code, an HTTP status and a human message,
//! and answers in FastAPI's shapes (`{"detail": "..."}`, or the 422 list) so the official
//! client reads them as it reads upstream's.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tandem_protocol::{ErrorResponse, ValidationErrorItem, ValidationErrorResponse};
use tandem_sdk::SdkError;

/// Result with [`ApiError`].
pub type Result<T> = std::result::Result<T, ApiError>;

/// Why a request failed.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// No or a wrong session key.
    #[error("Unauthorized")]
    Unauthorized,
    /// No such conversation, event, secret or file.
    #[error("Not Found")]
    NotFound,
    /// Something inside an existing conversation is missing (an event id): 404 naming it, as
    /// upstream answers its branch routes.
    #[error("{0}")]
    Missing(String),
    /// A path outside the workspace.
    #[error("{0}")]
    Forbidden(String),
    /// `run` while the loop runs.
    #[error("Conversation already running. Wait for completion or pause first.")]
    AlreadyRunning,
    /// The request conflicts with the current state (e.g. a file changed since it was read).
    #[error("{0}")]
    Conflict(String),
    /// The conversation moved to another server: this one keeps a read-only record.
    #[error("this conversation moved to {} (conversation {}): it is a read-only record here", .0.url, .0.conversation_id)]
    Moved(tandem_protocol::api::MovedTo),
    /// This server's disk is full.
    #[error("{0}")]
    NoSpace(String),
    /// The conversation is arriving from another server and runs here once that move ends.
    #[error(
        "this conversation is arriving from {0}: it runs here once its source has let it go (POST /api/conversations/{{id}}/arrival)"
    )]
    Arriving(String),
    /// The body, a query or a path parameter does not fit the schema.
    #[error("invalid request: {}", .0.first().map_or("", |i| i.msg.as_str()))]
    Validation(Vec<ValidationErrorItem>),
    /// The body is over the limit.
    #[error("{0}")]
    TooLarge(String),
    /// The request cannot be served as asked.
    #[error("{0}")]
    BadRequest(String),
    /// A file is binary or too large to be shown as text.
    #[error("{0}")]
    Unprocessable(String),
    /// The LLM (or another upstream) failed or answered unusably.
    #[error("{0}")]
    Upstream(String),
    /// The LLM (or another upstream) did not answer in time.
    #[error("{0}")]
    Timeout(String),
    /// Something broke on the server.
    #[error("{0}")]
    Internal(String),
}

impl ApiError {
    /// A 422 about one field.
    pub fn field(loc: &[&str], kind: &str, msg: impl Into<String>, input: Value) -> Self {
        Self::Validation(vec![ValidationErrorItem {
            kind: kind.to_owned(),
            loc: loc.iter().map(|s| Value::String((*s).to_owned())).collect(),
            msg: msg.into(),
            input,
        }])
    }

    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Unauthorized => StatusCode::UNAUTHORIZED,
            Self::NotFound | Self::Missing(_) => StatusCode::NOT_FOUND,
            Self::Forbidden(_) => StatusCode::FORBIDDEN,
            Self::AlreadyRunning | Self::Conflict(_) | Self::Moved(_) | Self::Arriving(_) => {
                StatusCode::CONFLICT
            }
            Self::Validation(_) | Self::Unprocessable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Self::NoSpace(_) => StatusCode::INSUFFICIENT_STORAGE,
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Upstream(_) => StatusCode::BAD_GATEWAY,
            Self::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The machine-readable code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unauthorized => "unauthorized",
            Self::NotFound | Self::Missing(_) => "not_found",
            Self::Forbidden(_) => "outside_workspace",
            Self::AlreadyRunning => "already_running",
            Self::Conflict(_) => "conflict",
            Self::Moved(_) => "moved",
            Self::Arriving(_) => "arriving",
            Self::Validation(_) => "validation_error",
            Self::Unprocessable(_) => "unprocessable",
            Self::TooLarge(_) => "payload_too_large",
            Self::NoSpace(_) => "no_space",
            Self::BadRequest(_) => "bad_request",
            Self::Upstream(_) => "upstream_error",
            Self::Timeout(_) => "upstream_timeout",
            Self::Internal(_) => "internal_error",
        }
    }
}

impl From<SdkError> for ApiError {
    fn from(e: SdkError) -> Self {
        match e {
            SdkError::NotFound(_) => Self::NotFound,
            SdkError::AlreadyRunning => Self::AlreadyRunning,
            SdkError::InvalidState(m) => Self::Conflict(m),
            e @ SdkError::NotPending(_) => Self::Conflict(e.to_string()),
            SdkError::Config(m) => Self::BadRequest(m),
            SdkError::Llm(e) => Self::Upstream(e.to_string()),
            other => Self::Internal(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = match &self {
            Self::Validation(items) => json!(ValidationErrorResponse {
                detail: items.clone()
            }),
            // Exactly upstream's bodies, which clients compare.
            Self::Unauthorized | Self::NotFound => json!({"detail": self.to_string()}),
            Self::Moved(to) => json!({
                "detail": self.to_string(),
                "code": self.code(),
                "moved_to": to,
            }),
            other => json!(ErrorResponse {
                detail: other.to_string(),
                code: Some(other.code().to_owned())
            }),
        };
        if status.is_server_error() {
            tracing::warn!(code = self.code(), "{self}");
        }
        (status, axum::Json(body)).into_response()
    }
}
