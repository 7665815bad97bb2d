//! Checkpoints and rewind (Tandem extensions): `GET /api/conversations/{id}/checkpoints`
//! lists the workspace's checkpoints with who changed which paths at which event;
//! `POST /api/conversations/{id}/rewind` returns the workspace to any of them, after a
//! checkpoint of its own so the rewind can be undone.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use serde_json::Value;
use tandem_checkpoint::{CheckpointError, RecordLog, RewindTarget, Store};
use tandem_protocol::ExecutionStatus;
use tandem_protocol::api::{CheckpointList, RestoreScope, RewindRequest, RewindResponse};

use crate::AppState;
use crate::error::{ApiError, Result};
use crate::extract::{ApiJson, conversation_id};
use crate::registry::Live;

impl From<CheckpointError> for ApiError {
    fn from(e: CheckpointError) -> Self {
        match e {
            CheckpointError::UnknownCheckpoint(_)
            | CheckpointError::UnknownEvent(_)
            | CheckpointError::Empty
            | CheckpointError::Lost { .. }
            | CheckpointError::Corrupt { .. }
            | CheckpointError::NotADirectory(_) => ApiError::Conflict(e.to_string()),
            _ => ApiError::Internal(e.to_string()),
        }
    }
}

async fn live(state: &AppState, raw_id: &str) -> Result<Arc<Live>> {
    let id = conversation_id(raw_id)?;
    state.registry.get(&id).await
}

fn store_of(state: &AppState, live: &Live) -> Result<Arc<Store>> {
    let home = state.config.checkpoints_home.as_ref().ok_or_else(|| {
        ApiError::Conflict("checkpoints are off on this server (TANDEM_CHECKPOINTS=off)".into())
    })?;
    Ok(Store::open(home, &live.workspace)?)
}

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> tandem_checkpoint::Result<T> + Send + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
        .map_err(ApiError::from)
}

/// `GET /api/conversations/{id}/checkpoints`.
pub async fn list(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<CheckpointList>> {
    let live = live(&state, &id).await?;
    let log = RecordLog::new(live.handle.dir());
    let checkpoints = blocking(move || log.read()).await?;
    Ok(Json(CheckpointList {
        workspace: live.workspace.to_string_lossy().into_owned(),
        checkpoints,
    }))
}

/// `POST /api/conversations/{id}/rewind`.
pub async fn rewind(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    ApiJson(req): ApiJson<RewindRequest>,
) -> Result<Json<RewindResponse>> {
    let target = match (&req.event_id, &req.checkpoint_id) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(ApiError::field(
                &["body", "event_id"],
                "value_error",
                "give exactly one of event_id and checkpoint_id",
                Value::Null,
            ));
        }
        (Some(e), None) => RewindTarget::Event(e.clone()),
        (None, Some(c)) => RewindTarget::Checkpoint(c.clone()),
    };
    if req.restore != RestoreScope::Code {
        return Err(ApiError::field(
            &["body", "restore"],
            "value_error",
            "only \"code\" is served here so far: moving the conversation's head comes with navigate",
            serde_json::to_value(req.restore).unwrap_or(Value::Null),
        ));
    }
    let live = live(&state, &id).await?;
    if !req.dry_run && live.handle.status() == ExecutionStatus::Running {
        return Err(ApiError::Conflict(
            "the agent is running: pause it before rewinding its workspace".into(),
        ));
    }
    let store = store_of(&state, &live)?;
    let log = RecordLog::new(live.handle.dir());
    let events: Vec<String> = live
        .handle
        .events()
        .iter()
        .map(|e| e.id().to_owned())
        .collect();
    let (files, dry_run) = (req.files, req.dry_run);
    let answer = tokio::task::spawn_blocking(move || {
        tandem_checkpoint::rewind(&store, &log, &events, &target, files, dry_run)
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?;
    match answer {
        Ok(response) => Ok(Json(response)),
        Err(CheckpointError::UnknownEvent(e)) => Err(ApiError::field(
            &["body", "event_id"],
            "value_error",
            format!("no event {e} in this conversation"),
            Value::from(e),
        )),
        Err(CheckpointError::UnknownCheckpoint(c)) => Err(ApiError::field(
            &["body", "checkpoint_id"],
            "value_error",
            format!("no checkpoint {c} in this conversation"),
            Value::from(c),
        )),
        Err(e) => Err(e.into()),
    }
}
