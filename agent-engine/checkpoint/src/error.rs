//! How taking, reading or restoring a checkpoint fails.

use std::path::PathBuf;

/// A checkpoint operation that failed; the workspace is left as it was (a restore that
/// started is finished from its journal, never left half done).
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A git command of the store failed (e.g. a full disk, an unreadable store).
    #[error("checkpoint store {store}: git {command} failed: {stderr}")]
    Git {
        /// The store's directory.
        store: PathBuf,
        /// The git subcommand.
        command: String,
        /// What git said (its last lines).
        stderr: String,
    },
    /// git could not be started.
    #[error("checkpoint store: cannot run git: {0}")]
    NoGit(std::io::Error),
    /// A file operation failed.
    #[error("checkpoint store: {op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// On what.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// A fork's worktree needs the workspace to be in a git repository.
    #[error(
        "the workspace {0} is not in a git repository; a worktree needs one (fork with workspace keep or restore instead)"
    )]
    NotARepository(PathBuf),
    /// A fork's worktree could not be made.
    #[error("cannot make the fork's worktree: {0}")]
    Worktree(String),
    /// A setting names something a store cannot use.
    #[error("checkpoint settings: {0}")]
    Config(String),
    /// The workspace to checkpoint is not a directory.
    #[error("checkpoint store: the workspace {0} is not a directory")]
    NotADirectory(PathBuf),
    /// The conversation has no event with that id.
    #[error("no event {0} in this conversation")]
    UnknownEvent(String),
    /// No checkpoint with that id is in the conversation's record.
    #[error("no checkpoint {0} in this conversation")]
    UnknownCheckpoint(String),
    /// The store no longer has a checkpoint the record names (the store was deleted or
    /// replaced).
    #[error("the checkpoint store lost checkpoint {id}: {detail}")]
    Lost {
        /// The checkpoint.
        id: String,
        /// What git said.
        detail: String,
    },
    /// The conversation has no checkpoint yet.
    #[error("this conversation has no checkpoint yet: no action that can change files has run")]
    Empty,
    /// The store's journal or a record file is not what Tandem writes.
    #[error("checkpoint store: {path} is corrupt: {detail}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
}

impl CheckpointError {
    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

impl From<tandem_fs::Error> for CheckpointError {
    fn from(e: tandem_fs::Error) -> Self {
        match e {
            tandem_fs::Error::Io { op, path, source } => Self::Io { op, path, source },
        }
    }
}

/// Result of checkpoint operations.
pub type Result<T> = std::result::Result<T, CheckpointError>;
