//! Errors of the engine.

use std::path::PathBuf;

/// Result with [`SdkError`].
pub type Result<T> = std::result::Result<T, SdkError>;

/// What went wrong in the engine. Each carries enough to name the culprit.
#[derive(Debug, thiserror::Error)]
pub enum SdkError {
    /// A file operation failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done (`write`, `read`, `rename`, ...).
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A persisted file could not be parsed.
    #[error("corrupt file {path}: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// JSON (de)serialisation failed.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// No conversation with this id.
    #[error("conversation {0} not found")]
    NotFound(String),
    /// The request does not fit the conversation's current state.
    #[error("{0}")]
    InvalidState(String),
    /// A configuration value is invalid.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A prompt template failed to render (a bug in an embedded template).
    #[error("prompt template: {0}")]
    Template(String),
    /// The LLM failed.
    #[error(transparent)]
    Llm(#[from] tandem_llm::LlmError),
    /// A run is already in progress (`run` while running).
    #[error("conversation already running; wait for it to finish or pause it first")]
    AlreadyRunning,
    /// No action with this id waits for confirmation (unknown, already run or rejected).
    #[error("action {0} is not waiting for confirmation")]
    NotPending(String),
    /// Arguments given for an action do not fit its tool; the message names the field.
    #[error("{0}")]
    InvalidArguments(String),
    /// The conversation's actor is gone.
    #[error("the conversation has shut down")]
    Closed,
    /// A conversation on an agent server failed (through
    /// [`ConversationClient`](crate::ConversationClient)); the remote error says what and has
    /// a machine-readable code.
    #[error(transparent)]
    Remote(#[from] crate::remote::RemoteError),
}

impl SdkError {
    /// An IO error about `path`.
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            source,
        }
    }
}
