//! `POST /api/conversations/{id}/children`: upstream's route to start a child conversation of
//! a conversation, which inherits its configuration and workspace, is linked through
//! `parent_conversation_id`, and gets `task` as its first user message (and runs).

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tandem_protocol::api::{StartChildConversationRequest, StartChildConversationResponse};
use tandem_protocol::{DEFAULT_SUBAGENT, Message};
use tandem_sdk::subagent::{builtin_subagents, child_title};

use crate::AppState;
use crate::error::{ApiError, Result};
use crate::extract::{ApiJson, conversation_id};

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
    let kind = builtin_subagents()
        .into_iter()
        .find(|t| t.name == DEFAULT_SUBAGENT)
        .ok_or_else(|| ApiError::Internal("no general-purpose sub-agent".into()))?;
    let child = state
        .registry
        .create_child(&parent, &kind)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
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
