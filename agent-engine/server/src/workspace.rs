//! The editor's view of a conversation's workspace (Tandem addition): the file tree, reading
//! and writing files (with a modification-time check against lost updates), and the diff of
//! everything changed since the conversation started, against a baseline of file contents
//! taken when the server first saw the conversation. Every path is confined to the workspace:
//! `..`, absolute paths elsewhere and symlinks leading out answer 403; an empty or malformed
//! path, or a folder where a file belongs (and the other way round), a 422 naming the field.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tandem_protocol::{
    ExecutionStatus, FileDiff, Message, RejectHunkRequest, RejectHunkResponse, WorkspaceDiff,
    WorkspaceEntry, WorkspaceFile, WorkspaceTree, WriteWorkspaceFileRequest,
};

use crate::AppState;
use crate::error::{ApiError, Result};
use crate::extract::{ApiJson, QueryMap, conversation_id};

mod paths;
mod review;

pub use paths::{PathArg, confine, existing_file, writable_file};

/// Largest file the editor reads.
pub const MAX_READ_BYTES: u64 = 10 * 1024 * 1024;
/// Largest file kept in the baseline.
const BASELINE_FILE_BYTES: u64 = 1024 * 1024;
/// Total bytes kept in a baseline.
const BASELINE_TOTAL_BYTES: u64 = 64 * 1024 * 1024;
/// Entries listed at most.
const MAX_ENTRIES: usize = 20_000;
/// Folders never listed or diffed.
const SKIP_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".venv",
    "__pycache__",
    ".tandem",
];
/// The baseline file in the conversation directory.
const BASELINE_FILE: &str = "tandem_workspace_baseline.json";

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root)
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

fn mtime_ms(meta: &std::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn is_binary(bytes: &[u8]) -> bool {
    bytes.iter().take(8192).any(|b| *b == 0) || std::str::from_utf8(bytes).is_err()
}

/// Walks `root` depth-first (sorted), skipping [`SKIP_DIRS`]; calls `f` for every entry.
fn walk(root: &Path, f: &mut dyn FnMut(&Path, &std::fs::Metadata) -> bool) {
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut entries: Vec<_> = rd.flatten().collect();
        entries.sort_by_key(|e| std::cmp::Reverse(e.file_name()));
        let mut subdirs = Vec::new();
        for e in entries.iter().rev() {
            let Ok(meta) = e.path().symlink_metadata() else {
                continue;
            };
            let name = e.file_name();
            if meta.is_dir() && SKIP_DIRS.iter().any(|s| name == *s) {
                continue;
            }
            if !f(&e.path(), &meta) {
                return;
            }
            if meta.is_dir() {
                subdirs.push(e.path());
            }
        }
        stack.extend(subdirs.into_iter().rev());
    }
}

/// File contents of the workspace as first seen, for the diff.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Baseline {
    /// When it was taken (ISO 8601 UTC).
    pub taken_at: String,
    /// Relative path → text, or `None` for a binary or oversized file (then `hash` tells change).
    pub files: BTreeMap<String, BaselineFile>,
    /// The walk stopped at [`MAX_ENTRIES`] files: a path it does not list may have been there.
    #[serde(default)]
    pub truncated: bool,
}

/// One file of the baseline.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BaselineFile {
    /// The text (text files up to 1 MB).
    pub text: Option<String>,
    /// Size and modification time, for files kept without text.
    pub size: u64,
    /// Modification time, ms.
    pub mtime_ms: u64,
}

impl Baseline {
    /// Takes the baseline of `workspace` into `conv_dir` unless one exists.
    pub async fn ensure(conv_dir: &Path, workspace: &Path) {
        let path = conv_dir.join(BASELINE_FILE);
        if path.exists() {
            return;
        }
        let ws = workspace.to_path_buf();
        let done = tokio::task::spawn_blocking(move || {
            let b = Self::take(&ws);
            match serde_json::to_vec(&b) {
                Ok(bytes) => tandem_sdk::atomic_write(&path, &bytes).map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            }
        })
        .await;
        match done {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::warn!("workspace baseline: {e}"),
            Err(e) => tracing::warn!("workspace baseline: {e}"),
        }
    }

    fn take(root: &Path) -> Self {
        let mut files = BTreeMap::new();
        let mut total = 0u64;
        walk(root, &mut |p, meta| {
            if meta.is_file() {
                let size = meta.len();
                let mut text = None;
                if size <= BASELINE_FILE_BYTES
                    && total + size <= BASELINE_TOTAL_BYTES
                    && let Ok(bytes) = std::fs::read(p)
                    && !is_binary(&bytes)
                {
                    total += size;
                    text = String::from_utf8(bytes).ok();
                }
                files.insert(
                    rel(root, p),
                    BaselineFile {
                        text,
                        size,
                        mtime_ms: mtime_ms(meta),
                    },
                );
            }
            files.len() < MAX_ENTRIES
        });
        Self {
            taken_at: chrono::Utc::now()
                .format("%Y-%m-%dT%H:%M:%S%.6fZ")
                .to_string(),
            truncated: files.len() >= MAX_ENTRIES,
            files,
        }
    }

    fn load(conv_dir: &Path) -> Option<Self> {
        serde_json::from_slice(&std::fs::read(conv_dir.join(BASELINE_FILE)).ok()?).ok()
    }
}

/// Everything changed in `root` since the baseline in `conv_dir`.
pub fn diff(conv_dir: &Path, root: &Path) -> WorkspaceDiff {
    let base = Baseline::load(conv_dir).unwrap_or_default();
    let now = Baseline::take(root);
    let mut paths: Vec<&String> = base.files.keys().chain(now.files.keys()).collect();
    paths.sort();
    paths.dedup();
    let mut files = Vec::new();
    for p in paths {
        let (old, new) = (base.files.get(p), now.files.get(p));
        let status = match (old, new) {
            (None, Some(_)) => "added",
            (Some(_), None) => "deleted",
            (Some(o), Some(n)) => {
                let same = match (&o.text, &n.text) {
                    (Some(a), Some(b)) => a == b,
                    _ => o.size == n.size && o.mtime_ms == n.mtime_ms,
                };
                if same {
                    continue;
                }
                "modified"
            }
            (None, None) => continue,
        };
        let old_text = old.and_then(|o| o.text.as_deref());
        let new_text = new.and_then(|n| n.text.as_deref());
        let binary = old.is_some_and(|o| o.text.is_none()) || new.is_some_and(|n| n.text.is_none());
        let diff = if binary {
            String::new()
        } else {
            similar::TextDiff::from_lines(old_text.unwrap_or(""), new_text.unwrap_or(""))
                .unified_diff()
                .header(&format!("a/{p}"), &format!("b/{p}"))
                .to_string()
        };
        files.push(FileDiff {
            path: p.clone(),
            status: status.into(),
            diff,
            binary,
        });
    }
    WorkspaceDiff {
        baseline_at: base.taken_at,
        files,
    }
}

async fn workspace_of(state: &AppState, raw_id: &str) -> Result<(PathBuf, PathBuf)> {
    let id = conversation_id(raw_id)?;
    let live = state.registry.get(&id).await?;
    Ok((live.workspace.clone(), live.handle.dir().to_path_buf()))
}

/// `GET /api/conversations/{id}/workspace/tree`.
pub async fn tree(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    q: QueryMap,
) -> Result<Json<WorkspaceTree>> {
    let (root, _) = workspace_of(&state, &id).await?;
    let base = match q.get("path") {
        Some(p) => {
            let arg = PathArg::new(p, &["query", "path"]);
            let base = confine(&root, arg)?;
            let meta = tokio::fs::metadata(&base)
                .await
                .map_err(|e| arg.io_error("listing", &e))?;
            if !meta.is_dir() {
                return Err(arg.invalid(format!("`{p}` is a file; give the path of a folder")));
            }
            base
        }
        None => root.canonicalize().map_err(|_| ApiError::NotFound)?,
    };
    let root_c = root.canonicalize().map_err(|_| ApiError::NotFound)?;
    let tree = tokio::task::spawn_blocking(move || {
        let mut entries = Vec::new();
        let mut truncated = false;
        walk(&base, &mut |p, meta| {
            if entries.len() >= MAX_ENTRIES {
                truncated = true;
                return false;
            }
            let kind = if meta.file_type().is_symlink() {
                "symlink"
            } else if meta.is_dir() {
                "dir"
            } else {
                "file"
            };
            entries.push(WorkspaceEntry {
                path: rel(&root_c, p),
                kind: kind.into(),
                size: meta.is_file().then_some(meta.len()),
                mtime_ms: Some(mtime_ms(meta)),
            });
            true
        });
        WorkspaceTree {
            root: root_c.to_string_lossy().into_owned(),
            entries,
            truncated,
        }
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Json(tree))
}

/// `GET /api/conversations/{id}/workspace/file?path=`.
pub async fn read_file(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    q: QueryMap,
) -> Result<Json<WorkspaceFile>> {
    let (root, _) = workspace_of(&state, &id).await?;
    let raw = q.get("path").ok_or_else(|| {
        ApiError::field(&["query", "path"], "missing", "Field required", Value::Null)
    })?;
    let arg = PathArg::new(raw, &["query", "path"]);
    let path = confine(&root, arg)?;
    let meta = existing_file(arg, &path).await?;
    if meta.len() > MAX_READ_BYTES {
        return Err(ApiError::Unprocessable(format!(
            "`{raw}` is {} bytes; the editor opens files up to {MAX_READ_BYTES} bytes",
            meta.len()
        )));
    }
    let bytes = tokio::fs::read(&path)
        .await
        .map_err(|e| arg.io_error("reading", &e))?;
    let binary = is_binary(&bytes);
    let root_c = root.canonicalize().map_err(|_| ApiError::NotFound)?;
    Ok(Json(WorkspaceFile {
        path: rel(&root_c, &path),
        size: meta.len(),
        mtime_ms: mtime_ms(&meta),
        binary,
        content: if binary {
            None
        } else {
            String::from_utf8(bytes).ok()
        },
    }))
}

/// `PUT /api/conversations/{id}/workspace/file`: 409 when `expected_mtime_ms` is stale.
pub async fn write_file(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    ApiJson(req): ApiJson<WriteWorkspaceFileRequest>,
) -> Result<Json<WorkspaceFile>> {
    let (root, _) = workspace_of(&state, &id).await?;
    let arg = PathArg::new(&req.path, &["body", "path"]);
    let path = confine(&root, arg)?;
    writable_file(arg, &path).await?;
    if let Some(expected) = req.expected_mtime_ms
        && let Ok(meta) = tokio::fs::metadata(&path).await
    {
        let current = mtime_ms(&meta);
        if current != expected {
            return Err(ApiError::Conflict(format!(
                "`{}` changed since it was read (modified at {current} ms, expected {expected} ms)",
                req.path
            )));
        }
    }
    if let Some(parent) = path.parent() {
        tokio::fs::create_dir_all(parent)
            .await
            .map_err(|e| arg.io_error("creating the folders of", &e))?;
    }
    tokio::fs::write(&path, req.content.as_bytes())
        .await
        .map_err(|e| arg.io_error("writing", &e))?;
    let meta = tokio::fs::metadata(&path)
        .await
        .map_err(|e| arg.io_error("reading", &e))?;
    let root_c = root.canonicalize().map_err(|_| ApiError::NotFound)?;
    Ok(Json(WorkspaceFile {
        path: rel(&root_c, &path),
        size: meta.len(),
        mtime_ms: mtime_ms(&meta),
        binary: false,
        content: None,
    }))
}

/// `GET /api/conversations/{id}/workspace/diff`.
pub async fn workspace_diff(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<WorkspaceDiff>> {
    let (root, dir) = workspace_of(&state, &id).await?;
    let d = tokio::task::spawn_blocking(move || diff(&dir, &root))
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Json(d))
}

/// `POST /api/conversations/{id}/workspace/reject-hunk`: reverts one hunk of a file's diff
/// against the baseline and tells the agent which hunk and why.
pub async fn reject_hunk(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    ApiJson(req): ApiJson<RejectHunkRequest>,
) -> Result<Json<RejectHunkResponse>> {
    let cid = conversation_id(&id)?;
    let live = state.registry.get(&cid).await?;
    let (root, dir) = (live.workspace.clone(), live.handle.dir().to_path_buf());
    if live.handle.status() == ExecutionStatus::Running {
        // The agent could be writing the same file: pause it, then review.
        return Err(ApiError::Conflict(
            "the agent is running: pause it before rejecting a hunk".into(),
        ));
    }
    if req
        .reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > review::MAX_REASON_CHARS)
    {
        return Err(ApiError::field(
            &["body", "reason"],
            "value_error",
            format!(
                "the reason is longer than {} characters",
                review::MAX_REASON_CHARS
            ),
            Value::Null,
        ));
    }
    if !req.hunk.starts_with("@@") {
        return Err(ApiError::field(
            &["body", "hunk"],
            "value_error",
            "a hunk starts with its `@@ -a,b +c,d @@` line",
            Value::from(req.hunk.chars().take(80).collect::<String>()),
        ));
    }
    let arg = PathArg::new(&req.path, &["body", "path"]);
    let path = confine(&root, arg)?;
    writable_file(arg, &path).await?;
    let root_c = root.canonicalize().map_err(|_| ApiError::NotFound)?;
    let shown = rel(&root_c, &path);
    let (hunk, path2, shown2) = (req.hunk.clone(), path.clone(), shown.clone());
    let raw = req.path.clone();
    let exists = tokio::task::spawn_blocking(move || {
        let arg = PathArg::new(&raw, &["body", "path"]);
        review::reject(&dir, &root, arg, &path2, &shown2, &hunk)
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))??;
    let told = live
        .handle
        .send_message(
            Message::user(review::agent_message(
                &shown,
                &req.hunk,
                req.reason.as_deref(),
            )),
            false,
        )
        .await;
    if let Err(e) = &told {
        tracing::warn!(conversation = %cid, "telling the agent about a rejected hunk: {e}");
    }
    let file = match tokio::fs::metadata(&path).await {
        Ok(meta) if exists => Some(WorkspaceFile {
            path: shown.clone(),
            size: meta.len(),
            mtime_ms: mtime_ms(&meta),
            binary: false,
            content: None,
        }),
        _ => None,
    };
    Ok(Json(RejectHunkResponse {
        path: shown,
        exists,
        file,
        agent_told: told.is_ok(),
    }))
}
