//! Replay (Tandem extension): the panes as they were at any event of a conversation.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Every recorded lane as of one event; a lane that had recorded nothing by then is `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ReplayState {
    /// The event asked for.
    pub event_id: String,
    /// The agent's terminal.
    pub terminal: Option<ReplayTerminal>,
    /// The agent's browser.
    pub browser: Option<ReplayBrowser>,
    /// The workspace's files.
    pub workspace: Option<ReplayWorkspace>,
    /// What could not be read (a damaged recording, a missing keyframe), in words: the lanes
    /// show what could be.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The terminal's screen as of the event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReplayTerminal {
    /// The visible screen as text, rows joined by `\n` (trailing blanks trimmed).
    pub screen: String,
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
    /// The event whose marker the screen is taken at: the one asked for, or the newest event
    /// before it that the terminal recorded.
    pub at_event_id: String,
}

/// The browser's frame as of the event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReplayBrowser {
    /// The frame shown: the newest recorded at or before the event.
    pub frame_id: String,
    /// The page's address then.
    pub url: String,
}

/// The workspace as of the event: the newest checkpoint at or before it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ReplayWorkspace {
    /// The checkpoint's tree (in the workspace's checkpoint store).
    pub tree: String,
    /// The checkpoint.
    pub checkpoint_id: String,
    /// The event the checkpoint belongs to.
    pub at_event_id: String,
    /// What the checkpoint changed since the one before it, as a unified diff (binary files
    /// named, not shown; empty when the store cannot give it, with a note).
    #[serde(default)]
    pub diff: String,
    /// Whether `diff` was cut at 256 KiB.
    #[serde(default)]
    pub diff_truncated: bool,
}
