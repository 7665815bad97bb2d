//! `tandem-replay`: the recording lanes a session is replayed from, and the state of each as of
//! any event.
//!
//! The terminal lane ([`cast`]): every PTY's output, the person's input and resizes written as
//! asciicast v3 (what asciinema plays), with a marker per event id, and beside it an index of
//! those markers and of keyframes (the screen's whole state every so many bytes), so the screen
//! as of an event is rebuilt by replaying a bounded stretch from the keyframe before it
//! ([`cast::screen_at`]). The browser lane ([`frames`]): a JPEG per browser action and the
//! live screencast at a low rate, and the frame as of any event ([`frames::frame_at`]).
//! Secrets are masked before anything is written.

pub mod cast;
pub mod frames;
pub mod trace;

pub use cast::{CastWriter, Screen, Seek, markers, screen_at};
pub use frames::{FrameEntry, FrameKind, FrameWriter, frame_at};

/// A recording that cannot be written or read.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A file operation failed.
    #[error("replay: {op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// On what.
        path: std::path::PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// The recording is not one (no header, a header of another format or version).
    #[error("replay: {path} is not an asciicast v3 recording: {detail}")]
    NotACast {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// The file is not a trace this build can open.
    #[error("replay: {path} is not a Tandem trace: {detail}")]
    NotATrace {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// No marker of that event is in the recording.
    #[error("replay: no marker of event {0} in this recording")]
    NoMarker(String),
}

/// What a replay operation returns.
pub type Result<T> = std::result::Result<T, ReplayError>;

impl ReplayError {
    pub(crate) fn io(op: &'static str, path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }
}
