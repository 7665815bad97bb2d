//! The one error type: every message names the MCP server it is about.

use std::time::Duration;

/// What went wrong, coarsely (what `/api/mcp/test` reports as `error_kind`, and what decides
/// whether a server is restarted).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpErrorKind {
    /// The server's entry in the config is unusable.
    Config,
    /// The server's process could not be started.
    Start,
    /// The server did not answer in time.
    Timeout,
    /// The connection failed or closed (the process exited, the HTTP server refused).
    Connection,
    /// The server sent something that is not JSON-RPC.
    Protocol,
    /// The server asks for a sign-in Tandem cannot do.
    Auth,
    /// The server answered with a JSON-RPC error.
    Rpc,
}

impl McpErrorKind {
    /// Upstream's coarse classification: `timeout`, `connection` or `unknown`.
    pub fn as_upstream(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Start | Self::Connection | Self::Auth => "connection",
            Self::Config | Self::Protocol | Self::Rpc => "unknown",
        }
    }
}

/// An MCP failure, naming its server.
#[derive(Debug, Clone, thiserror::Error)]
#[error("MCP server `{server}`: {message}")]
pub struct McpError {
    /// The server's name in the config.
    pub server: String,
    /// What kind of failure.
    pub kind: McpErrorKind,
    /// What happened, for a person.
    pub message: String,
}

impl McpError {
    /// An error of `kind` about `server`.
    pub fn new(server: impl Into<String>, kind: McpErrorKind, message: impl Into<String>) -> Self {
        Self {
            server: server.into(),
            kind,
            message: message.into(),
        }
    }

    /// `what` took longer than `after`.
    pub fn timeout(server: &str, what: &str, after: Duration) -> Self {
        Self::new(
            server,
            McpErrorKind::Timeout,
            format!("{what} timed out after {}", seconds(after)),
        )
    }

    /// Whether the connection is gone (the server should be restarted before the next call).
    pub fn is_fatal(&self) -> bool {
        matches!(
            self.kind,
            McpErrorKind::Connection | McpErrorKind::Protocol | McpErrorKind::Start
        )
    }
}

/// `2s`, `0.5s`.
pub(crate) fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0}s")
    } else {
        format!("{s}s")
    }
}
