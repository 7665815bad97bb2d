//! Checkpoints and rewind (Tandem extensions): the workspace as it was at any event.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Who made the changes a checkpoint records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointAuthor {
    /// The agent's action (`tool_name` says which tool).
    Agent,
    /// Someone else between two of the agent's actions: a person in the editor or the
    /// terminal, or another conversation on the same workspace.
    Person,
    /// A rewind wrote these paths.
    Rewind,
}

/// One checkpoint: the workspace's tree when an event was recorded, and what changed since
/// the checkpoint before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Checkpoint {
    /// The checkpoint's id (the commit in the workspace's checkpoint store).
    pub id: String,
    /// The event the checkpoint belongs to: an action (the workspace before it ran) or an
    /// observation (after it ran).
    pub event_id: String,
    /// The tree the checkpoint records.
    pub tree: String,
    /// Who made the changes listed.
    pub author: CheckpointAuthor,
    /// The tool whose action made them (agent checkpoints).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    /// Paths (relative to the workspace, `/`-separated) added since the checkpoint before.
    #[serde(default)]
    pub added: Vec<String>,
    /// Paths modified (content, mode or type).
    #[serde(default)]
    pub modified: Vec<String>,
    /// Paths deleted.
    #[serde(default)]
    pub deleted: Vec<String>,
    /// Ignored trees (e.g. `node_modules/`) present at this checkpoint: recorded by name only,
    /// never restored or deleted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
    /// When it was taken (ISO 8601).
    pub timestamp: String,
    /// What the action changed outside the workspace, where that can be found (installed
    /// packages, an edited `~/.bashrc`); absolute paths.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub outside: Vec<OutsideChange>,
    /// In a sandbox: the checkpoint of the container's own folders outside the workspace at
    /// the same moment, which a rewind to this checkpoint returns them to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system: Option<String>,
}

/// How a path changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PathChangeKind {
    /// It did not exist before.
    Added,
    /// Its content (or, for a folder, its entries) changed.
    Modified,
    /// It no longer exists.
    Deleted,
}

/// A change outside the workspace made by an action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct OutsideChange {
    /// The absolute path (the topmost added or deleted entry; a folder whose entries changed).
    pub path: String,
    /// How it changed.
    pub change: PathChangeKind,
    /// Whether a rewind can take it back (not for changes found on the person's machine).
    pub restorable: bool,
}

impl Checkpoint {
    /// Whether the checkpoint records any change.
    pub fn changed(&self) -> bool {
        !(self.added.is_empty() && self.modified.is_empty() && self.deleted.is_empty())
    }
}

/// `GET /api/conversations/{id}/checkpoints`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CheckpointList {
    /// The workspace the checkpoints are of.
    pub workspace: String,
    /// Oldest first.
    pub checkpoints: Vec<Checkpoint>,
}

/// What a rewind restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RestoreScope {
    /// The workspace's files.
    #[default]
    Code,
    /// The conversation's head (the agent continues from the event).
    Chat,
    /// Both.
    Both,
}

/// Which paths a code rewind may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RewindFiles {
    /// Only paths the agent changed since; a path a person edited since is skipped and named.
    #[default]
    Agent,
    /// Every path, the person's changes included (still undoable).
    All,
}

/// `POST /api/conversations/{id}/rewind`: the workspace (and/or the conversation's head) as it
/// was at an event or a checkpoint. Exactly one of `event_id` and `checkpoint_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RewindRequest {
    /// The event to rewind to.
    #[serde(default)]
    pub event_id: Option<String>,
    /// The checkpoint to rewind to (e.g. a rewind's `undo_checkpoint_id`).
    #[serde(default)]
    pub checkpoint_id: Option<String>,
    /// What to restore (default `code`).
    #[serde(default)]
    pub restore: RestoreScope,
    /// Which paths (default `agent`).
    #[serde(default)]
    pub files: RewindFiles,
    /// Only say what would happen, with the diff; write nothing.
    #[serde(default)]
    pub dry_run: bool,
}

/// How a rewind treats one path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum PathChange {
    /// Written with the checkpoint's content (it was changed or deleted since).
    Write,
    /// Deleted (it did not exist at the checkpoint).
    Delete,
}

/// A path a rewind restores.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RestoredPath {
    /// Relative to the workspace.
    pub path: String,
    /// What is done to it.
    pub change: PathChange,
}

/// A path a rewind leaves as it is, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SkippedPath {
    /// Relative to the workspace.
    pub path: String,
    /// Why it is left alone.
    pub reason: String,
}

/// The answer to a rewind (or its dry run).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RewindResponse {
    /// The checkpoint rewound to.
    pub checkpoint_id: String,
    /// The event it belongs to.
    pub event_id: String,
    /// Paths written or deleted (to be, on a dry run).
    pub restored: Vec<RestoredPath>,
    /// Paths that differ but are left alone, with the reason.
    pub skipped: Vec<SkippedPath>,
    /// The checkpoint taken just before the rewind: rewinding to it undoes the rewind. `null`
    /// on a dry run and when no file was written.
    pub undo_checkpoint_id: Option<String>,
    /// The unified diff from the workspace now to what the rewind writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The conversation's head after a `chat` or `both` rewind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaf_event_id: Option<String>,
    /// Nothing was written.
    pub dry_run: bool,
}

/// What a fork does with the workspace (Tandem's extension of upstream's fork).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ForkWorkspace {
    /// The fork works in the source's workspace as it is now (upstream's behaviour).
    #[default]
    Keep,
    /// The workspace is first rewound to the fork's event (`files: agent`), undoably.
    Restore,
    /// The fork works in a new git worktree of the workspace's repository, on a branch
    /// `tandem/<fork id>`, holding the workspace as it was at the fork's event (as it is now
    /// without `from_event_id`); the source's files are not touched.
    Worktree,
}

/// `POST /api/conversations/{id}/fork` (upstream 1.58's `ForkConversationRequest`, plus
/// Tandem's `workspace`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ForkConversationRequest {
    /// The fork's id (auto-generated if null).
    #[serde(default)]
    pub id: Option<String>,
    /// Its title (at most 200 characters).
    #[serde(default)]
    pub title: Option<String>,
    /// Its tags (keys lowercase alphanumeric).
    #[serde(default)]
    pub tags: Option<std::collections::BTreeMap<String, String>>,
    /// Cost and token counts start afresh (default true).
    #[serde(default = "default_true")]
    pub reset_metrics: bool,
    /// Fork only the branch up to and including this event, with the fork's head there.
    #[serde(default)]
    pub from_event_id: Option<String>,
    /// Tandem: what happens to the workspace (default `keep`).
    #[serde(default)]
    pub workspace: Option<ForkWorkspace>,
}

fn default_true() -> bool {
    true
}

/// `POST /api/conversations/{id}/navigate` (upstream 1.58's `NavigateConversationRequest`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct NavigateConversationRequest {
    /// The event to make the head; `null` selects the empty tree.
    #[serde(default)]
    pub event_id: Option<String>,
}
