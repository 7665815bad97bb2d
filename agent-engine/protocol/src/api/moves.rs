//! Moving a conversation between backends (Tandem extension): its capsule exported from one
//! server, imported by another with the same id, and the source fenced as a read-only record
//! that names where the conversation went.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{ExecutionStatus, LlmConfig};

use super::ConversationInfo;

/// `POST /api/conversations/{id}/export`: how to export.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ExportConversationRequest {
    /// Pause a running conversation (interrupting the tool in flight) and reject the actions
    /// waiting for approval, instead of refusing with 409.
    #[serde(default)]
    pub force: bool,
    /// Carry the replay lanes (terminal casts, browser frames) too.
    #[serde(default)]
    pub include_replay: bool,
    /// This server's address as the target will know it, written into the capsule.
    #[serde(default)]
    pub source_url: Option<String>,
    /// The name of the LLM profile the conversation runs on, for the target to resolve (the
    /// server names one itself when a profile of its own has the conversation's model).
    #[serde(default)]
    pub llm_profile: Option<String>,
    /// A workspace commit the target has (`workspace_base` of its `GET …/moved`): the capsule
    /// then carries only what changed since, when this server has that commit too.
    #[serde(default)]
    pub base_commit: Option<String>,
}

/// The `options` part of `POST /api/conversations/import` (beside the `capsule` part).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ImportConversationOptions {
    /// Where the workspace goes on this server: an empty or missing folder, or one that holds
    /// exactly the conversation's files. Default: a new folder under this server's workspace
    /// root named after the conversation.
    #[serde(default)]
    pub working_dir: Option<String>,
    /// The LLM to continue on (with its key, kept in memory only), when none of this server's
    /// profiles matches the capsule's.
    #[serde(default)]
    pub llm: Option<LlmConfig>,
    /// Values of the conversation's secrets, by name (the capsule names them only).
    #[serde(default)]
    pub secrets: BTreeMap<String, String>,
    /// Import it as arriving: read-only here (writes answer 409) until
    /// `POST /api/conversations/{id}/arrival` accepts it once the source is fenced, or rejects
    /// it when the move is abandoned. A move that is cut off at any point then leaves exactly
    /// one side able to run the conversation. Without it the conversation runs here at once.
    #[serde(default)]
    pub pending: bool,
}

/// `POST /api/conversations/{id}/arrival`: the end of a move toward this server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ArrivalRequest {
    /// `true`: the source is fenced, the conversation runs here from now on. `false`: the move
    /// was abandoned, the arriving copy (and the workspace folder its import made) is deleted.
    pub accept: bool,
}

/// `POST /api/conversations/import`'s answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ImportedConversation {
    /// The conversation, with the source's id, paused where it was.
    pub conversation: ConversationInfo,
    /// Where its workspace is now.
    pub working_dir: String,
    /// Events imported (all of them, checked against the capsule's checksums).
    pub events: usize,
    /// The newest event.
    pub last_event_id: Option<String>,
    /// The workspace's tree, equal to the source's.
    pub workspace_tree: Option<String>,
    /// The status it has here.
    pub execution_status: ExecutionStatus,
}

/// Where a conversation went (`POST /api/conversations/{id}/moved`'s body, and the
/// `moved_to` of a 409 a moved conversation answers writes with).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct MovedTo {
    /// The server it continues on.
    pub url: String,
    /// Its id there.
    pub conversation_id: String,
    /// When it moved (ISO 8601; set by the server).
    #[serde(default)]
    pub moved_at: Option<String>,
    /// The newest event the target has (the capsule's): the fence is refused when the
    /// conversation has gone on here since it was exported, so no event is left behind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_event_id: Option<String>,
    /// In `GET …/moved`: the workspace commit this server still holds in the folder the
    /// conversation left (unchanged since); a move back exports with it as `base_commit` and
    /// sends only what changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace_base: Option<String>,
}
