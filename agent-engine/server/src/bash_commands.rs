//! Bash commands outside the agent (upstream's `/api/bash`): start one (answers at once),
//! execute one (waits), search and fetch their events, stop one. Each command runs in its own
//! process group with a timeout; its `BashCommand` and final `BashOutput` are kept in memory,
//! written to the events directory (upstream's file names) and broadcast to
//! `/sockets/bash-events`. The server has one service; each conversation has its own.

use std::collections::HashMap;
use std::path::{Component, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use tandem_protocol::{
    BashCommand, BashEvent, BashEventPage, BashOutput, ExecuteBashRequest, SuccessResponse,
};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use crate::AppState;
use crate::error::{ApiError, Result};
use crate::extract::{ApiJson, QueryMap, conversation_id};
use crate::workspace::PathArg;

/// Default command timeout, seconds.
const DEFAULT_TIMEOUT: u64 = 300;
/// Events kept in memory.
const MAX_EVENTS: usize = 10_000;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn now() -> (String, String) {
    let t = chrono::Utc::now();
    (
        t.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
        t.format("%Y%m%d%H%M%S%6f").to_string(),
    )
}

/// Runs and records bash commands.
#[derive(Debug)]
pub struct BashService {
    dir: PathBuf,
    default_cwd: PathBuf,
    events: Mutex<Vec<BashEvent>>,
    running: Mutex<HashMap<String, CancellationToken>>,
    tx: broadcast::Sender<BashEvent>,
}

impl BashService {
    /// A service writing events to `dir`, running commands in `default_cwd` unless told.
    pub fn new(dir: PathBuf, default_cwd: PathBuf) -> Self {
        let (tx, _) = broadcast::channel(1024);
        Self {
            dir,
            default_cwd,
            events: Mutex::default(),
            running: Mutex::default(),
            tx,
        }
    }

    /// A receiver of every later event.
    pub fn subscribe(&self) -> broadcast::Receiver<BashEvent> {
        self.tx.subscribe()
    }

    fn record(&self, event: BashEvent, file_stamp: &str) {
        {
            let mut events = lock(&self.events);
            events.push(event.clone());
            if events.len() > MAX_EVENTS {
                let extra = events.len() - MAX_EVENTS;
                events.drain(..extra);
            }
        }
        let name = match &event {
            BashEvent::BashCommand(c) => format!("{file_stamp}_BashCommand_{}", c.id),
            BashEvent::BashOutput(o) => {
                format!("{file_stamp}_BashOutput_{}_{}", o.command_id, o.id)
            }
        };
        let path = self.dir.join(name);
        let dir = self.dir.clone();
        if let Ok(bytes) = serde_json::to_vec(&event) {
            tokio::spawn(async move {
                let _ = tokio::fs::create_dir_all(&dir).await;
                if let Err(e) = tokio::fs::write(&path, bytes).await {
                    tracing::debug!("bash event {}: {e}", path.display());
                }
            });
        }
        let _ = self.tx.send(event);
    }

    /// Starts `req`; returns its `BashCommand` at once.
    pub fn start(self: &Arc<Self>, req: ExecuteBashRequest) -> BashCommand {
        let (ts, stamp) = now();
        let cmd = BashCommand {
            command: req.command.clone(),
            cwd: req.cwd.clone(),
            timeout: req.timeout.unwrap_or(DEFAULT_TIMEOUT),
            id: uuid::Uuid::new_v4().simple().to_string(),
            timestamp: ts,
        };
        self.record(BashEvent::BashCommand(cmd.clone()), &stamp);
        let cancel = CancellationToken::new();
        lock(&self.running).insert(cmd.id.clone(), cancel.clone());
        let this = Arc::clone(self);
        let c = cmd.clone();
        tokio::spawn(async move {
            let output = this.run(&c, cancel).await;
            lock(&this.running).remove(&c.id);
            let (_, stamp) = now();
            this.record(BashEvent::BashOutput(output), &stamp);
        });
        cmd
    }

    /// Runs `req` to its end and returns its output.
    pub async fn execute(self: &Arc<Self>, req: ExecuteBashRequest) -> BashOutput {
        let mut rx = self.subscribe();
        let cmd = self.start(req);
        loop {
            match rx.recv().await {
                Ok(BashEvent::BashOutput(o)) if o.command_id == cmd.id && o.exit_code.is_some() => {
                    return o;
                }
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    if let Some(BashEvent::BashOutput(o)) = self.find_output(&cmd.id) {
                        return o;
                    }
                }
                Err(broadcast::error::RecvError::Closed) => break,
            }
        }
        self.find_output(&cmd.id)
            .and_then(|e| match e {
                BashEvent::BashOutput(o) => Some(o),
                BashEvent::BashCommand(_) => None,
            })
            .unwrap_or_else(|| {
                output_of(
                    &cmd.id,
                    -1,
                    None,
                    Some("the command's output was lost".into()),
                )
            })
    }

    fn find_output(&self, command_id: &str) -> Option<BashEvent> {
        lock(&self.events)
            .iter()
            .find(|e| matches!(e, BashEvent::BashOutput(o) if o.command_id == command_id && o.exit_code.is_some()))
            .cloned()
    }

    async fn run(&self, cmd: &BashCommand, cancel: CancellationToken) -> BashOutput {
        // A given `cwd` was checked when the command was asked for (see `resolve_cwd`); the
        // default one is the workspace, made if it is not there yet.
        let cwd = match cmd.cwd.as_deref() {
            Some(c) => PathBuf::from(c),
            None => {
                let _ = tokio::fs::create_dir_all(&self.default_cwd).await;
                self.default_cwd.clone()
            }
        };
        let mut command = tokio::process::Command::new("bash");
        command
            .arg("-c")
            .arg(&cmd.command)
            .current_dir(&cwd)
            // Never the server's environment (its credentials): the agent's allowlist.
            .env_clear()
            .envs(tandem_sdk::agent_env::agent_env())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // In a sandbox: as the agent's user, not the server's (with the same scrubbed
        // environment, its HOME the agent's).
        if let Some(user) = tandem_process::agent_user::agent_user() {
            user.apply(&mut command);
        }
        // Its own process group, a parent-death signal and Tandem's owner marker.
        let spawned = tandem_process::spawn_tokio(
            command,
            tandem_process::Isolation::Group,
            nix::sys::signal::Signal::SIGKILL,
        )
        .await;
        let child = match spawned {
            Ok(c) => c,
            Err(e) => {
                return output_of(
                    &cmd.id,
                    -1,
                    None,
                    Some(format!("cannot start bash in {}: {e}", cwd.display())),
                );
            }
        };
        let pid = child.id();
        let timeout = Duration::from_secs(cmd.timeout.max(1));
        tokio::select! {
            out = child.wait_with_output() => match out {
                Ok(out) => {
                    let text = |b: Vec<u8>| {
                        let s = String::from_utf8_lossy(&b).into_owned();
                        (!s.is_empty()).then_some(s)
                    };
                    output_of(&cmd.id, out.status.code().unwrap_or(-1), text(out.stdout), text(out.stderr))
                }
                Err(e) => output_of(&cmd.id, -1, None, Some(e.to_string())),
            },
            () = tokio::time::sleep(timeout) => {
                stop_group(pid).await;
                output_of(&cmd.id, -1, None, Some(format!("Command timed out after {} seconds", cmd.timeout)))
            }
            () = cancel.cancelled() => {
                stop_group(pid).await;
                output_of(&cmd.id, -1, None, Some("Command stopped".into()))
            }
        }
    }

    /// The folder a command asked for with `cwd` runs in: an absolute `cwd` as given, a
    /// relative one inside the workspace root (without `..`), none the workspace root. A given
    /// one must be an existing folder: nothing is created outside the workspace, and a bad
    /// `cwd` is a 422 naming it instead of a command that fails later.
    pub async fn resolve_cwd(&self, cwd: Option<&str>) -> Result<Option<PathBuf>> {
        let Some(raw) = cwd else {
            return Ok(None);
        };
        let arg = PathArg::new(raw, &["body", "cwd"]);
        let p = arg.checked()?;
        let path = if p.is_absolute() {
            p.to_path_buf()
        } else {
            if p.components().any(|c| matches!(c, Component::ParentDir)) {
                return Err(arg.invalid(
                    "a relative cwd is inside the workspace and cannot contain `..`; give an absolute path",
                ));
            }
            self.default_cwd.join(p)
        };
        match tokio::fs::metadata(&path).await {
            Ok(meta) if meta.is_dir() => Ok(Some(path)),
            Ok(_) => Err(arg.invalid(format!("`{raw}` is a file, not a folder"))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(arg.invalid(format!(
                "the folder {} does not exist{}",
                path.display(),
                if p.is_absolute() {
                    ""
                } else {
                    " (a relative cwd is relative to the workspace root)"
                }
            ))),
            Err(e) => Err(arg.io_error("reading", &e)),
        }
    }

    /// Stops a running command; false when it is not running.
    pub fn stop(&self, command_id: &str) -> bool {
        let hex: String = command_id.chars().filter(|c| *c != '-').collect();
        match lock(&self.running).get(&hex) {
            Some(c) => {
                c.cancel();
                true
            }
            None => false,
        }
    }

    /// One event by id.
    pub fn get(&self, id: &str) -> Option<BashEvent> {
        let hex: String = id.chars().filter(|c| *c != '-').collect();
        lock(&self.events).iter().find(|e| e.id() == hex).cloned()
    }

    /// Forgets every event.
    pub fn clear(&self) {
        lock(&self.events).clear();
    }

    /// Events filtered by `kind__eq` / `command_id__eq`, ordered, paged.
    pub fn search(&self, q: &QueryMap) -> Result<BashEventPage> {
        let kind = q.get("kind__eq").map(str::to_owned);
        let command: Option<String> = q
            .get("command_id__eq")
            .map(|c| c.chars().filter(|c| *c != '-').collect());
        let desc = q.choice("sort_order", "TIMESTAMP", &["TIMESTAMP", "TIMESTAMP_DESC"])?
            == "TIMESTAMP_DESC";
        let limit = usize::try_from(q.int("limit", 100, 1, 100)?).unwrap_or(100);
        let mut items: Vec<BashEvent> = lock(&self.events)
            .iter()
            .filter(|e| kind.as_deref().is_none_or(|k| e.kind() == k))
            .filter(|e| command.as_deref().is_none_or(|c| e.command_id() == c))
            .cloned()
            .collect();
        if desc {
            items.reverse();
        }
        let (items, next_page_id) =
            crate::extract::page(items, q.get("page_id"), limit, |e| e.id());
        Ok(BashEventPage {
            items,
            next_page_id,
        })
    }
}

fn output_of(
    command_id: &str,
    code: i32,
    stdout: Option<String>,
    stderr: Option<String>,
) -> BashOutput {
    // Second line: a credential the server knows is hidden should it reach an output.
    let masker = tandem_sdk::known_credentials().masker();
    BashOutput {
        id: uuid::Uuid::new_v4().simple().to_string(),
        timestamp: now().0,
        command_id: command_id.to_owned(),
        order: 0,
        exit_code: Some(code),
        stdout: stdout.map(|s| masker.mask(&s)),
        stderr: stderr.map(|s| masker.mask(&s)),
    }
}

/// Stops the command's process group: `bash` and everything it started (each command runs
/// in a group of its own, led by `bash`): SIGTERM, then SIGKILL after a grace.
async fn stop_group(pid: Option<u32>) {
    if let Some(pid) = pid.and_then(|p| i32::try_from(p).ok()) {
        // Already gone is fine: the command ended on its own.
        tandem_process::stop_group(pid, tandem_process::DEFAULT_GRACE).await;
    }
}

async fn service(state: &AppState, cid: Option<&str>) -> Result<Arc<BashService>> {
    match cid {
        None => Ok(Arc::clone(&state.bash)),
        Some(raw) => {
            let id = conversation_id(raw)?;
            Ok(Arc::clone(&state.registry.get(&id).await?.bash))
        }
    }
}

fn check(req: &ExecuteBashRequest) -> Result<()> {
    if req.command.trim().is_empty() {
        return Err(ApiError::field(
            &["body", "command"],
            "value_error",
            "the command is empty",
            serde_json::Value::from(req.command.as_str()),
        ));
    }
    Ok(())
}

/// The service of `cid` (the server's without) and `req` with its `cwd` resolved by it.
async fn prepare(
    state: &AppState,
    cid: Option<&str>,
    mut req: ExecuteBashRequest,
) -> Result<(Arc<BashService>, ExecuteBashRequest)> {
    check(&req)?;
    let svc = service(state, cid).await?;
    if let Some(cwd) = svc.resolve_cwd(req.cwd.as_deref()).await? {
        req.cwd = Some(cwd.to_string_lossy().into_owned());
    }
    Ok((svc, req))
}

/// `POST /api/bash/start_bash_command`.
pub async fn start(
    State(s): State<AppState>,
    ApiJson(req): ApiJson<ExecuteBashRequest>,
) -> Result<Json<BashEvent>> {
    let (svc, req) = prepare(&s, None, req).await?;
    Ok(Json(BashEvent::BashCommand(svc.start(req))))
}

/// `POST /api/bash/execute_bash_command`.
pub async fn execute(
    State(s): State<AppState>,
    ApiJson(req): ApiJson<ExecuteBashRequest>,
) -> Result<Json<BashEvent>> {
    let (svc, req) = prepare(&s, None, req).await?;
    Ok(Json(BashEvent::BashOutput(svc.execute(req).await)))
}
/// `GET /api/bash/bash_events/search`.
pub async fn search(State(s): State<AppState>, q: QueryMap) -> Result<Json<BashEventPage>> {
    Ok(Json(service(&s, None).await?.search(&q)?))
}

/// `GET /api/bash/bash_events/{id}`.
pub async fn get_event(
    State(s): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<BashEvent>> {
    service(&s, None)
        .await?
        .get(&id)
        .map(Json)
        .ok_or(ApiError::NotFound)
}

/// `GET /api/bash/bash_events/?ids=`.
pub async fn batch(State(s): State<AppState>, q: QueryMap) -> Result<Json<Vec<Option<BashEvent>>>> {
    let svc = service(&s, None).await?;
    Ok(Json(q.all("ids").iter().map(|id| svc.get(id)).collect()))
}

/// `DELETE /api/bash/bash_events`.
pub async fn clear(State(s): State<AppState>) -> Result<Json<SuccessResponse>> {
    service(&s, None).await?.clear();
    Ok(Json(SuccessResponse::OK))
}

/// `POST /api/bash/bash_commands/{command_id}/stop`.
pub async fn stop(
    State(s): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<SuccessResponse>> {
    if service(&s, None).await?.stop(&id) {
        Ok(Json(SuccessResponse::OK))
    } else {
        Err(ApiError::NotFound)
    }
}

/// Per-conversation `POST .../bash/start_bash_command`.
pub async fn conv_start(
    State(s): State<AppState>,
    UrlPath(cid): UrlPath<String>,
    ApiJson(req): ApiJson<ExecuteBashRequest>,
) -> Result<Json<BashEvent>> {
    let (svc, req) = prepare(&s, Some(&cid), req).await?;
    Ok(Json(BashEvent::BashCommand(svc.start(req))))
}

/// Per-conversation `POST .../bash/execute_bash_command`.
pub async fn conv_execute(
    State(s): State<AppState>,
    UrlPath(cid): UrlPath<String>,
    ApiJson(req): ApiJson<ExecuteBashRequest>,
) -> Result<Json<BashEvent>> {
    let (svc, req) = prepare(&s, Some(&cid), req).await?;
    Ok(Json(BashEvent::BashOutput(svc.execute(req).await)))
}

/// Per-conversation `GET .../bash/bash_events/search`.
pub async fn conv_search(
    State(s): State<AppState>,
    UrlPath(cid): UrlPath<String>,
    q: QueryMap,
) -> Result<Json<BashEventPage>> {
    Ok(Json(service(&s, Some(&cid)).await?.search(&q)?))
}

/// Per-conversation `GET .../bash/bash_events/{id}`.
pub async fn conv_get_event(
    State(s): State<AppState>,
    UrlPath((cid, id)): UrlPath<(String, String)>,
) -> Result<Json<BashEvent>> {
    service(&s, Some(&cid))
        .await?
        .get(&id)
        .map(Json)
        .ok_or(ApiError::NotFound)
}

/// Per-conversation `POST .../bash/bash_commands/{command_id}/stop`.
pub async fn conv_stop(
    State(s): State<AppState>,
    UrlPath((cid, id)): UrlPath<(String, String)>,
) -> Result<Json<SuccessResponse>> {
    if service(&s, Some(&cid)).await?.stop(&id) {
        Ok(Json(SuccessResponse::OK))
    } else {
        Err(ApiError::NotFound)
    }
}
