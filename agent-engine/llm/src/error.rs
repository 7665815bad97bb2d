//! Errors of LLM calls, each with the code upstream uses for it.

use std::time::Duration;

/// Result of an LLM call.
pub type Result<T> = std::result::Result<T, LlmError>;

/// Why an LLM call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// The provider rejected the key (401/403).
    #[error("authentication failed (HTTP {status}): {message}")]
    Auth {
        /// HTTP status.
        status: u16,
        /// Provider message.
        message: String,
    },
    /// Too many requests (429).
    #[error("rate limited (HTTP 429): {message}")]
    RateLimited {
        /// How long the provider asked to wait.
        retry_after: Option<Duration>,
        /// Provider message.
        message: String,
    },
    /// The provider failed (5xx).
    #[error("provider unavailable (HTTP {status}): {message}")]
    ServiceUnavailable {
        /// HTTP status.
        status: u16,
        /// Provider message.
        message: String,
    },
    /// The request was rejected as invalid (4xx other than auth and rate limits).
    #[error("bad request (HTTP {status}): {message}")]
    BadRequest {
        /// HTTP status.
        status: u16,
        /// Provider message.
        message: String,
    },
    /// The prompt does not fit the model's context window.
    #[error("context window exceeded: {0}")]
    ContextWindowExceeded(String),
    /// No reply within the timeout.
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    /// The connection failed or was reset.
    #[error("connection failed: {0}")]
    Connection(String),
    /// The reply could not be understood.
    #[error("malformed reply: {0}")]
    MalformedResponse(String),
    /// The configuration is unusable (no model, bad URL, ...).
    #[error("invalid LLM configuration: {0}")]
    Config(String),
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}

impl LlmError {
    /// The upstream error class name, used as `ConversationErrorEvent.code`.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Auth { .. } => "LLMAuthenticationError",
            Self::RateLimited { .. } => "LLMRateLimitError",
            Self::ServiceUnavailable { .. } => "LLMServiceUnavailableError",
            Self::BadRequest { .. } => "LLMBadRequestError",
            Self::ContextWindowExceeded(_) => "LLMContextWindowExceedError",
            Self::Timeout(_) => "LLMTimeoutError",
            Self::Connection(_) => "LLMConnectionError",
            Self::MalformedResponse(_) => "LLMMalformedResponseError",
            Self::Config(_) => "LLMConfigurationError",
            Self::Cancelled => "LLMCancelledError",
        }
    }

    /// Whether trying again may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::RateLimited { .. }
                | Self::ServiceUnavailable { .. }
                | Self::Timeout(_)
                | Self::Connection(_)
                | Self::MalformedResponse(_)
        )
    }

    /// The wait the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}
