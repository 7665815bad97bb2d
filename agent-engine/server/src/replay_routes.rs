//! Replay (Tandem extension): `GET /api/conversations/{id}/replay?event_id=E` answers what
//! each pane showed as of event E: the agent's terminal screen (rebuilt from its recording,
//! `tandem_replay`), the browser's frame, and the workspace's checkpoint tree.
//!
//! The conversation's event log is the clock. A lane that recorded nothing at E itself shows
//! its state at the newest event before E that it did record (the terminal between two of its
//! markers is what the later marker would show only once output arrives); a lane with nothing
//! before E is `null`. A damaged recording gives what it can, with a note.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use serde_json::Value;
use tandem_checkpoint::RecordLog;
use tandem_protocol::api::{ReplayBrowser, ReplayState, ReplayTerminal, ReplayWorkspace};

use crate::AppState;
use crate::error::{ApiError, Result};
use crate::extract::{QueryMap, conversation_id};

/// The folder of a conversation's replay recordings.
pub fn replay_dir(conversation_dir: &Path) -> PathBuf {
    conversation_dir.join("replay")
}

/// The agent lane's recordings in `dir`, oldest first.
fn agent_casts(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut casts: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("agent-") && n.ends_with(".cast"))
        })
        .collect();
    casts.sort();
    casts
}

/// The terminal as of `events[at]`: the screen at the newest event up to it that a recording
/// marked (the newest recording first).
fn terminal_at(
    dir: &Path,
    events: &[String],
    at: usize,
    notes: &mut Vec<String>,
) -> Option<ReplayTerminal> {
    let mut marked: Vec<(PathBuf, HashSet<String>)> = Vec::new();
    for cast in agent_casts(dir).into_iter().rev() {
        match tandem_replay::markers(&cast) {
            Ok((ids, read_notes)) => {
                notes.extend(read_notes);
                marked.push((cast, ids.into_iter().collect()));
            }
            Err(e) => notes.push(e.to_string()),
        }
    }
    if marked.is_empty() {
        return None;
    }
    for id in events[..=at].iter().rev() {
        for (cast, ids) in &marked {
            if !ids.contains(id) {
                continue;
            }
            match tandem_replay::screen_at(cast, id) {
                Ok(seek) => {
                    notes.extend(seek.notes);
                    let (cols, rows) = seek.screen.size();
                    return Some(ReplayTerminal {
                        screen: seek.screen.text(),
                        cols,
                        rows,
                        at_event_id: id.clone(),
                    });
                }
                Err(e) => notes.push(e.to_string()),
            }
        }
    }
    None
}

/// A diff longer than this is cut (the replay view shows the first part).
const DIFF_CAP: usize = 256 * 1024;

/// The workspace as of `events[at]`: the newest checkpoint of the newest event up to it, and
/// what it changed since the checkpoint before it (from `store`, when there is one).
fn workspace_at(
    conversation_dir: &Path,
    store: Option<&tandem_checkpoint::Store>,
    events: &[String],
    at: usize,
    notes: &mut Vec<String>,
) -> Option<ReplayWorkspace> {
    let checkpoints = match RecordLog::new(conversation_dir).read() {
        Ok(c) => c,
        Err(e) => {
            notes.push(format!("the workspace's checkpoints cannot be read: {e}"));
            return None;
        }
    };
    let mut by_event: HashMap<&str, usize> = HashMap::new();
    for (n, c) in checkpoints.iter().enumerate() {
        by_event.insert(c.event_id.as_str(), n);
    }
    let (n, id) = events[..=at]
        .iter()
        .rev()
        .find_map(|id| Some((*by_event.get(id.as_str())?, id)))?;
    let c = &checkpoints[n];
    let (mut diff, mut diff_truncated) = (String::new(), false);
    if let Some(store) = store {
        let from = n.checked_sub(1).map_or(tandem_checkpoint::EMPTY_TREE, |p| {
            checkpoints[p].id.as_str()
        });
        match store.unified_diff(from, &c.id, &[]) {
            Ok(mut text) => {
                if text.len() > DIFF_CAP {
                    let mut cut = DIFF_CAP;
                    while !text.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    text.truncate(cut);
                    diff_truncated = true;
                }
                diff = text;
            }
            Err(e) => notes.push(format!("the checkpoint's changes cannot be shown: {e}")),
        }
    }
    Some(ReplayWorkspace {
        tree: c.tree.clone(),
        checkpoint_id: c.id.clone(),
        at_event_id: id.clone(),
        diff,
        diff_truncated,
    })
}

/// `GET /api/conversations/{id}/replay/frames/{frame_id}`: a recorded browser frame (JPEG).
pub async fn frame(
    State(state): State<AppState>,
    UrlPath((id, frame_id)): UrlPath<(String, String)>,
) -> Result<axum::response::Response> {
    use axum::response::IntoResponse;
    let unknown = |detail: &str| {
        ApiError::field(
            &["path", "frame_id"],
            "value_error",
            format!("no browser frame {frame_id}: {detail}"),
            Value::String(frame_id.clone()),
        )
    };
    let id = conversation_id(&id)?;
    let live = state.registry.get(&id).await?;
    let dir = replay_dir(live.handle.dir());
    let (frames, _) = tandem_replay::frames::read_log(&dir);
    let entry = frames
        .into_iter()
        .find(|f| f.id == frame_id)
        .ok_or_else(|| unknown("not recorded"))?;
    // Only a file of the lane's own folder, whatever a damaged list says.
    let name = entry
        .file
        .strip_prefix("frames/")
        .filter(|n| !n.is_empty() && !n.contains(['/', '\\']) && !n.starts_with('.'))
        .ok_or_else(|| unknown("its file is not in the frames folder"))?;
    let path = dir.join("frames").join(name);
    let bytes = tokio::fs::read(&path)
        .await
        .map_err(|e| unknown(&format!("its image cannot be read ({e})")))?;
    Ok(([(axum::http::header::CONTENT_TYPE, "image/jpeg")], bytes).into_response())
}

/// `GET /api/conversations/{id}/replay?event_id=E`.
pub async fn replay(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    q: QueryMap,
) -> Result<Json<ReplayState>> {
    let Some(event_id) = q.get("event_id").map(str::to_owned) else {
        return Err(ApiError::field(
            &["query", "event_id"],
            "missing",
            "event_id is required: the event to replay the panes at",
            Value::Null,
        ));
    };
    let id = conversation_id(&id)?;
    let live = state.registry.get(&id).await?;
    let events = crate::checkpoint_routes::event_ids(&live);
    let Some(at) = events.iter().position(|e| *e == event_id) else {
        return Err(ApiError::field(
            &["query", "event_id"],
            "value_error",
            format!("no event {event_id} in this conversation"),
            Value::String(event_id),
        ));
    };
    let conversation_dir = live.handle.dir().to_path_buf();
    let home = state.config.checkpoints_home.clone();
    let workspace_dir = live.workspace.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let mut notes = Vec::new();
        let terminal = terminal_at(&replay_dir(&conversation_dir), &events, at, &mut notes);
        let store = home.and_then(|h| tandem_checkpoint::Store::open(&h, &workspace_dir).ok());
        let workspace = workspace_at(&conversation_dir, store.as_deref(), &events, at, &mut notes);
        let browser =
            tandem_replay::frame_at(&replay_dir(&conversation_dir), &events, at, &mut notes).map(
                |f| ReplayBrowser {
                    frame_id: f.id,
                    url: f.url,
                },
            );
        ReplayState {
            event_id,
            terminal,
            browser,
            workspace,
            notes,
        }
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Json(answer))
}

/// Writes the trace of the conversation in `conversation_dir` (id `id`, run in `workspace`)
/// to `out`: its files masked with `mask`, and its checkpoints' trees when `checkpoints_home`
/// holds the workspace's store. Blocking.
pub fn write_trace(
    conversation_dir: &Path,
    id: &str,
    workspace: &Path,
    checkpoints_home: Option<&Path>,
    mask: &dyn Fn(&str) -> String,
    out: &Path,
) -> std::result::Result<tandem_replay::trace::Exported, String> {
    let scratch = tempfile::tempdir().map_err(|e| format!("cannot make a scratch folder: {e}"))?;
    let bundle = scratch.path().join("checkpoints.bundle");
    let commits: Vec<String> = RecordLog::new(conversation_dir)
        .read()
        .map(|list| list.into_iter().map(|c| c.id).collect())
        .unwrap_or_default();
    let bundled = match checkpoints_home {
        Some(home) if !commits.is_empty() && workspace.is_dir() => {
            tandem_checkpoint::Store::open(home, workspace)
                .and_then(|store| store.bundle(&commits, &bundle))
                .map_err(|e| tracing::warn!("the trace goes without its checkpoints' trees: {e}"))
                .unwrap_or(false)
        }
        _ => false,
    };
    tandem_replay::trace::export(
        conversation_dir,
        id,
        &workspace.to_string_lossy(),
        bundled.then_some(bundle.as_path()),
        mask,
        out,
    )
    .map_err(|e| e.to_string())
}

/// `GET /api/conversations/{id}/trace`: the conversation's trace (`*.tandem-trace`).
pub async fn trace(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<axum::response::Response> {
    use axum::response::IntoResponse;
    let id = conversation_id(&id)?;
    let live = state.registry.get(&id).await?;
    let dir = live.handle.dir().to_path_buf();
    let workspace = live.workspace.clone();
    let masker = live.handle.masker();
    let home = state.config.checkpoints_home.clone();
    let name = id.clone();
    let file = tokio::task::spawn_blocking(move || {
        let scratch = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = scratch.path().join("trace.tandem-trace");
        let mask = |text: &str| masker.mask(text);
        write_trace(&dir, &name, &workspace, home.as_deref(), &mask, &out)?;
        // Open, then let the scratch folder go: the open file stays readable.
        std::fs::File::open(&out).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?
    .map_err(|e| ApiError::Internal(format!("cannot write the trace: {e}")))?;
    let stream = tokio_util::io::ReaderStream::new(tokio::fs::File::from_std(file));
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                "application/x-tandem-trace".to_owned(),
            ),
            (
                axum::http::header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{id}.tandem-trace\""),
            ),
        ],
        axum::body::Body::from_stream(stream),
    )
        .into_response())
}

/// Refuses, on a read-only server (a trace's replay), whatever could change something: every
/// method but GET, HEAD and OPTIONS, and every socket but the events' (a terminal or a browser
/// socket would start a shell or Chromium).
pub async fn read_only_guard(
    State(state): State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::http::Method;
    use axum::response::IntoResponse;
    if state.config.read_only {
        let path = request.uri().path();
        let reading = matches!(
            *request.method(),
            Method::GET | Method::HEAD | Method::OPTIONS
        );
        let socket = path.starts_with("/sockets/") && !path.starts_with("/sockets/events/");
        if !reading || socket {
            return ApiError::Conflict(
                "this server replays a trace: it is read-only (nothing runs, nothing is written)"
                    .into(),
            )
            .into_response();
        }
    }
    next.run(request).await
}
