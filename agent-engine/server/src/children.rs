//! `POST /api/conversations/{id}/children`: upstream's route to start a child conversation of
//! a conversation, which inherits its configuration and workspace, is linked through
//! `parent_conversation_id`, and gets `task` as its first user message (and runs).

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tandem_protocol::{DEFAULT_SUBAGENT, Message};
use tandem_sdk::subagent::{builtin_subagents, child_title};
use utoipa::ToSchema;

use crate::AppState;
use crate::error::{ApiError, Result};
use crate::extract::{ApiJson, conversation_id};

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

/// `POST /api/conversations/{id}/children`.
pub async fn start_child(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    ApiJson(req): ApiJson<StartChildConversationRequest>,
) -> Result<Response> {
    let parent = conversation_id(&raw)?;
    if req.task.trim().is_empty() {
        return Err(ApiError::field(
            &["body", "task"],
            "string_too_short",
            "the task must not be empty: it is the child's first message",
            Value::from(req.task),
        ));
    }
    if let Some(i) = req
        .isolation
        .as_deref()
        .filter(|i| !["worktree", "shared"].contains(i))
    {
        return Err(ApiError::field(
            &["body", "isolation"],
            "literal_error",
            "Input should be 'worktree' or 'shared'",
            Value::from(i),
        ));
    }
    if !state.registry.exists(&parent).await {
        return Err(ApiError::NotFound);
    }
    state.registry.check_capacity().await?;
    let kind = builtin_subagents()
        .into_iter()
        .find(|t| t.name == DEFAULT_SUBAGENT)
        .ok_or_else(|| ApiError::Internal("no general-purpose sub-agent".into()))?;
    let child = state
        .registry
        .create_child(&parent, &kind)
        .await
        .map_err(ApiError::Internal)?;
    let title = child_title(req.title.as_deref(), &req.task);
    child.handle.set_title(title.clone()).await?;
    child
        .handle
        .send_message(Message::user(req.task), true)
        .await?;
    let body = StartChildConversationResponse {
        conversation_id: child.handle.id().to_owned(),
        parent_conversation_id: parent,
        status: child.handle.status().as_str().to_owned(),
        title: Some(title),
        url: None,
        workspace: Some(child.workspace.to_string_lossy().into_owned()),
        isolation: Some("shared".to_owned()),
    };
    Ok((StatusCode::CREATED, Json(body)).into_response())
}
