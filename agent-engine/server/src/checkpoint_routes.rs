//! Checkpoints and rewind (Tandem extensions): `GET /api/conversations/{id}/checkpoints`
//! lists the workspace's checkpoints with who changed which paths at which event;
//! `POST /api/conversations/{id}/rewind` returns the workspace to any of them, after a
//! checkpoint of its own so the rewind can be undone; fork and navigate (upstream's routes,
//! wire-exact) copy a conversation or move its head.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use serde_json::Value;
use tandem_checkpoint::{CheckpointError, RecordLog, RewindTarget, Store};
use tandem_protocol::api::{
    CheckpointList, ForkConversationRequest, ForkWorkspace, NavigateConversationRequest,
    RestoreScope, RewindFiles, RewindRequest, RewindResponse,
};
use tandem_protocol::{ConversationInfo, ExecutionStatus};

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

/// The conversation's event ids, oldest first.
pub(crate) fn event_ids(live: &Live) -> Vec<String> {
    // Read in place: copying every event first costs tens of ms on a long conversation.
    live.handle
        .view()
        .events
        .iter()
        .map(|e| e.id().to_owned())
        .collect()
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
    let live = live(&state, &id).await?;
    if !req.dry_run && live.handle.status() == ExecutionStatus::Running {
        return Err(ApiError::Conflict(
            "the agent is running: pause it before rewinding".into(),
        ));
    }
    let events: Vec<String> = event_ids(&live);
    let code = matches!(req.restore, RestoreScope::Code | RestoreScope::Both);
    let mut response = if code {
        let store = store_of(&state, &live)?;
        let log = RecordLog::new(live.handle.dir());
        let (files, dry_run) = (req.files, req.dry_run);
        let target = target.clone();
        let events = events.clone();
        let answer = tokio::task::spawn_blocking(move || {
            tandem_checkpoint::rewind(&store, &log, &events, &target, files, dry_run)
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
        answer.map_err(rewind_error)?
    } else {
        let mut chat = chat_only(&live, &events, &target).await?;
        chat.dry_run = req.dry_run;
        chat
    };
    if matches!(req.restore, RestoreScope::Chat | RestoreScope::Both) {
        // The head moves to the event asked for (or the checkpoint's event).
        let event = match &target {
            RewindTarget::Event(e) => e.clone(),
            RewindTarget::Checkpoint(_) => response.event_id.clone(),
        };
        if !req.dry_run {
            live.handle.navigate(Some(event.clone())).await?;
        }
        response.leaf_event_id = Some(event);
    }
    Ok(Json(response))
}

/// A `chat` rewind's answer: no file is touched; the checkpoint named is the one the event
/// (or checkpoint) resolves to, when there is one.
async fn chat_only(
    live: &Live,
    events: &[String],
    target: &RewindTarget,
) -> Result<RewindResponse> {
    let records = RecordLog::new(live.handle.dir());
    let records = blocking(move || records.read()).await?;
    let (checkpoint_id, event_id) = match target {
        RewindTarget::Event(e) => {
            if !events.contains(e) {
                return Err(rewind_error(CheckpointError::UnknownEvent(e.clone())));
            }
            let checkpoint = tandem_checkpoint::resolve_event(&records, events, e)
                .map(|i| records[i].id.clone())
                .unwrap_or_default();
            (checkpoint, e.clone())
        }
        RewindTarget::Checkpoint(c) => {
            let r = records
                .iter()
                .rfind(|r| r.id == *c)
                .ok_or_else(|| rewind_error(CheckpointError::UnknownCheckpoint(c.clone())))?;
            (r.id.clone(), r.event_id.clone())
        }
    };
    Ok(RewindResponse {
        checkpoint_id,
        event_id,
        restored: Vec::new(),
        skipped: Vec::new(),
        undo_checkpoint_id: None,
        diff: None,
        leaf_event_id: None,
        dry_run: false,
    })
}

fn rewind_error(e: CheckpointError) -> ApiError {
    match e {
        CheckpointError::UnknownEvent(e) => ApiError::field(
            &["body", "event_id"],
            "value_error",
            format!("no event {e} in this conversation"),
            Value::from(e),
        ),
        CheckpointError::UnknownCheckpoint(c) => ApiError::field(
            &["body", "checkpoint_id"],
            "value_error",
            format!("no checkpoint {c} in this conversation"),
            Value::from(c),
        ),
        e => e.into(),
    }
}

/// `POST /api/conversations/{id}/navigate`: the head moves to an event (`null`: the empty
/// tree); every branch stays on disk → the updated ConversationInfo.
pub async fn navigate(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    ApiJson(req): ApiJson<NavigateConversationRequest>,
) -> Result<Json<ConversationInfo>> {
    let live = live(&state, &id).await?;
    match live.handle.navigate(req.event_id.clone()).await {
        Ok(()) => Ok(Json(live.info())),
        Err(tandem_sdk::SdkError::NotFound(what)) => Err(ApiError::Missing(format!(
            "event_id: no {what} in this conversation"
        ))),
        Err(e) => Err(e.into()),
    }
}

/// `POST /api/conversations/{id}/fork` → 201 with the fork's ConversationInfo: a new
/// conversation, idle, with the source's events (all, or the branch up to `from_event_id`)
/// and its LLM, key included; with `workspace: restore` the workspace is first rewound to
/// that event.
pub async fn fork(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    ApiJson(req): ApiJson<ForkConversationRequest>,
) -> Result<(StatusCode, Json<ConversationInfo>)> {
    let source = live(&state, &id).await?;
    let fork_id = match &req.id {
        Some(raw) => Some(conversation_id(raw).map_err(|_| {
            ApiError::field(
                &["body", "id"],
                "uuid_parsing",
                "not a UUID",
                Value::from(raw.clone()),
            )
        })?),
        None => None,
    };
    if let Some(title) = &req.title
        && (title.is_empty() || title.chars().count() > 200)
    {
        return Err(ApiError::field(
            &["body", "title"],
            "string_too_long",
            "the title must be 1 to 200 characters",
            Value::from(title.as_str()),
        ));
    }
    if let Some(bad) = req.tags.iter().flatten().map(|(k, _)| k).find(|k| {
        k.is_empty()
            || !k
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    }) {
        return Err(ApiError::field(
            &["body", "tags"],
            "value_error",
            format!("tag key {bad:?}: keys must be lowercase alphanumeric"),
            Value::from(bad.as_str()),
        ));
    }
    if req.workspace == Some(ForkWorkspace::Restore) {
        let Some(event) = req.from_event_id.clone() else {
            return Err(ApiError::field(
                &["body", "workspace"],
                "value_error",
                "workspace: restore needs from_event_id (the event whose workspace to restore)",
                Value::from("restore"),
            ));
        };
        if source.handle.status() == ExecutionStatus::Running {
            return Err(ApiError::Conflict(
                "the agent is running: pause it before restoring its workspace".into(),
            ));
        }
        let store = store_of(&state, &source)?;
        let log = RecordLog::new(source.handle.dir());
        let events: Vec<String> = event_ids(&source);
        let target = RewindTarget::Event(event);
        tokio::task::spawn_blocking(move || {
            tandem_checkpoint::rewind(&store, &log, &events, &target, RewindFiles::Agent, false)
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
        .map_err(|e| match e {
            CheckpointError::UnknownEvent(e) => ApiError::field(
                &["body", "from_event_id"],
                "value_error",
                format!("no event {e} in this conversation"),
                Value::from(e),
            ),
            e => e.into(),
        })?;
    }
    let (fork_id, worktree) = if req.workspace == Some(ForkWorkspace::Worktree) {
        let id = fork_id.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let worktree = fork_worktree(&state, &source, &id, req.from_event_id.as_deref()).await?;
        (Some(id), Some(worktree))
    } else {
        (fork_id, None)
    };
    let options = tandem_sdk::ForkOptions {
        id: fork_id,
        title: req.title,
        tags: req.tags,
        reset_metrics: req.reset_metrics,
        from_event_id: req.from_event_id,
        working_dir: worktree
            .as_ref()
            .map(|(_, w)| w.workspace.to_string_lossy().into_owned()),
    };
    match state.registry.fork(&source, options).await {
        Ok(fork) => Ok((StatusCode::CREATED, Json(fork.info()))),
        Err(e) => {
            if let Some((store, w)) = worktree {
                let _ = tokio::task::spawn_blocking(move || store.remove_worktree(&w)).await;
            }
            Err(e)
        }
    }
}

/// The worktree of a fork `id` (`workspace: worktree`): the source's workspace as it was at
/// `event` (as it is now without one) on a branch `tandem/<id>`, under
/// `$TANDEM_HOME/worktrees/<id>`.
async fn fork_worktree(
    state: &AppState,
    source: &Live,
    id: &str,
    event: Option<&str>,
) -> Result<(Arc<Store>, tandem_checkpoint::Worktree)> {
    let store = store_of(state, source)?;
    let home = state
        .config
        .checkpoints_home
        .clone()
        .ok_or_else(|| ApiError::Internal("no checkpoints home".into()))?;
    let events: Vec<String> = event_ids(source);
    if let Some(e) = event
        && !events.iter().any(|id| id == e)
    {
        return Err(ApiError::Missing(format!(
            "from_event_id: no event {e} in this conversation"
        )));
    }
    let log = RecordLog::new(source.handle.dir());
    let (event, id) = (event.map(str::to_owned), id.to_owned());
    let worker = store.clone();
    let made = tokio::task::spawn_blocking(move || {
        let records = log.read()?;
        let tree = match event.as_deref() {
            Some(e) => match tandem_checkpoint::resolve_event(&records, &events, e) {
                Some(i) => records[i].tree.clone(),
                // Without a checkpoint the workspace as of that event is not known: the
                // worktree does not stand in the workspace as it is now.
                None => return Err(CheckpointError::Empty),
            },
            None => worker.snapshot()?,
        };
        let dest = home.join("worktrees").join(&id);
        worker.worktree(&tree, &dest, &format!("tandem/{id}"))
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?
    .map_err(|e| match e {
        CheckpointError::NotARepository(_) | CheckpointError::Worktree(_) => ApiError::field(
            &["body", "workspace"],
            "value_error",
            e.to_string(),
            Value::from("worktree"),
        ),
        e => e.into(),
    })?;
    Ok((store, made))
}
