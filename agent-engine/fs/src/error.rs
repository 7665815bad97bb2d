//! The one way a file primitive fails: an I/O operation on a path.

use std::path::PathBuf;

/// A failed file operation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `op` (create, write, sync, rename) on `path` failed.
    #[error("{op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file or directory it was done to.
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
}

impl Error {
    /// An [`Error::Io`].
    pub fn io(op: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// Result of the file primitives.
pub type Result<T> = std::result::Result<T, Error>;
