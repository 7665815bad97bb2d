//! Moving a conversation between backends (Tandem extension), in two fenced phases:
//! - `POST /api/conversations/{id}/export` writes its capsule (`tandem_capsule`) once it is
//!   stopped at a step boundary, with its workspace as a git bundle;
//! - `POST /api/conversations/import` (on the target) checks the capsule, resolves its LLM,
//!   writes the workspace into its folder and checks the tree, then places the conversation
//!   with the same id, paused where it was, and opens it to check its events;
//! - `POST /api/conversations/{id}/moved` (on the source, once the target has it) leaves a
//!   read-only record that answers any write with 409 and `moved_to`.
//!
//! Until `moved` the source is untouched and runnable: an abort or a crash before it leaves the
//! conversation where it was.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Multipart, Path as UrlPath, State};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tandem_capsule::{ARRIVING_FILE, EXPORTED_FILE, LlmRef, MOVED_FILE, Manifest, WorkspaceRef};
use tandem_checkpoint::RecordLog;
use tandem_protocol::api::{
    ArrivalRequest, ExportConversationRequest, ImportConversationOptions, ImportedConversation,
    MovedTo,
};
use tandem_protocol::{ExecutionStatus, LlmConfig};

use crate::error::{ApiError, Result};
use crate::extract::conversation_id;
use crate::registry::Live;
use crate::{AppState, info};

/// How long an export waits for a forced pause to reach a step boundary.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);
/// How long an export waits for a loop that already stopped stepping to write its last state.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(10);

/// Where conversation `dir` moved, when it did.
pub fn moved_to(dir: &Path) -> Option<MovedTo> {
    let bytes = std::fs::read(dir.join(MOVED_FILE)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// Whether `s` looks like a git object id (hex, 40 or 64 characters).
fn is_commit_id(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The workspace the last export of conversation `dir` carried, `(commit, folder)`, when
/// that folder still holds exactly its files and the store still has the commit: a move back
/// here can then carry only what changed since.
fn exported_base(dir: &Path, checkpoints_home: Option<&Path>) -> Option<(String, PathBuf)> {
    let home = checkpoints_home?;
    let record: Value =
        serde_json::from_slice(&std::fs::read(dir.join(EXPORTED_FILE)).ok()?).ok()?;
    let commit = record["commit"]
        .as_str()
        .filter(|c| is_commit_id(c))?
        .to_owned();
    let folder = PathBuf::from(record["working_dir"].as_str()?);
    if !folder.is_dir() {
        return None;
    }
    let store = tandem_checkpoint::Store::open(home, &folder).ok()?;
    if !store.has_commit(&commit) {
        return None;
    }
    let now = store.snapshot().ok()?;
    (now == store.tree_of(&commit).ok()?).then_some((commit, folder))
}

/// Where conversation `dir` is arriving from, when it is (imported as pending, its move not
/// ended yet).
fn arriving(dir: &Path) -> Option<Value> {
    let bytes = std::fs::read(dir.join(ARRIVING_FILE)).ok()?;
    Some(serde_json::from_slice(&bytes).unwrap_or(Value::Null))
}

/// 409 when conversation `dir` moved away (with `moved_to`) or is still arriving: it does
/// not run here.
pub fn check_dir(dir: &Path) -> Result<()> {
    if let Some(to) = moved_to(dir) {
        return Err(ApiError::Moved(to));
    }
    if let Some(from) = arriving(dir) {
        let from = from["from"].as_str().unwrap_or("another server").to_owned();
        return Err(ApiError::Arriving(from));
    }
    Ok(())
}

/// The folder of conversation `id` (dashed) on this server (404 for an id it cannot name).
fn conversation_dir(state: &AppState, id: &str) -> Result<PathBuf> {
    state
        .registry
        .store()
        .dir_for(id)
        .map_err(|_| ApiError::NotFound)
}

/// 409 when conversation `id` (dashed) moved away or is arriving.
fn check_not_moved(state: &AppState, id: &str) -> Result<()> {
    let dir = conversation_dir(state, id)?;
    check_dir(&dir)
}

/// Refuses whatever would change a conversation that moved away or is arriving: every method
/// but GET, HEAD, OPTIONS and DELETE on `/api/conversations/{id}/…` (but the fence and the
/// arrival of a move), and every socket of it but the events' (which stays readable; a message
/// sent on it is refused there).
pub async fn moved_guard(
    State(state): State<AppState>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    use axum::http::Method;
    let path = request.uri().path();
    let writing = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS | Method::DELETE
    );
    let target = if let Some(rest) = path.strip_prefix("/api/conversations/") {
        let mut parts = rest.split('/');
        let id = parts.next();
        // The hand-over's own steps answer for themselves (a fence repeated after a crash is
        // harmless, the arrival ends an arriving copy).
        let hand_over = matches!(parts.next(), Some("arrival" | "moved")) && parts.next().is_none();
        (writing && !hand_over).then_some(id).flatten()
    } else if let Some(rest) = path.strip_prefix("/sockets/") {
        let mut parts = rest.split('/');
        match (parts.next(), parts.next()) {
            (Some(kind), Some(id)) if kind != "events" => Some(id),
            _ => None,
        }
    } else {
        None
    };
    if let Some(id) = target.and_then(|raw| conversation_id(raw).ok())
        && let Err(e) = check_not_moved(&state, &id)
    {
        return e.into_response();
    }
    next.run(request).await
}

/// Waits until `live`'s run loop has stopped, for at most [`STOP_TIMEOUT`].
async fn stopped(live: &Live) -> bool {
    tokio::time::timeout(STOP_TIMEOUT, live.handle.wait_until_stopped())
        .await
        .is_ok()
}

/// Brings `live` to a step boundary: nothing running, no action waiting for approval.
/// Without `force` a conversation that is not there is refused with 409 naming why.
async fn step_boundary(live: &Live, force: bool) -> Result<()> {
    // A loop whose status already says it stopped (finished, paused, waiting) is only writing
    // its last state: that is a step boundary, so wait for it rather than refuse.
    if live.running()
        && matches!(
            live.handle.status(),
            ExecutionStatus::Finished
                | ExecutionStatus::Paused
                | ExecutionStatus::WaitingForConfirmation
                | ExecutionStatus::Error
                | ExecutionStatus::Stuck
        )
    {
        let _ = tokio::time::timeout(SETTLE_TIMEOUT, live.handle.wait_until_stopped()).await;
    }
    let waiting = live.handle.status() == ExecutionStatus::WaitingForConfirmation;
    let running = live.running();
    if !force {
        if running {
            return Err(ApiError::Conflict(
                "the conversation is running: pause it first (it stops at the end of the step), or export with force".into(),
            ));
        }
        if waiting {
            return Err(ApiError::Conflict(
                "an action waits for approval: approve or reject it first, or export with force (which rejects it)".into(),
            ));
        }
        return Ok(());
    }
    if running {
        live.handle.pause().await?;
        if !stopped(live).await {
            return Err(ApiError::Conflict(
                "the conversation did not stop within a minute after being paused".into(),
            ));
        }
    }
    if live.handle.status() == ExecutionStatus::WaitingForConfirmation {
        live.handle
            .respond_to_confirmation(
                false,
                Some(
                    "The conversation moved to another backend before this action was approved."
                        .into(),
                ),
            )
            .await?;
        if !stopped(live).await {
            return Err(ApiError::Conflict(
                "the conversation did not stop after its pending actions were rejected".into(),
            ));
        }
        if live.running() {
            live.handle.pause().await?;
            stopped(live).await;
        }
    }
    Ok(())
}

/// The name of a profile of this server that the conversation's LLM is, if any.
fn profile_of(llm: &LlmConfig, state: &AppState) -> Option<String> {
    let profiles = state.config.all_profiles();
    if profiles.contains_key(&llm.model) {
        return Some(llm.model.clone());
    }
    profiles
        .iter()
        .find(|(_, p)| p.model == llm.model && p.base_url == llm.base_url)
        .map(|(name, _)| name.clone())
}

/// `base_state.json` without the credentials an MCP server's configuration may hold; the
/// JSON pointers of what was left out.
fn redact_state(bytes: Vec<u8>) -> (Vec<u8>, Vec<String>) {
    let Ok(mut value) = serde_json::from_slice::<Value>(&bytes) else {
        return (bytes, Vec::new());
    };
    let mut redacted = Vec::new();
    if let Some(mcp) = value.pointer_mut("/agent/mcp_config")
        && !mcp.is_null()
    {
        let before = mcp.clone();
        info::hide_mcp_secrets(mcp);
        if *mcp != before {
            redacted.push("/agent/mcp_config".to_owned());
        }
    }
    (serde_json::to_vec(&value).unwrap_or(bytes), redacted)
}

/// The agent's shell as the capsule carries it: its working directory, relative to the
/// workspace when inside it (`cwd`), else as it is (`cwd_outside`), and what its commands
/// changed in its environment (`env`, secrets named only). A shell that is not running gives
/// what it was brought here with (not started since), else the folder of its last command.
async fn terminal_state(live: &Live) -> Option<Value> {
    let workspace = live
        .workspace
        .canonicalize()
        .unwrap_or_else(|_| live.workspace.clone());
    let place = |cwd: &Path| match cwd.strip_prefix(&workspace) {
        Ok(rel) => serde_json::json!({ "cwd": rel.to_string_lossy() }),
        Err(_) => serde_json::json!({ "cwd_outside": cwd.to_string_lossy() }),
    };
    let Some(session) = live.terminal.session() else {
        if let Some(resume) = live.terminal.pending_resume() {
            let mut state = resume
                .cwd
                .as_deref()
                .map_or(Value::Null, |c| place(Path::new(c)));
            if !state.is_object() {
                state = serde_json::json!({});
            }
            state["env"] = serde_json::to_value(resume.env).unwrap_or(Value::Null);
            return Some(state);
        }
        let view = live.handle.view();
        let last = view.events.iter().rev().find_map(|e| {
            let v = serde_json::to_value(e).ok()?;
            (v["kind"] == "ObservationEvent" && v["tool_name"] == tandem_tools::terminal::TOOL_NAME)
                .then(|| {
                    v["observation"]["metadata"]["working_dir"]
                        .as_str()
                        .map(str::to_owned)
                })
                .flatten()
        });
        return last.map(|cwd| place(Path::new(&cwd)));
    };
    let cancel = tokio_util::sync::CancellationToken::new();
    match tokio::time::timeout(SHELL_LIMIT, session.shell_state(&cancel)).await {
        Ok(Ok((cwd, env))) => {
            let cwd = cwd.or_else(|| {
                std::fs::read_link(format!("/proc/{}/cwd", session.shell_pid())).ok()
            })?;
            let mut state = place(&cwd);
            state["env"] = serde_json::to_value(env).unwrap_or(Value::Null);
            Some(state)
        }
        answer => {
            match answer {
                Ok(Err(e)) => tracing::warn!("the shell's environment stays behind: {e}"),
                _ => {
                    tracing::warn!("the shell's environment stays behind: the shell did not answer")
                }
            }
            let cwd = std::fs::read_link(format!("/proc/{}/cwd", session.shell_pid())).ok()?;
            Some(place(&cwd))
        }
    }
}

/// How long the shell gets to report or take its environment during a move.
const SHELL_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Starts the imported conversation's shell where the source's was: the same folder of the
/// workspace (or outside it, when that folder exists here too), with the environment changes
/// its commands had made. The state is written beside the conversation first, so a shell
/// started later (after a restart, or by `tandem resume`) takes it too.
async fn restore_terminal(live: &Live, terminal: Option<&Value>, working_dir: &Path) {
    let Some(t) = terminal else {
        return;
    };
    let dir = match (
        t.get("cwd").and_then(Value::as_str),
        t.get("cwd_outside").and_then(Value::as_str),
    ) {
        (Some(rel), _)
            if !Path::new(rel)
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir)) =>
        {
            working_dir.join(rel)
        }
        (_, Some(abs)) => PathBuf::from(abs),
        _ => working_dir.to_path_buf(),
    };
    let resume = tandem_tools::terminal::ShellResume {
        cwd: Some(dir.to_string_lossy().into_owned()),
        env: t
            .get("env")
            .and_then(|e| serde_json::from_value(e.clone()).ok())
            .unwrap_or_default(),
    };
    let file = live.handle.dir().join(tandem_tools::terminal::RESUME_FILE);
    let written = serde_json::to_vec(&resume)
        .map_err(|e| e.to_string())
        .and_then(|b| tandem_fs::atomic_write(&file, &b).map_err(|e| e.to_string()));
    if let Err(e) = written {
        tracing::warn!("the shell's folder and environment were not kept: {e}");
        return;
    }
    if !dir.is_dir() {
        tracing::warn!(dir = %dir.display(), "the shell's folder is not here: it starts in the workspace");
    }
    let terminal = Arc::clone(&live.terminal);
    let workspace = working_dir.to_path_buf();
    let started = tokio::task::spawn_blocking(move || terminal.start_session(&workspace)).await;
    if !matches!(started, Ok(Ok(_))) {
        tracing::warn!("the shell could not be started: it starts at the agent's next command");
        return;
    }
    let cancel = tokio_util::sync::CancellationToken::new();
    match tokio::time::timeout(SHELL_LIMIT, live.terminal.settle_resume(&cancel)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!("the shell's environment was not restored: {e}"),
        Err(_) => {
            tracing::warn!("the shell's environment was not restored: the shell did not answer")
        }
    }
}

/// How long the browser gets to give or take its state during a move.
const BROWSER_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The agent's browser as the capsule carries it (cookies, tabs, storage), when it runs.
/// Refused while a person drives it: their session would be cut.
async fn browser_state(live: &Live) -> Result<Option<Value>> {
    let Some(browser) = &live.browser else {
        return Ok(None);
    };
    if browser.driver() == tandem_protocol::BrowserDriver::Person {
        return Err(ApiError::Conflict(
            "a person drives the browser: hand it back to the agent before moving the conversation"
                .into(),
        ));
    }
    let masker = live.handle.masker();
    match tokio::time::timeout(BROWSER_LIMIT, browser.export_state(&masker)).await {
        Ok(Ok(state)) => Ok(state.map(|s| serde_json::to_value(s).unwrap_or(Value::Null))),
        Ok(Err(e)) => Err(ApiError::Internal(format!(
            "the browser's state cannot be read: {e}"
        ))),
        Err(_) => Err(ApiError::Internal(
            "the browser's state cannot be read: the browser did not answer".into(),
        )),
    }
}

/// Opens the moved browser state (its cookies first, then its tabs) in the imported
/// conversation's browser.
async fn restore_browser(live: &Live, moved: Option<&Value>) {
    let (Some(browser), Some(moved)) = (&live.browser, moved) else {
        return;
    };
    let Ok(moved) = serde_json::from_value::<tandem_browser::MovedBrowser>(moved.clone()) else {
        tracing::warn!("the capsule's browser state is not readable: the browser starts empty");
        return;
    };
    match tokio::time::timeout(BROWSER_LIMIT, browser.import_state(&moved)).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!("the browser's tabs were not reopened: {e}"),
        Err(_) => {
            tracing::warn!("the browser's tabs were not reopened: the browser did not answer")
        }
    }
}

/// The capsule of `live`, written into `scratch`; blocking.
fn write_capsule(
    live: &Live,
    state: &AppState,
    request: &ExportConversationRequest,
    terminal: Option<Value>,
    browser: Option<Value>,
    scratch: &Path,
) -> std::result::Result<(PathBuf, tandem_capsule::Exported), String> {
    let dir = live.handle.dir().to_path_buf();
    let (conversation, title) = {
        let view = live.handle.view();
        (view.state.clone(), view.meta.title.clone())
    };
    // The workspace now, as a commit beside the checkpoints, in one bundle.
    let bundle = scratch.join("workspace.bundle");
    let workspace = match &state.config.checkpoints_home {
        Some(home) if live.workspace.is_dir() => {
            let store = tandem_checkpoint::Store::open(home, &live.workspace)
                .map_err(|e| format!("the workspace cannot be read: {e}"))?;
            let taken = store
                .take("moving the conversation to another backend")
                .map_err(|e| format!("the workspace cannot be read: {e}"))?;
            let mut commits = vec![taken.commit.clone()];
            commits.extend(
                RecordLog::new(&dir)
                    .read()
                    .unwrap_or_default()
                    .into_iter()
                    .map(|c| c.id),
            );
            // Only what changed since a commit the target has, when this store has it too.
            let base = request
                .base_commit
                .as_deref()
                .filter(|b| is_commit_id(b) && store.has_commit(b));
            store
                .bundle_since(&commits, base, &bundle)
                .map_err(|e| format!("the workspace cannot be bundled: {e}"))?;
            let exported = serde_json::json!({
                "commit": taken.commit,
                "working_dir": live.workspace.to_string_lossy(),
            });
            if let Err(e) =
                tandem_fs::atomic_write(&dir.join(EXPORTED_FILE), exported.to_string().as_bytes())
            {
                tracing::warn!("a move back here will carry the whole workspace: {e}");
            }
            Some(WorkspaceRef {
                commit: taken.commit,
                tree: taken.tree,
                source_dir: live.workspace.to_string_lossy().into_owned(),
                base: base.map(str::to_owned),
            })
        }
        _ => None,
    };
    let secrets: Vec<String> = serde_json::to_value(&conversation.secret_registry)
        .ok()
        .and_then(|v| {
            v.get("secret_sources")
                .and_then(Value::as_object)
                .map(|m| m.keys().cloned().collect())
        })
        .unwrap_or_default();
    let llm = &conversation.agent.llm;
    let manifest = Manifest {
        format: String::new(),
        version: 0,
        conversation_id: live.handle.id().to_owned(),
        title,
        exported_at: String::new(),
        source_url: request.source_url.clone(),
        workspace,
        llm: LlmRef {
            model: llm.model.clone(),
            base_url: llm.base_url.clone(),
            profile: request
                .llm_profile
                .clone()
                .or_else(|| profile_of(llm, state)),
        },
        secrets,
        redacted: Vec::new(),
        terminal,
        browser,
        replay: request.include_replay,
    };
    // What the state's redaction leaves out is named in the manifest, written first.
    let mut manifest = manifest;
    manifest.redacted = std::fs::read(dir.join("base_state.json"))
        .map(|b| redact_state(b).1)
        .unwrap_or_default();
    let transform = |rel: &Path, bytes: Vec<u8>| {
        if rel == Path::new("base_state.json") {
            redact_state(bytes).0
        } else {
            bytes
        }
    };
    let out = scratch.join("conversation.tandem-capsule");
    let exported = tandem_capsule::export(
        tandem_capsule::ExportInput {
            manifest,
            conversation_dir: &dir,
            bundle: bundle.is_file().then_some(bundle.as_path()),
            transform: &transform,
        },
        &out,
    )
    .map_err(|e| e.to_string())?;
    Ok((out, exported))
}

/// `POST /api/conversations/{id}/export`: the conversation's capsule
/// (`application/x-tandem-capsule`).
pub async fn export(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    body: Option<Json<ExportConversationRequest>>,
) -> Result<Response> {
    let request = body.map(|Json(b)| b).unwrap_or_default();
    let id = conversation_id(&id)?;
    check_not_moved(&state, &id)?;
    let live = state.registry.get(&id).await?;
    let _watch = live.watch();
    step_boundary(&live, request.force).await?;
    let before = live.handle.view().events.len();
    let terminal = terminal_state(&live).await;
    let browser = browser_state(&live).await?;
    let scratch = tempfile::tempdir()
        .map_err(|e| ApiError::Internal(format!("cannot make a scratch folder: {e}")))?;
    let scratch_path = scratch.path().to_path_buf();
    let (live2, state2) = (Arc::clone(&live), state.clone());
    let (out, exported) = tokio::task::spawn_blocking(move || {
        write_capsule(&live2, &state2, &request, terminal, browser, &scratch_path)
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?
    .map_err(|e| ApiError::Internal(format!("cannot write the capsule: {e}")))?;
    if live.handle.view().events.len() != before || live.running() {
        return Err(ApiError::Conflict(
            "the conversation changed while it was exported (it was run again): export it again once it is stopped".into(),
        ));
    }
    tracing::info!(
        conversation = %id,
        bytes = exported.bytes,
        events = exported.sums.events,
        "exported the conversation's capsule"
    );
    let file = tokio::fs::File::open(&out)
        .await
        .map_err(|e| ApiError::Internal(format!("cannot read the capsule: {e}")))?;
    // The open file stays readable once the scratch folder goes with the stream.
    let stream = tokio_util::io::ReaderStream::new(file);
    let body = axum::body::Body::from_stream(futures::StreamExt::map(stream, move |chunk| {
        let _keep = &scratch;
        chunk
    }));
    Ok((
        [
            (
                axum::http::header::CONTENT_TYPE,
                tandem_capsule::MEDIA_TYPE.to_owned(),
            ),
            (
                axum::http::header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{id}.tandem-capsule\""),
            ),
        ],
        body,
    )
        .into_response())
}

fn multipart_error(e: axum::extract::multipart::MultipartError) -> ApiError {
    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::TooLarge("The capsule is larger than this server accepts.".into())
    } else {
        ApiError::BadRequest(format!("bad multipart body (the upload was cut off?): {e}"))
    }
}

/// A folder name for `title`: letters, digits and dashes.
pub fn folder_name(title: Option<&str>, id: &str) -> String {
    let slug: String = title
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let slug: Vec<&str> = slug.split('-').filter(|s| !s.is_empty()).collect();
    let short = &id.replace('-', "")[..8.min(id.len())];
    if slug.is_empty() {
        format!("conversation-{short}")
    } else {
        format!(
            "{}-{short}",
            slug.join("-").chars().take(40).collect::<String>()
        )
    }
}

/// Whether the events of the conversation in `old` are the first events of the one in `new`,
/// byte for byte (a record left here by an earlier move, coming back).
fn events_prefix(old: &Path, new: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(old.join("events")) else {
        return false;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        match (
            std::fs::read(entry.path()),
            std::fs::read(new.join("events").join(&name)),
        ) {
            (Ok(a), Ok(b)) if a == b => {}
            _ => return false,
        }
    }
    true
}

/// Whether this server can run the capsule's LLM: `given` with the import, a profile of the
/// name, a profile or the environment with a key for the model, or a provider on loopback
/// (which needs none).
fn resolve_llm(
    llm: &LlmRef,
    given: Option<&LlmConfig>,
    state: &AppState,
) -> Result<Option<LlmConfig>> {
    if let Some(given) = given {
        if given.model.trim().is_empty() {
            return Err(ApiError::field(
                &["body", "options", "llm", "model"],
                "missing",
                "the LLM given with the import names no model",
                Value::Null,
            ));
        }
        return Ok(Some(given.clone()));
    }
    // A profile of this server: the one of that name, else one for the model (the demo's
    // needs no key). The conversation runs on it here (its address; its key stays in memory).
    let profiles = state.config.all_profiles();
    let by_name = llm
        .profile
        .as_ref()
        .and_then(|name| profiles.get(name))
        .filter(|p| p.model == llm.model);
    let by_model = || {
        let mut same: Vec<_> = profiles
            .iter()
            .filter(|(_, p)| p.model == llm.model)
            .collect();
        same.sort_by_key(|(name, _)| name.as_str() != "default");
        same.first().map(|(_, p)| *p)
    };
    if let Some(profile) = by_name.or_else(by_model) {
        return Ok(Some(profile.clone()));
    }
    let keyed =
        crate::registry::fallback_key(&llm.model, llm.base_url.as_deref(), &profiles).is_some();
    let loopback = llm.base_url.as_deref().is_some_and(|u| {
        u.starts_with("http://127.")
            || u.starts_with("http://localhost")
            || u.starts_with("http://[::1]")
    });
    if keyed || loopback {
        return Ok(None);
    }
    Err(ApiError::field(
        &["body", "options", "llm"],
        "missing",
        format!(
            "this server cannot run the conversation's LLM {}{}: it has no profile{} with a key for it. Add one, or give `llm` (with its key) in the import's options",
            llm.model,
            llm.base_url
                .as_deref()
                .map(|u| format!(" at {u}"))
                .unwrap_or_default(),
            llm.profile
                .as_deref()
                .map(|p| format!(" named {p:?}"))
                .unwrap_or_default(),
        ),
        Value::Null,
    ))
}

/// What the blocking part of an import placed.
struct Placed {
    working_dir: PathBuf,
    manifest: Manifest,
    sums: tandem_capsule::Sums,
}

/// Writes the workspace of the capsule opened in `staging` into `working_dir` and checks its
/// tree (the caller removes a folder it made when this fails).
fn place_workspace(
    opened: &tandem_capsule::Opened,
    working_dir: &Path,
    checkpoints_home: Option<&Path>,
    scratch: &Path,
) -> std::result::Result<(), ApiError> {
    let Some(ws) = &opened.manifest.workspace else {
        if working_dir.is_dir() {
            return Ok(());
        }
        return Err(ApiError::field(
            &["body", "options", "working_dir"],
            "value_error",
            format!(
                "the capsule carries no workspace (checkpoints were off on its server): give a working_dir that exists here ({} does not)",
                working_dir.display()
            ),
            Value::Null,
        ));
    };
    let Some(bundle) = &opened.bundle else {
        return Err(ApiError::field(
            &["body", "capsule"],
            "value_error",
            "the capsule names a workspace but has no workspace.bundle",
            Value::Null,
        ));
    };
    if let (Some(base), Some(home)) = (&ws.base, checkpoints_home) {
        // A delta into the folder it left: only what changed is written.
        let store = tandem_checkpoint::Store::open(home, working_dir)
            .map_err(|e| ApiError::Internal(format!("the workspace's store: {e}")))?;
        store
            .import_bundle(bundle)
            .map_err(|e| ApiError::Internal(format!("cannot read the capsule's workspace: {e}")))?;
        let tree = store
            .advance(base, &ws.commit)
            .map_err(|e| ApiError::Internal(format!("cannot write the workspace: {e}")))?
            .ok_or_else(|| {
                ApiError::Conflict(format!(
                    "{} changed since the conversation left it: move it again (it is then sent whole)",
                    working_dir.display()
                ))
            })?;
        if tree != ws.tree {
            return Err(ApiError::Internal(format!(
                "the workspace came out different from the source's (tree {tree}, expected {})",
                ws.tree
            )));
        }
        return give_to_owner(working_dir);
    }
    std::fs::create_dir_all(working_dir).map_err(|e| {
        ApiError::Conflict(format!(
            "cannot make the workspace {}: {e}",
            working_dir.display()
        ))
    })?;
    // Checkpoints off here: the workspace is still written and checked, through a store of
    // its own in the scratch folder.
    let home = checkpoints_home.unwrap_or(scratch);
    let store = tandem_checkpoint::Store::open(home, working_dir)
        .map_err(|e| ApiError::Internal(format!("the workspace's store: {e}")))?;
    let before = store
        .snapshot()
        .map_err(|e| ApiError::Internal(format!("cannot read {}: {e}", working_dir.display())))?;
    store
        .import_bundle(bundle)
        .map_err(|e| ApiError::Internal(format!("cannot read the capsule's workspace: {e}")))?;
    if before == ws.tree {
        // It holds the conversation's files already (a folder both sides share).
        return Ok(());
    }
    if before != tandem_checkpoint::EMPTY_TREE {
        return Err(ApiError::Conflict(format!(
            "the workspace folder {} is not empty and holds other files than the conversation's: give an empty or new working_dir",
            working_dir.display()
        )));
    }
    let tree = store
        .materialize(&ws.commit)
        .map_err(|e| ApiError::Internal(format!("cannot write the workspace: {e}")))?;
    if tree != ws.tree {
        return Err(ApiError::Internal(format!(
            "the workspace came out different from the source's (tree {tree}, expected {})",
            ws.tree
        )));
    }
    give_to_owner(working_dir)
}

/// Gives the files written into `working_dir` to the folder's owner when this server runs as
/// root and the folder is someone else's (a sandbox's workspace belongs to the person whose
/// user the agent's commands run as).
fn give_to_owner(working_dir: &Path) -> std::result::Result<(), ApiError> {
    use std::os::unix::fs::MetadataExt;
    // This process's user: the owner of its /proc entry.
    if std::fs::metadata("/proc/self").map_or(true, |m| m.uid() != 0) {
        return Ok(());
    }
    let meta = std::fs::metadata(working_dir)
        .map_err(|e| ApiError::Internal(format!("cannot read {}: {e}", working_dir.display())))?;
    if meta.uid() == 0 {
        return Ok(());
    }
    let (uid, gid) = (meta.uid(), meta.gid());
    let mut stack = vec![working_dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = std::fs::read_dir(&dir)
            .map_err(|e| ApiError::Internal(format!("cannot read {}: {e}", dir.display())))?;
        for entry in entries.flatten() {
            let path = entry.path();
            std::os::unix::fs::lchown(&path, Some(uid), Some(gid)).map_err(|e| {
                ApiError::Internal(format!("cannot give {} to its owner: {e}", path.display()))
            })?;
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(path);
            }
        }
    }
    Ok(())
}

/// Where the imported conversation's workspace goes: the options' folder, or a new one under
/// this server's workspace root.
fn working_dir_for(
    options: &ImportConversationOptions,
    manifest: &Manifest,
    record: Option<&Path>,
    state: &AppState,
) -> Result<PathBuf> {
    // A delta comes back into the folder it left (the one holding its base).
    let base = manifest.workspace.as_ref().and_then(|w| w.base.as_deref());
    if let Some(base) = base {
        let held = record.and_then(|r| exported_base(r, state.config.checkpoints_home.as_deref()));
        return match held {
            Some((commit, folder)) if commit == base => Ok(folder),
            _ => Err(ApiError::Conflict(
                "the capsule carries only what changed since a workspace this server no longer holds as it was: move it again (it is then sent whole)".into(),
            )),
        };
    }
    match options.working_dir.as_deref().map(str::trim) {
        Some(dir) if !dir.is_empty() => {
            let dir = PathBuf::from(dir);
            if !dir.is_absolute() {
                return Err(ApiError::field(
                    &["body", "options", "working_dir"],
                    "value_error",
                    "working_dir must be an absolute path",
                    Value::from(dir.to_string_lossy().into_owned()),
                ));
            }
            Ok(dir)
        }
        _ => Ok(state.config.workspace_path.join(folder_name(
            manifest.title.as_deref(),
            &manifest.conversation_id,
        ))),
    }
}

/// Flushes the file systems holding `paths` to disk (`syncfs`): every file written there,
/// whatever their number, in one call each.
fn sync_file_systems(paths: &[&Path]) {
    use std::os::fd::AsRawFd;
    for path in paths {
        match std::fs::File::open(path) {
            Ok(f) => {
                if let Err(e) = nix::unistd::syncfs(f.as_raw_fd()) {
                    tracing::warn!(path = %path.display(), "cannot flush to disk: {e}");
                }
            }
            Err(e) => tracing::warn!(path = %path.display(), "cannot flush to disk: {e}"),
        }
    }
}

/// The blocking part of an import: opens and checks the capsule, places the workspace and the
/// conversation's folder.
fn place(
    capsule: &Path,
    options: &ImportConversationOptions,
    run_on: Option<&LlmConfig>,
    state: &AppState,
    scratch: &Path,
) -> Result<Placed> {
    let staging = scratch.join("opened");
    let opened = tandem_capsule::open(capsule, &staging).map_err(|e| match e {
        tandem_capsule::CapsuleError::Io { .. } => ApiError::Internal(e.to_string()),
        other => ApiError::field(
            &["body", "capsule"],
            "value_error",
            other.to_string(),
            Value::Null,
        ),
    })?;
    let id = conversation_id(&opened.manifest.conversation_id).map_err(|_| {
        ApiError::field(
            &["body", "capsule"],
            "value_error",
            format!(
                "the capsule's conversation id {:?} is not a UUID",
                opened.manifest.conversation_id
            ),
            Value::Null,
        )
    })?;
    let store = state.registry.store();
    let final_dir = store.dir_for(&id).map_err(|_| ApiError::NotFound)?;
    let mut replaced = None;
    if final_dir.exists() {
        if moved_to(&final_dir).is_some() && events_prefix(&final_dir, &opened.conversation_dir) {
            replaced = Some(final_dir.clone());
        } else {
            return Err(ApiError::Conflict(format!(
                "a conversation with id {id} already exists on this server"
            )));
        }
    }
    let working_dir = working_dir_for(options, &opened.manifest, replaced.as_deref(), state)?;
    let made = !working_dir.exists();
    if options.pending {
        // Placed with its mark, in the same rename: it never runs here before its move ends.
        let mark = serde_json::json!({
            "from": opened.manifest.source_url,
            "working_dir": working_dir.to_string_lossy(),
            "made_working_dir": made,
        });
        tandem_fs::atomic_write(
            &opened.conversation_dir.join(ARRIVING_FILE),
            mark.to_string().as_bytes(),
        )
        .map_err(|e| {
            ApiError::Internal(format!("cannot mark the conversation as arriving: {e}"))
        })?;
    }
    let placed = place_workspace(
        &opened,
        &working_dir,
        state.config.checkpoints_home.as_deref(),
        &scratch.join("store"),
    );
    if let Err(e) = placed {
        if made {
            let _ = std::fs::remove_dir_all(&working_dir);
        }
        return Err(e);
    }
    // The conversation's state names its new folder; the rest is as exported.
    let state_path = opened.conversation_dir.join("base_state.json");
    let rewritten = std::fs::read(&state_path)
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<Value>(&b).map_err(|e| e.to_string()))
        .and_then(|mut v| {
            if v.get("id")
                .and_then(Value::as_str)
                .map(|s| s.replace('-', ""))
                != Some(id.replace('-', ""))
            {
                return Err("its state belongs to another conversation".to_owned());
            }
            v["workspace"]["working_dir"] = Value::from(working_dir.to_string_lossy().into_owned());
            // The LLM this server resolved: its address (never its key) from now on.
            if let Some(llm) = run_on {
                v["agent"]["llm"]["model"] = Value::from(llm.model.clone());
                v["agent"]["llm"]["base_url"] =
                    llm.base_url.clone().map_or(Value::Null, Value::from);
            }
            v["persistence_dir"] = Value::from(final_dir.to_string_lossy().into_owned());
            serde_json::to_vec(&v).map_err(|e| e.to_string())
        })
        .and_then(|bytes| tandem_fs::atomic_write(&state_path, &bytes).map_err(|e| e.to_string()));
    if let Err(e) = rewritten {
        if made {
            let _ = std::fs::remove_dir_all(&working_dir);
        }
        return Err(ApiError::field(
            &["body", "capsule"],
            "value_error",
            format!("the capsule's base_state.json: {e}"),
            Value::Null,
        ));
    }
    // Into place: the staging folder is on the same disk as the conversations (the scratch
    // folder is inside their root).
    let aside = replaced
        .as_ref()
        .map(|old| old.with_file_name(format!(".{}-replaced", id.replace('-', ""))));
    if let (Some(old), Some(aside)) = (&replaced, &aside) {
        let _ = std::fs::remove_dir_all(aside);
        std::fs::rename(old, aside)
            .map_err(|e| ApiError::Internal(format!("cannot set the old record aside: {e}")))?;
    }
    if let Err(e) = std::fs::rename(&opened.conversation_dir, &final_dir) {
        if let (Some(old), Some(aside)) = (&replaced, &aside) {
            let _ = std::fs::rename(aside, old);
        }
        if made {
            let _ = std::fs::remove_dir_all(&working_dir);
        }
        return Err(ApiError::Internal(format!(
            "cannot place the conversation: {e}"
        )));
    }
    if let Some(aside) = &aside {
        let _ = std::fs::remove_dir_all(aside);
    }
    // The upload and what was unpacked from it go first: their unwritten pages are dropped
    // instead of flushed with the rest.
    let _ = std::fs::remove_file(capsule);
    let _ = std::fs::remove_dir_all(&staging);
    let _ = std::fs::remove_dir_all(scratch.join("store"));
    // On disk before the import answers (the source is fenced after that answer): the
    // conversation and its workspace, one syncfs for each file system they are on.
    sync_file_systems(&[&final_dir, &working_dir]);
    Ok(Placed {
        working_dir,
        manifest: opened.manifest,
        sums: opened.sums,
    })
}

/// Clears what imports cut off by a crash left in the conversations' root: their scratch
/// folders go (nothing in them was placed), and an old record set aside to be replaced goes
/// back in place when its replacement never arrived.
pub fn sweep_imports(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let set_aside = name
            .strip_prefix('.')
            .and_then(|n| n.strip_suffix("-replaced"));
        let outcome = match set_aside {
            Some(hex) if !root.join(hex).exists() => std::fs::rename(entry.path(), root.join(hex)),
            Some(_) => std::fs::remove_dir_all(entry.path()),
            None if name.starts_with(".import-") => std::fs::remove_dir_all(entry.path()),
            None => Ok(()),
        };
        if let Err(e) = outcome {
            tracing::warn!(folder = %entry.path().display(), "cannot clear what an import left: {e}");
        }
    }
}

/// `POST /api/conversations/import`: multipart `capsule` (the file) and optional `options`
/// (JSON [`ImportConversationOptions`]).
pub async fn import(State(state): State<AppState>, multipart: Multipart) -> Result<Response> {
    import_capsule(state, multipart).await.map_err(disk_full)
}

/// `e`, as 507 when it comes from a full disk (the capsule, the workspace or the
/// conversation could not be written), its text kept.
fn disk_full(e: ApiError) -> ApiError {
    match e {
        ApiError::Internal(m) | ApiError::Conflict(m)
            if m.contains("No space left on device") || m.contains("os error 28") =>
        {
            ApiError::NoSpace(format!(
                "this server's disk is full; nothing of the conversation was kept here: {m}"
            ))
        }
        other => other,
    }
}

async fn import_capsule(state: AppState, mut multipart: Multipart) -> Result<Response> {
    // The scratch folder is inside the conversations' root, so placing is a rename.
    let root = state.config.conversations_path.clone();
    tokio::fs::create_dir_all(&root)
        .await
        .map_err(|e| ApiError::Internal(format!("cannot make {}: {e}", root.display())))?;
    let scratch = tempfile::Builder::new()
        .prefix(".import-")
        .tempdir_in(&root)
        .map_err(|e| ApiError::Internal(format!("cannot make a scratch folder: {e}")))?;
    let capsule = scratch.path().join("upload.tandem-capsule");
    let mut options = ImportConversationOptions::default();
    let mut received = false;
    while let Some(mut field) = multipart.next_field().await.map_err(multipart_error)? {
        match field.name() {
            Some("capsule") => {
                use tokio::io::AsyncWriteExt;
                let mut file = tokio::fs::File::create(&capsule)
                    .await
                    .map_err(|e| ApiError::Internal(format!("cannot store the upload: {e}")))?;
                while let Some(chunk) = field.chunk().await.map_err(multipart_error)? {
                    file.write_all(&chunk).await.map_err(|e| {
                        ApiError::Conflict(format!(
                            "cannot store the capsule on this server (is its disk full?): {e}"
                        ))
                    })?;
                }
                file.flush().await.map_err(|e| {
                    ApiError::Conflict(format!("cannot store the capsule on this server: {e}"))
                })?;
                received = true;
            }
            Some("options") => {
                let bytes = field.bytes().await.map_err(multipart_error)?;
                options = serde_json::from_slice(&bytes).map_err(|e| {
                    ApiError::field(
                        &["body", "options"],
                        "json_invalid",
                        e.to_string(),
                        Value::Null,
                    )
                })?;
            }
            _ => {}
        }
    }
    if !received {
        return Err(ApiError::field(
            &["body", "capsule"],
            "missing",
            "Field required: the capsule file",
            Value::Null,
        ));
    }
    // The LLM and the id are checked before anything is written.
    let manifest = tandem_capsule::manifest(&capsule).map_err(|e| {
        ApiError::field(
            &["body", "capsule"],
            "value_error",
            e.to_string(),
            Value::Null,
        )
    })?;
    let llm = resolve_llm(&manifest.llm, options.llm.as_ref(), &state)?;
    let id = conversation_id(&manifest.conversation_id)?;
    let existing = conversation_dir(&state, &id)?;
    if moved_to(&existing).is_some() {
        // A record of an earlier move, open for reading: it is replaced if the capsule
        // continues it (checked while placing).
        state.registry.retire(&id).await?;
    } else if state.registry.live_now(&id).await {
        return Err(ApiError::Conflict(format!(
            "a conversation with id {id} already exists on this server (it is open now)"
        )));
    }
    let (state2, scratch_path) = (state.clone(), scratch.path().to_path_buf());
    let (opts, run_on) = (options.clone(), llm.clone());
    let placed = tokio::task::spawn_blocking(move || {
        place(&capsule, &opts, run_on.as_ref(), &state2, &scratch_path)
    })
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))??;
    if let Some(llm) = llm {
        state.registry.use_llm(&id, llm);
    }
    // Opened as any conversation is: its state rebuilt from its events.
    let opened = state.registry.get(&id).await;
    let live = match opened {
        Ok(live) => live,
        Err(e) => {
            let _ = state.registry.delete(&id).await;
            return Err(ApiError::Internal(format!(
                "the imported conversation does not open: {e}"
            )));
        }
    };
    let (events, last) = {
        let view = live.handle.view();
        (
            view.events.len(),
            view.events.last().map(|e| e.id().to_owned()),
        )
    };
    if events != placed.sums.events || last != placed.sums.last_event_id {
        let _ = state.registry.delete(&id).await;
        return Err(ApiError::Internal(format!(
            "the imported conversation opened with {events} events, the capsule has {}",
            placed.sums.events
        )));
    }
    restore_terminal(
        &live,
        placed.manifest.terminal.as_ref(),
        &placed.working_dir,
    )
    .await;
    restore_browser(&live, placed.manifest.browser.as_ref()).await;
    if !options.secrets.is_empty() {
        let secrets: BTreeMap<String, Value> = options
            .secrets
            .iter()
            .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
            .collect();
        let parsed =
            crate::registry::parse_secrets(Some(&secrets), &["body", "options", "secrets"])?;
        live.handle.update_secrets(parsed).await?;
    }
    tracing::info!(conversation = %id, events, working_dir = %placed.working_dir.display(), "imported a conversation");
    let answer = ImportedConversation {
        conversation: live.info(),
        working_dir: placed.working_dir.to_string_lossy().into_owned(),
        events,
        last_event_id: last,
        workspace_tree: placed.manifest.workspace.map(|w| w.tree),
        execution_status: live.handle.status(),
    };
    Ok((axum::http::StatusCode::CREATED, Json(answer)).into_response())
}

/// `POST /api/conversations/{id}/moved`: the conversation now continues at `url` as
/// `conversation_id`; here it becomes a read-only record.
pub async fn moved(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    Json(body): Json<MovedTo>,
) -> Result<Json<MovedTo>> {
    let id = conversation_id(&id)?;
    if body.url.trim().is_empty() {
        return Err(ApiError::field(
            &["body", "url"],
            "missing",
            "the url the conversation moved to",
            Value::Null,
        ));
    }
    conversation_id(&body.conversation_id).map_err(|_| {
        ApiError::field(
            &["body", "conversation_id"],
            "uuid_parsing",
            "Input should be a valid UUID",
            Value::from(body.conversation_id.clone()),
        )
    })?;
    let dir = conversation_dir(&state, &id)?;
    if let Some(to) = moved_to(&dir) {
        if to.url == body.url && to.conversation_id == body.conversation_id {
            return Ok(Json(to));
        }
        return Err(ApiError::Moved(to));
    }
    check_dir(&dir)?;
    let live = state.registry.get(&id).await?;
    if live.running() {
        return Err(ApiError::Conflict(
            "the conversation is running here: it was not exported at a step boundary, or ran again since".into(),
        ));
    }
    if let Some(last) = &body.last_event_id {
        let here = live.handle.view().events.last().map(|e| e.id().to_owned());
        if here.as_deref() != Some(last.as_str()) {
            return Err(ApiError::Conflict(format!(
                "the conversation went on here since it was exported (its newest event is {}, the target has {last}): export it again",
                here.as_deref().unwrap_or("none")
            )));
        }
    }
    let record = MovedTo {
        moved_at: Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)),
        ..body
    };
    let bytes =
        serde_json::to_vec_pretty(&record).map_err(|e| ApiError::Internal(e.to_string()))?;
    tandem_fs::atomic_write(&dir.join(MOVED_FILE), &bytes)
        .map_err(|e| ApiError::Internal(format!("cannot record the move: {e}")))?;
    state.registry.retire(&id).await?;
    tracing::info!(conversation = %id, to = %record.url, "the conversation moved away: it is a read-only record here");
    Ok(Json(record))
}

/// `GET /api/conversations/{id}/moved`: where the conversation went, and the workspace this
/// server still holds for a move back (`workspace_base`); 404 when it did not move away.
pub async fn moved_record(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<MovedTo>> {
    let id = conversation_id(&id)?;
    let dir = conversation_dir(&state, &id)?;
    let mut record = moved_to(&dir).ok_or(ApiError::NotFound)?;
    let home = state.config.checkpoints_home.clone();
    record.workspace_base =
        tokio::task::spawn_blocking(move || exported_base(&dir, home.as_deref()))
            .await
            .ok()
            .flatten()
            .map(|(commit, _)| commit);
    Ok(Json(record))
}

/// `POST /api/conversations/{id}/arrival`: ends a move toward this server. Accepted, the
/// arriving conversation runs here from now on; rejected, the arriving copy is deleted with
/// the workspace folder its import made. Repeating either is harmless.
pub async fn arrival(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    Json(body): Json<ArrivalRequest>,
) -> Result<Response> {
    let id = conversation_id(&id)?;
    let dir = conversation_dir(&state, &id)?;
    let mark = arriving(&dir);
    if body.accept {
        if !dir.is_dir() {
            return Err(ApiError::NotFound);
        }
        if mark.is_some() {
            std::fs::remove_file(dir.join(ARRIVING_FILE))
                .map_err(|e| ApiError::Internal(format!("cannot end the move: {e}")))?;
            let _ = tandem_fs::sync_dir(&dir);
            tracing::info!(conversation = %id, "the conversation arrived: it runs here now");
        }
        let info = state.registry.info(&id).await.ok_or(ApiError::NotFound)?;
        return Ok(Json(info).into_response());
    }
    let Some(mark) = mark else {
        if dir.is_dir() {
            return Err(ApiError::Conflict(
                "the conversation is not arriving: it runs here already, and is not deleted".into(),
            ));
        }
        return Ok(axum::http::StatusCode::NO_CONTENT.into_response());
    };
    state.registry.delete(&id).await?;
    if mark["made_working_dir"].as_bool() == Some(true)
        && let Some(folder) = mark["working_dir"].as_str()
    {
        let _ = tokio::fs::remove_dir_all(folder).await;
    }
    tracing::info!(conversation = %id, "the move toward this server was abandoned: its copy is deleted");
    Ok(axum::http::StatusCode::NO_CONTENT.into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_mcp_servers_credentials_stay_behind() {
        let state = serde_json::json!({
            "id": "x",
            "agent": {"mcp_config": {"mcpServers": {"gh": {"command": "gh-mcp", "env": {"TOKEN": "sk-mcp-canary"}, "headers": {"Authorization": "Bearer sk-mcp-canary"}}}}}
        });
        let (bytes, fields) = redact_state(serde_json::to_vec(&state).unwrap_or_default());
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("sk-mcp-canary"), "{text}");
        assert!(text.contains("gh-mcp"), "{text}");
        assert_eq!(fields, vec!["/agent/mcp_config".to_owned()]);
        let (bytes, fields) = redact_state(br#"{"id":"x","agent":{}}"#.to_vec());
        assert_eq!(bytes, br#"{"agent":{},"id":"x"}"#.to_vec());
        assert!(fields.is_empty());
    }

    #[test]
    fn a_folder_is_named_after_the_title() {
        let id = "0123abcd-0000-0000-0000-000000000000";
        assert_eq!(
            folder_name(Some("Fix the CSV loader!"), id),
            "fix-the-csv-loader-0123abcd"
        );
        assert_eq!(folder_name(None, id), "conversation-0123abcd");
        assert_eq!(folder_name(Some("../.."), id), "conversation-0123abcd");
    }
}
