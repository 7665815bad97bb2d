//! `POST /api/conversations/{id}/children`: upstream's request and answer for starting a
//! child conversation of a conversation.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Payload to start a child conversation on the same server as its parent.
#[derive(Debug, Clone, Deserialize, ToSchema)]
pub struct StartChildConversationRequest {
    /// Self-contained brief delivered to the child as its first user message.
    pub task: String,
    /// Optional title for the child conversation.
    #[serde(default)]
    pub title: Option<String>,
    /// `worktree` or `shared`; this server always runs the child in the parent's directory
    /// (`shared`), and says so in the response.
    #[serde(default)]
    pub isolation: Option<String>,
}

/// Result of a child conversation launch.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StartChildConversationResponse {
    /// The child's id.
    pub conversation_id: String,
    /// The parent's id.
    pub parent_conversation_id: String,
    /// The child's execution status after the launch.
    pub status: String,
    /// The child's title.
    pub title: Option<String>,
    /// Link to the child conversation (none: clients open it by id).
    pub url: Option<String>,
    /// The child's working directory.
    pub workspace: Option<String>,
    /// The isolation applied: `shared`.
    pub isolation: Option<String>,
}
