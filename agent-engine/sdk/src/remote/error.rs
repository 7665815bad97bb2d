//! Errors of the remote client: each names what failed and carries a machine-readable code.

use std::path::PathBuf;

/// Result with [`RemoteError`].
pub type RemoteResult<T> = std::result::Result<T, RemoteError>;

/// What went wrong talking to an agent server.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The URL is not an `http(s)://` URL.
    #[error("invalid server URL `{0}`: expected http://host:port or https://host")]
    InvalidUrl(String),
    /// Nothing answered at the URL (refused, DNS, TLS, timeout).
    #[error("cannot reach the agent server at {url}: {detail}")]
    Unreachable {
        /// The server URL.
        url: String,
        /// The cause.
        detail: String,
    },
    /// Something answered, but not an OpenHands-compatible agent server.
    #[error("{url} is not an OpenHands-compatible agent server: {detail}")]
    NotAnAgentServer {
        /// The server URL.
        url: String,
        /// What it answered instead.
        detail: String,
    },
    /// The server rejected the session key (HTTP 401/403, WebSocket close 4001).
    #[error("unauthorized: the agent server at {url} rejected the session key (X-Session-API-Key)")]
    Unauthorized {
        /// The server URL.
        url: String,
    },
    /// The conversation, event or file does not exist on the server.
    #[error("not found: {0}")]
    NotFound(String),
    /// The request does not fit the conversation's state (HTTP 409).
    #[error("conflict: {detail}")]
    Conflict {
        /// The server's `detail`.
        detail: String,
        /// The server's machine-readable `code`, when it sends one (a Tandem server says
        /// `already_running` or `conflict`; upstream sends none).
        code: Option<String>,
    },
    /// Any other non-success HTTP answer.
    #[error("{method} {path} failed with HTTP {status}: {detail}")]
    Status {
        /// HTTP method.
        method: String,
        /// Request path.
        path: String,
        /// HTTP status code.
        status: u16,
        /// The server's `detail` (or body).
        detail: String,
    },
    /// A response body could not be read as the expected JSON.
    #[error("unexpected answer to {what}: {detail}")]
    Decode {
        /// What was being read.
        what: String,
        /// Why it did not parse.
        detail: String,
    },
    /// The event WebSocket failed in a way a reconnect does not fix.
    #[error("event stream: {0}")]
    Stream(String),
    /// A local file operation failed (upload source, download target).
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The local file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// Waited too long.
    #[error("timed out: {0}")]
    Timeout(String),
    /// The conversation handle was closed.
    #[error("the remote conversation was closed")]
    Closed,
}

impl RemoteError {
    /// A stable, machine-readable code for the UI.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidUrl(_) => "invalid_url",
            Self::Unreachable { .. } => "unreachable",
            Self::NotAnAgentServer { .. } => "not_an_agent_server",
            Self::Unauthorized { .. } => "unauthorized",
            Self::NotFound(_) => "not_found",
            Self::Conflict { .. } => "conflict",
            Self::Status { .. } => "http_status",
            Self::Decode { .. } => "bad_response",
            Self::Stream(_) => "stream",
            Self::Io { .. } => "io",
            Self::Timeout(_) => "timeout",
            Self::Closed => "closed",
        }
    }
}
