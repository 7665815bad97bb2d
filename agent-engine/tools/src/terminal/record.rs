//! Recording terminals for replay: each session of a conversation's terminals is written as
//! an asciicast (`tandem_replay::cast`) in the conversation's replay folder, named
//! `<lane>-<unix ms>-<n>.cast` so a listing sorts by start, and every event of the
//! conversation is marked in every session recorded at that moment ([`Recorder::mark`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use tandem_replay::CastWriter;

use super::session::TerminalSession;
use super::shell::{DEFAULT_COLS, DEFAULT_ROWS};

/// Whose terminal a recording is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// The agent's own shell (the terminal tool's, which a person may attach to).
    Agent,
    /// A separate shell a person opened beside it.
    Shell,
}

impl Lane {
    /// The lane's name, the start of its recordings' file names.
    pub fn name(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Shell => "shell",
        }
    }
}

/// Where a conversation's terminals are recorded, and the sessions recording now.
#[derive(Debug)]
pub struct Recorder {
    dir: PathBuf,
    sessions: Mutex<Vec<Weak<TerminalSession>>>,
    next: AtomicU32,
}

impl Recorder {
    /// Records into `dir` (created on the first recording).
    pub fn new(dir: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            dir,
            sessions: Mutex::new(Vec::new()),
            next: AtomicU32::new(1),
        })
    }

    /// The folder the recordings are in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A new recording for a session of `lane`, or `None` (logged) when it cannot be created:
    /// the terminal then runs unrecorded.
    pub(crate) fn cast(&self, lane: Lane) -> Option<CastWriter> {
        let millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let path = self
            .dir
            .join(format!("{}-{millis:013}-{n}.cast", lane.name()));
        let created = std::fs::create_dir_all(&self.dir)
            .map_err(|e| e.to_string())
            .and_then(|()| {
                CastWriter::create(&path, DEFAULT_COLS, DEFAULT_ROWS, &[])
                    .map_err(|e| e.to_string())
            });
        match created {
            Ok(cast) => Some(cast),
            Err(e) => {
                tracing::warn!(error = %e, "the terminal runs unrecorded");
                None
            }
        }
    }

    /// Marks `session` as recording, so events are marked in it.
    pub(crate) fn add(&self, session: &Arc<TerminalSession>) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
        sessions.retain(|s| s.strong_count() > 0);
        sessions.push(Arc::downgrade(session));
    }

    /// Marks event `event_id` in every session recording now, after the output each has read
    /// so far. May wait for a session's output queue (call it off the async runtime).
    pub fn mark(&self, event_id: &str) {
        let sessions: Vec<Arc<TerminalSession>> = {
            let mut sessions = self.sessions.lock().unwrap_or_else(|e| e.into_inner());
            sessions.retain(|s| s.strong_count() > 0);
            sessions.iter().filter_map(Weak::upgrade).collect()
        };
        for session in sessions {
            session.mark(event_id);
        }
    }
}
