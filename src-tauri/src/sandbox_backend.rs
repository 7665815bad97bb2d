//! The Docker sandbox backend: the person picks a workspace folder, the desktop starts the
//! sandbox image on it through `tandem-sandbox` (building the image first when it is missing)
//! and the UI then talks to the server inside like to any remote backend: its URL, and its
//! session key kept in the keyring under [`KEY_ACCOUNT`].
//!
//! One sandbox at a time, started, watched and removed by `tandem-sandbox`'s [`Supervisor`]
//! (the lifecycle the CLI uses too); this file only adapts it to the app. Every step is
//! published as a [`SandboxStatus`] (a Tauri event and the answer of the commands), with a
//! sequence number so the UI can drop an answer older than an event it already has. The
//! sandbox is removed when the person switches away from it, starts another, or quits
//! ([`SandboxBackend::shutdown`]); one left by a crash carries this process as its owner and is
//! removed by the next start. A container that dies or is removed shows as failed with the
//! reason (Docker tells when it stops) instead of as connected.

mod setup;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use tandem_sandbox::{
    BuildOptions, CancellationToken, ConnectOptions, Progress, ProvisionerSource, Running,
    SandboxError, SandboxSpec, Supervisor, conversations_dir,
};
use tokio::task::JoinHandle;

pub use setup::{BinarySearch, find_tandem_binary, sandbox_env};

use crate::keystore::{DEFAULT_SERVICE, KeyStore};

/// The keyring account (service [`DEFAULT_SERVICE`]) of the running sandbox's session key, the
/// way remote backends keep theirs (`backend:<id>`).
pub const KEY_ACCOUNT: &str = "backend:sandbox";

/// How long removing a sandbox may take before the app gives up on it (quitting must not hang;
/// the next start removes what is left).
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a keyring call may take.
const KEYRING_TIMEOUT: Duration = Duration::from_secs(10);

/// The origins the webview calls the sandbox's server from: its own on each platform, and in
/// dev builds the Vite dev server's (`tauri.conf.json`'s `devUrl`). The server inside allows
/// exactly these (`TANDEM_ALLOWED_ORIGINS`); its sockets authenticate by their first frame.
pub fn webview_origins() -> Vec<&'static str> {
    let mut origins = crate::local_backend::WEBVIEW_ORIGINS.to_vec();
    if !cfg!(feature = "custom-protocol") {
        origins.extend(["http://localhost:5173", "http://127.0.0.1:5173"]);
    }
    origins
}

/// Which part of a start is under way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum StartStep {
    /// Reaching the Docker daemon.
    Connecting,
    /// Creating and starting the container.
    Creating,
    /// Started; waiting for its server to answer.
    WaitingForHealth,
}

/// Why a sandbox failed, for the UI to tell causes apart without reading the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename_all = "snake_case")]
pub enum FailureCode {
    /// The folder cannot be used.
    Workspace,
    /// No Docker daemon answers.
    NoDocker,
    /// The Docker socket refuses this user.
    Permission,
    /// The image is missing and there is no `tandem` binary to build it with.
    NoBinary,
    /// Building the image failed.
    Build,
    /// The disk is full.
    DiskFull,
    /// The port asked for is taken.
    PortTaken,
    /// The container stopped or was removed.
    Died,
    /// Its server did not answer in time.
    Unhealthy,
    /// The session key could not be kept.
    Keyring,
    /// Anything else Docker said.
    Docker,
}

impl FailureCode {
    fn of(e: &SandboxError) -> Self {
        match e {
            SandboxError::NoDaemon { .. } => Self::NoDocker,
            SandboxError::Permission { .. } => Self::Permission,
            SandboxError::ImageMissing { .. } | SandboxError::Base(_) | SandboxError::Build(_) => {
                Self::Build
            }
            SandboxError::PortTaken { .. } => Self::PortTaken,
            SandboxError::Invalid(_) => Self::Workspace,
            SandboxError::Died { .. } | SandboxError::NotFound(_) => Self::Died,
            SandboxError::Unhealthy { .. } => Self::Unhealthy,
            SandboxError::DiskFull(_) => Self::DiskFull,
            _ => Self::Docker,
        }
    }
}

/// Where the sandbox backend is. `workspace` is always the host folder the person picked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum SandboxState {
    /// No sandbox runs: none was started, or it was stopped.
    Stopped {
        /// The folder of the last sandbox, to start again.
        workspace: Option<String>,
    },
    /// The image is being built (it was missing).
    Building {
        /// The folder.
        workspace: String,
        /// The build's latest line.
        line: Option<String>,
    },
    /// The sandbox is starting.
    Starting {
        /// The folder.
        workspace: String,
        /// What it is doing.
        step: StartStep,
    },
    /// The server inside answers: connect to `base_url` with the key in the keyring.
    #[serde(rename_all = "camelCase")]
    Connected {
        /// The folder.
        workspace: String,
        /// The server's root URL (loopback).
        base_url: String,
        /// The keyring account holding its session key (service `tandem`).
        key_account: String,
        /// Where the folder appears inside the sandbox (`/workspace`).
        workspace_inside: String,
        /// The container's id.
        id: String,
        /// The server's default model (the desktop's LLM), none when the desktop has none.
        model: Option<String>,
    },
    /// Starting or running failed; nothing is left running.
    Failed {
        /// The folder.
        workspace: String,
        /// What went wrong and how to fix it.
        reason: String,
        /// The kind of failure.
        code: FailureCode,
    },
}

impl SandboxState {
    /// The folder the state is about.
    pub fn workspace(&self) -> Option<&str> {
        match self {
            Self::Stopped { workspace } => workspace.as_deref(),
            Self::Building { workspace, .. }
            | Self::Starting { workspace, .. }
            | Self::Connected { workspace, .. }
            | Self::Failed { workspace, .. } => Some(workspace),
        }
    }
}

/// A state with its place in the sequence of states (the event the UI listens to).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type, tauri_specta::Event)]
pub struct SandboxStatus {
    /// Grows with every change: a status with a lower number is older.
    pub seq: u32,
    /// The state.
    pub state: SandboxState,
}

/// What sandboxes are started with.
#[derive(Clone)]
pub struct SandboxConfig {
    /// The image (default `tandem-sandbox:latest`).
    pub image: String,
    /// The server's environment ([`sandbox_env`]); secrets, never logged.
    pub env: Vec<(String, String)>,
    /// The model the server gets by default, for the UI.
    pub model: Option<String>,
    /// Extra arguments of the server inside: `--llm demo` when the desktop has no LLM, so the
    /// sandbox runs the scripted demo model as the local backend does.
    pub server_args: Vec<String>,
    /// Where the `tandem` binary for a build is looked for.
    pub binary: BinarySearch,
    /// How long the server may take to answer; none: the provisioner's default.
    pub health_timeout: Option<Duration>,
    /// `$TANDEM_HOME`, under which each workspace's sandbox conversations live
    /// (`sandboxes/<folder>-<hash>/conversations`), so a removed or crashed sandbox loses none
    /// and the next one on that folder resumes them; none: they live and die with the
    /// container.
    pub conversations_home: Option<PathBuf>,
    /// Run the agent as root inside the sandbox when the folder is owned by root (else such a
    /// folder is refused with the choices): the agent can then read the server's keys.
    pub allow_root: bool,
    /// What starts the sandboxes: Docker by default; any [`tandem_sandbox::Provisioner`] plugs
    /// in here with no other change (the tests give the in-memory fake).
    pub provisioner: ProvisionerSource,
}

impl std::fmt::Debug for SandboxConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Names only: the values are API keys.
        let names: Vec<&str> = self.env.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("SandboxConfig")
            .field("image", &self.image)
            .field("env", &names)
            .field("model", &self.model)
            .field("server_args", &self.server_args)
            .field("binary", &self.binary)
            .field("health_timeout", &self.health_timeout)
            .field("conversations_home", &self.conversations_home)
            .field("allow_root", &self.allow_root)
            .field("provisioner", &self.provisioner)
            .finish()
    }
}

impl SandboxConfig {
    /// The default image with `env`, looking for the binary in this process's environment.
    pub fn new(env: Vec<(String, String)>, model: Option<String>) -> Self {
        let (model, server_args) = match model {
            Some(m) => (Some(m), Vec::new()),
            None => (
                Some("demo".to_owned()),
                vec!["--llm".to_owned(), "demo".to_owned()],
            ),
        };
        Self {
            image: tandem_sandbox::IMAGE.to_owned(),
            env,
            model,
            server_args,
            binary: BinarySearch::from_env(),
            health_timeout: None,
            conversations_home: tandem_host::settings::tandem_home().ok(),
            allow_root: false,
            provisioner: ProvisionerSource::default(),
        }
    }
}

type Notify = dyn Fn(&SandboxStatus) + Send + Sync;

/// The sandbox backend of the desktop: one sandbox at a time through the workspace crate's
/// [`Supervisor`], its states published to the UI and its key kept in the keyring.
pub struct SandboxBackend {
    shared: Arc<Shared>,
    /// One start, stop or shutdown at a time; the job of the current sandbox.
    job: tokio::sync::Mutex<Option<Job>>,
}

impl std::fmt::Debug for SandboxBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxBackend")
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

/// A sandbox's task, from its start to its removal, and what ends it.
struct Job {
    cancel: CancellationToken,
    task: JoinHandle<()>,
}

struct Shared {
    /// Never held while `notify` runs: a listener may ask for the status.
    status: Mutex<SandboxStatus>,
    notify: Box<Notify>,
    keys: Arc<KeyStore>,
    config: SandboxConfig,
}

impl SandboxBackend {
    /// A backend with nothing running; `notify` hears every new status (the app emits it as an
    /// event).
    pub fn new(
        keys: Arc<KeyStore>,
        config: SandboxConfig,
        notify: impl Fn(&SandboxStatus) + Send + Sync + 'static,
    ) -> Self {
        Self {
            shared: Arc::new(Shared {
                status: Mutex::new(SandboxStatus {
                    seq: 0,
                    state: SandboxState::Stopped { workspace: None },
                }),
                notify: Box::new(notify),
                keys,
                config,
            }),
            job: tokio::sync::Mutex::new(None),
        }
    }

    /// The current status.
    pub fn status(&self) -> SandboxStatus {
        self.shared.status()
    }

    /// Starts a sandbox on `workspace`, first removing the one running; answers at once with
    /// the first step, the rest arrives through `notify`. Must run inside a Tokio runtime.
    pub async fn start(&self, workspace: String) -> SandboxStatus {
        let mut job = self.job.lock().await;
        halt(&mut job).await;
        let first = self.shared.set(SandboxState::Starting {
            workspace: workspace.clone(),
            step: StartStep::Connecting,
        });
        let cancel = CancellationToken::new();
        let shared = Arc::clone(&self.shared);
        let token = cancel.clone();
        let task = tokio::spawn(async move { shared.run(workspace, token).await });
        *job = Some(Job { cancel, task });
        first
    }

    /// Stops and removes the sandbox (or cancels its start), forgets its key, and answers
    /// `stopped`.
    pub async fn stop(&self) -> SandboxStatus {
        let mut job = self.job.lock().await;
        halt(&mut job).await;
        let workspace = self.status().state.workspace().map(str::to_owned);
        self.shared.set(SandboxState::Stopped { workspace })
    }

    /// [`stop`](Self::stop) bounded by `limit`, for quitting: what is not removed by then is
    /// removed by the next start (it carries this process as its owner).
    pub async fn shutdown(&self, limit: Duration) {
        if tokio::time::timeout(limit, self.stop()).await.is_err() {
            tracing::warn!(
                "the sandbox was not removed within {} s; the next start removes it",
                limit.as_secs()
            );
        }
    }
}

/// Ends the current job: its start stops at the next step, or its sandbox is removed and its
/// key forgotten; answers once it has (so nothing it does comes after what the caller does).
async fn halt(job: &mut Option<Job>) {
    if let Some(job) = job.take() {
        job.cancel.cancel();
        let _ = job.task.await;
    }
}

/// The state a step of a start or build leads to (`Ready` leads nowhere yet: the key must be
/// kept first).
fn state_of(workspace: &str, p: Progress) -> Option<SandboxState> {
    let workspace = workspace.to_owned();
    match p {
        Progress::Building(line) => Some(SandboxState::Building {
            workspace,
            line: Some(line),
        }),
        Progress::Starting => Some(SandboxState::Starting {
            workspace,
            step: StartStep::Creating,
        }),
        Progress::WaitingForHealth => Some(SandboxState::Starting {
            workspace,
            step: StartStep::WaitingForHealth,
        }),
        Progress::Ready => None,
    }
}

/// A failure: its reason and code.
struct Failure {
    code: FailureCode,
    reason: String,
}

impl From<SandboxError> for Failure {
    fn from(e: SandboxError) -> Self {
        Self {
            code: FailureCode::of(&e),
            reason: e.to_string(),
        }
    }
}

impl Shared {
    fn status(&self) -> SandboxStatus {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Publishes `state`. One party publishes at a time (the start, stop or shutdown under
    /// way, or the job it waits for), so listeners hear the states in order with no lock held
    /// while they are told.
    fn set(&self, state: SandboxState) -> SandboxStatus {
        let status = {
            let mut s = self.status.lock().unwrap_or_else(|e| e.into_inner());
            s.seq = s.seq.wrapping_add(1);
            s.state = state;
            s.clone()
        };
        (self.notify)(&status);
        status
    }

    /// A sandbox from its start to `failed` or to its removal when `cancel` fires. Cancelled,
    /// it publishes nothing more: the one who cancelled says what comes next.
    async fn run(self: Arc<Self>, workspace: String, cancel: CancellationToken) {
        let failed = |f: Failure| {
            if !cancel.is_cancelled() {
                self.set(SandboxState::Failed {
                    workspace: workspace.clone(),
                    reason: f.reason,
                    code: f.code,
                });
            }
        };
        let running = match self.launch(&workspace, &cancel).await {
            Ok(r) => r,
            Err(f) => return failed(f),
        };
        let sandbox = running.sandbox().clone();
        // Not cut short by a cancel (it is bounded): a key written after it was forgotten
        // would stay in the keyring.
        if let Err(f) = self.keep_key(&sandbox.session_key).await {
            remove(running).await;
            self.forget_key().await;
            return failed(f);
        }
        if !cancel.is_cancelled() {
            self.set(SandboxState::Connected {
                workspace: workspace.clone(),
                base_url: sandbox.url.clone(),
                key_account: KEY_ACCOUNT.to_owned(),
                workspace_inside: sandbox.workspace.clone(),
                id: sandbox.id.clone(),
                model: self.config.model.clone(),
            });
        }
        // Docker tells when it stops; nothing is polled.
        let died = tokio::select! {
            exit = running.exited() => Some(exit),
            () = cancel.cancelled() => None,
        };
        let failure = match died {
            Some(exit) => {
                let logs = running.logs(20).await.unwrap_or_default();
                Some(Failure {
                    code: FailureCode::Died,
                    reason: format!(
                        "the sandbox stopped: {}\n--- its last output ---\n{logs}",
                        exit.reason
                    ),
                })
            }
            None => None,
        };
        remove(running).await;
        self.forget_key().await;
        if let Some(f) = failure {
            failed(f);
        }
    }

    /// Connects to the provisioner (Docker) and starts the sandbox (building its image first
    /// when missing).
    async fn launch(
        &self,
        workspace: &str,
        cancel: &CancellationToken,
    ) -> Result<Running, Failure> {
        let dir = PathBuf::from(workspace);
        if !dir.is_dir() {
            return Err(Failure {
                code: FailureCode::Workspace,
                reason: format!(
                    "the workspace {workspace} is not a folder: choose an existing folder"
                ),
            });
        }
        let options = ConnectOptions {
            health_timeout: self.config.health_timeout,
        };
        let provisioner = tokio::select! {
            r = self.config.provisioner.get(&options) => r?,
            () = cancel.cancelled() => return Err(SandboxError::Cancelled.into()),
        };
        let sandboxes = Supervisor::new(provisioner);
        // What an earlier sandbox of this app left (a removal that timed out).
        sandboxes.sweep(true).await;
        let mut spec = SandboxSpec::new(&dir);
        spec.image = self.config.image.clone();
        spec.env = self.config.env.clone();
        spec.server_args = self.config.server_args.clone();
        spec.allow_root = self.config.allow_root;
        spec.conversations = self.config.conversations_home.as_ref().map(|home| {
            conversations_dir(home, &dir.canonicalize().unwrap_or_else(|_| dir.clone()))
        });
        let progress = |p: Progress| {
            if let Some(state) = state_of(workspace, p)
                && !cancel.is_cancelled()
            {
                self.set(state);
            }
        };
        match sandboxes.start(&spec, &progress, cancel).await {
            Err(SandboxError::ImageMissing { image }) => {
                let binary = find_tandem_binary(&self.config.binary).map_err(|e| Failure {
                    code: FailureCode::NoBinary,
                    reason: e.to_string(),
                })?;
                progress(Progress::Building(format!(
                    "{image} is missing: building it with {}",
                    binary.display()
                )));
                let mut opts = BuildOptions::new(binary);
                opts.tag = image;
                tokio::select! {
                    r = sandboxes.build_image(&opts, &progress) => r?,
                    () = cancel.cancelled() => return Err(SandboxError::Cancelled.into()),
                };
                Ok(sandboxes.start(&spec, &progress, cancel).await?)
            }
            other => Ok(other?),
        }
    }

    async fn keyring<T: Send + 'static>(
        &self,
        f: impl FnOnce(&KeyStore) -> crate::Result<T> + Send + 'static,
    ) -> Result<T, KeyringCallError> {
        let keys = Arc::clone(&self.keys);
        let job = tokio::task::spawn_blocking(move || f(&keys));
        match tokio::time::timeout(KEYRING_TIMEOUT, job).await {
            Ok(Ok(r)) => r.map_err(KeyringCallError::Failed),
            Ok(Err(e)) => Err(KeyringCallError::Panicked(e)),
            Err(_) => Err(KeyringCallError::Timeout),
        }
    }

    async fn keep_key(&self, key: &str) -> Result<(), Failure> {
        let key = key.to_owned();
        self.keyring(move |k| k.set(DEFAULT_SERVICE, KEY_ACCOUNT, &key))
            .await
            .map_err(|e| Failure {
                code: FailureCode::Keyring,
                reason: format!(
                    "cannot keep the sandbox's session key ({e}); the sandbox was removed. Unlock the keyring and start it again"
                ),
            })
    }

    async fn forget_key(&self) {
        if let Err(e) = self
            .keyring(|k| k.delete(DEFAULT_SERVICE, KEY_ACCOUNT))
            .await
        {
            tracing::warn!("cannot forget the sandbox's session key: {e}");
        }
    }
}

/// Why a keyring call of the sandbox backend did not complete.
#[derive(Debug, thiserror::Error)]
enum KeyringCallError {
    /// The keyring refused.
    #[error("{0}")]
    Failed(crate::Error),
    /// The call's thread died.
    #[error("keyring call failed: {0}")]
    Panicked(tokio::task::JoinError),
    /// No answer within [`KEYRING_TIMEOUT`] (a locked keyring waiting on a prompt).
    #[error("the keyring did not answer within {} s", KEYRING_TIMEOUT.as_secs())]
    Timeout,
}

/// Removes a sandbox within [`STOP_TIMEOUT`] (quitting must not hang; what is left carries this
/// process as its owner and goes at the next start).
async fn remove(running: Running) {
    let id = running.sandbox().id.clone();
    match tokio::time::timeout(STOP_TIMEOUT, running.stop()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!("cannot remove the sandbox {id}: {e}"),
        Err(_) => tracing::warn!(
            "removing the sandbox {id} took over {} s; the next start removes it",
            STOP_TIMEOUT.as_secs()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn backend(dir: &std::path::Path) -> (SandboxBackend, Arc<Mutex<Vec<SandboxStatus>>>) {
        let heard = Arc::new(Mutex::new(Vec::new()));
        let h = Arc::clone(&heard);
        let b = SandboxBackend::new(
            Arc::new(KeyStore::file(dir, "test")),
            SandboxConfig::new(Vec::new(), None),
            move |s| h.lock().unwrap().push(s.clone()),
        );
        (b, heard)
    }

    async fn settled(b: &SandboxBackend) -> SandboxStatus {
        for _ in 0..500 {
            let s = b.status();
            if !matches!(
                s.state,
                SandboxState::Starting { .. } | SandboxState::Building { .. }
            ) {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the sandbox never settled: {:?}", b.status());
    }

    #[test]
    fn progress_steps_become_states() {
        assert_eq!(
            state_of("/w", Progress::Building("Step 1/9".into())),
            Some(SandboxState::Building {
                workspace: "/w".into(),
                line: Some("Step 1/9".into())
            })
        );
        assert_eq!(
            state_of("/w", Progress::WaitingForHealth),
            Some(SandboxState::Starting {
                workspace: "/w".into(),
                step: StartStep::WaitingForHealth
            })
        );
        assert_eq!(state_of("/w", Progress::Ready), None);
    }

    #[test]
    fn states_read_as_the_ui_expects() {
        let s = SandboxStatus {
            seq: 3,
            state: SandboxState::Connected {
                workspace: "/w".into(),
                base_url: "http://127.0.0.1:1".into(),
                key_account: KEY_ACCOUNT.into(),
                workspace_inside: "/workspace".into(),
                id: "abc".into(),
                model: None,
            },
        };
        assert_eq!(
            serde_json::to_value(&s).unwrap(),
            serde_json::json!({"seq": 3, "state": {"state": "connected", "workspace": "/w",
                "baseUrl": "http://127.0.0.1:1", "keyAccount": "backend:sandbox",
                "workspaceInside": "/workspace", "id": "abc", "model": null}})
        );
        let f = SandboxState::Failed {
            workspace: "/w".into(),
            reason: "r".into(),
            code: FailureCode::NoDocker,
        };
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::json!({"state": "failed", "workspace": "/w", "reason": "r", "code": "no_docker"})
        );
    }

    #[test]
    fn the_config_never_shows_the_keys() {
        let c = SandboxConfig::new(vec![("LLM_API_KEY".into(), "sk-secret".into())], None);
        let text = format!("{c:?}");
        assert!(
            text.contains("LLM_API_KEY") && !text.contains("sk-secret"),
            "{text}"
        );
    }

    #[tokio::test]
    async fn a_folder_that_is_not_there_fails_before_docker_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let (b, heard) = backend(dir.path());
        let missing = dir.path().join("nope").display().to_string();
        let first = b.start(missing.clone()).await;
        assert_eq!(first.seq, 1);
        let end = settled(&b).await;
        let SandboxState::Failed {
            reason,
            code,
            workspace,
        } = &end.state
        else {
            panic!("{end:?}")
        };
        assert_eq!((code, workspace), (&FailureCode::Workspace, &missing));
        assert!(reason.contains("is not a folder"), "{reason}");
        let states: Vec<_> = heard.lock().unwrap().iter().map(|s| s.seq).collect();
        assert_eq!(states, [1, 2]);

        // Stopping keeps the folder, to start again.
        let stopped = b.stop().await;
        assert_eq!(
            stopped.state,
            SandboxState::Stopped {
                workspace: Some(missing)
            }
        );
        assert_eq!(stopped.seq, 3);
    }
}
