//! Errors of LLM calls, each with the code upstream uses for it.

use std::time::Duration;

/// Result of an LLM call.
pub type Result<T> = std::result::Result<T, LlmError>;

/// Why an LLM call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// The provider rejected the key (401/403).
    #[error("authentication failed (HTTP {status}): {message} (check the API key of this model)")]
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
    /// The request was rejected as invalid (4xx other than auth and rate limits); a 404 means
    /// the base URL or the model name is wrong.
    #[error("{} (HTTP {status}): {message} ({})", rejected(.status), fix_for(.status))]
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
    /// The connection failed or was reset: may work on the next try.
    #[error("connection failed: {0}")]
    Connection(String),
    /// The server cannot be reached and trying again will not change that: its host name does
    /// not resolve, nothing listens on a loopback port, its TLS certificate is refused, or it
    /// does not speak TLS.
    #[error("cannot reach the LLM at {url}: {reason} (check base_url)")]
    Unreachable {
        /// The URL the request went to.
        url: String,
        /// What failed.
        reason: String,
    },
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
            Self::Connection(_) | Self::Unreachable { .. } => "LLMConnectionError",
            Self::MalformedResponse(_) => "LLMMalformedResponseError",
            Self::Config(_) => "LLMConfigurationError",
            Self::Cancelled => "LLMCancelledError",
        }
    }

    /// Whether trying again may succeed: only transient failures (rate limits, 5xx, timeouts,
    /// resets, a reply cut short). Everything that names a wrong key, URL, model or request
    /// fails at once. Every variant is named, so a new one must be classified here.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::RateLimited { .. }
            | Self::ServiceUnavailable { .. }
            | Self::Timeout(_)
            | Self::Connection(_)
            | Self::MalformedResponse(_) => true,
            Self::Auth { .. }
            | Self::BadRequest { .. }
            | Self::ContextWindowExceeded(_)
            | Self::Unreachable { .. }
            | Self::Config(_)
            | Self::Cancelled => false,
        }
    }

    /// The wait the provider asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Self::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }
}

/// What a rejected request is called in its message.
fn rejected(status: &u16) -> &'static str {
    if *status == 404 {
        "not found"
    } else {
        "bad request"
    }
}

/// What to check for a rejected request.
fn fix_for(status: &u16) -> &'static str {
    if *status == 404 {
        "check base_url and the model name"
    } else {
        "check the model name and its settings"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_fix() {
        let auth = LlmError::Auth {
            status: 401,
            message: "Incorrect API key".into(),
        };
        assert!(auth.to_string().contains("check the API key"), "{auth}");
        let missing = LlmError::BadRequest {
            status: 404,
            message: "no such model".into(),
        };
        assert_eq!(
            missing.to_string(),
            "not found (HTTP 404): no such model (check base_url and the model name)"
        );
        let bad = LlmError::BadRequest {
            status: 400,
            message: "unknown parameter".into(),
        };
        assert!(
            bad.to_string().starts_with("bad request (HTTP 400)"),
            "{bad}"
        );
        let unreachable = LlmError::Unreachable {
            url: "http://llm.invalid/v1".into(),
            reason: "the host name does not resolve".into(),
        };
        assert!(unreachable.to_string().contains("check base_url"));
        assert!(!unreachable.is_retryable());
        assert_eq!(unreachable.code(), "LLMConnectionError");
    }
}
