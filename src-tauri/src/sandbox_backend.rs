//! The Docker sandbox backend: the person picks a workspace folder, the desktop starts the
//! sandbox image on it through `tandem-workspace` (building the image first when it is missing)
//! and the UI then talks to the server inside like to any remote backend: its URL, and its
//! session key kept in the keyring under [`KEY_ACCOUNT`].
//!
//! One sandbox at a time. Every step is published as a [`SandboxStatus`] (a Tauri event and the
//! answer of the commands), with a sequence number so the UI can drop an answer older than an
//! event it already has. The sandbox is removed when the person switches away from it, starts
//! another, or quits ([`SandboxBackend::shutdown`]); one left by a crash carries this process as
//! its owner and is removed by the next start. While it runs it is watched, so a container that
//! dies or is removed shows as failed with the reason instead of as connected.

mod setup;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;
use tandem_workspace::{
    BuildOptions, DockerProvisioner, Health, Progress, Provisioner, SandboxError, SandboxSpec,
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
/// Health checks in a row that may fail (the daemon busy) before the sandbox counts as lost.
const WATCH_ERRORS: u32 = 3;

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
    /// How often a running sandbox is checked.
    pub watch_every: Duration,
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
            .field("watch_every", &self.watch_every)
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
            image: tandem_workspace::IMAGE.to_owned(),
            env,
            model,
            server_args,
            binary: BinarySearch::from_env(),
            health_timeout: None,
            watch_every: Duration::from_secs(2),
        }
    }
}

type Notify = dyn Fn(&SandboxStatus) + Send + Sync;

/// The sandbox backend of the desktop: starts, watches and removes one sandbox.
pub struct SandboxBackend {
    shared: Arc<Shared>,
    /// One start, stop or shutdown at a time.
    ops: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for SandboxBackend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxBackend")
            .field("status", &self.status())
            .finish_non_exhaustive()
    }
}

struct Shared {
    inner: Mutex<Inner>,
    notify: Box<Notify>,
    keys: Arc<KeyStore>,
    config: SandboxConfig,
}

struct Inner {
    status: SandboxStatus,
    /// Bumped by every start and stop: a task of an older one may no longer change anything.
    generation: u64,
    task: Option<JoinHandle<()>>,
    docker: Option<DockerProvisioner>,
    id: Option<String>,
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
                inner: Mutex::new(Inner {
                    status: SandboxStatus {
                        seq: 0,
                        state: SandboxState::Stopped { workspace: None },
                    },
                    generation: 0,
                    task: None,
                    docker: None,
                    id: None,
                }),
                notify: Box::new(notify),
                keys,
                config,
            }),
            ops: tokio::sync::Mutex::new(()),
        }
    }

    /// The current status.
    pub fn status(&self) -> SandboxStatus {
        self.shared.lock().status.clone()
    }

    /// Starts a sandbox on `workspace`, first removing the one running; answers at once with
    /// the first step, the rest arrives through `notify`. Must run inside a Tokio runtime.
    pub async fn start(&self, workspace: String) -> SandboxStatus {
        let _op = self.ops.lock().await;
        self.halt().await;
        let generation = {
            let mut inner = self.shared.lock();
            inner.generation += 1;
            inner.generation
        };
        self.shared.set(
            generation,
            SandboxState::Starting {
                workspace: workspace.clone(),
                step: StartStep::Connecting,
            },
        );
        let shared = Arc::clone(&self.shared);
        let task = tokio::spawn(async move { shared.run(generation, workspace).await });
        let mut inner = self.shared.lock();
        if inner.generation == generation {
            inner.task = Some(task);
        }
        inner.status.clone()
    }

    /// Stops and removes the sandbox (or cancels its start), forgets its key, and answers
    /// `stopped`.
    pub async fn stop(&self) -> SandboxStatus {
        let _op = self.ops.lock().await;
        let workspace = self.halt().await;
        let generation = self.shared.lock().generation;
        self.shared
            .set(generation, SandboxState::Stopped { workspace });
        self.status()
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

    /// Ends the current sandbox, whatever its state: cancels its task, removes its container
    /// and its key. Answers its folder.
    async fn halt(&self) -> Option<String> {
        let (task, creating) = {
            let mut inner = self.shared.lock();
            let creating = matches!(
                inner.status.state,
                SandboxState::Starting {
                    step: StartStep::Creating,
                    ..
                }
            );
            (inner.task.take(), creating)
        };
        if let Some(task) = task {
            task.abort();
            // Once it has ended it can no longer create a container behind our back.
            let _ = task.await;
        }
        let (docker, id, workspace) = {
            let mut inner = self.shared.lock();
            inner.generation += 1;
            (
                inner.docker.take(),
                inner.id.take(),
                inner.status.state.workspace().map(str::to_owned),
            )
        };
        if let Some(docker) = docker {
            remove(&docker, id.as_deref()).await;
            if creating {
                // The aborted task may have sent the create request: the daemon finishes it
                // without us, so its container can appear after the removal above.
                for _ in 0..CREATE_SETTLE_CHECKS {
                    tokio::time::sleep(CREATE_SETTLE_STEP).await;
                    docker.remove_owned_by_this_process().await;
                }
            }
            self.shared.forget_key().await;
        }
        workspace
    }
}

/// After a start is cancelled while creating its container, how often and how far apart the
/// containers of this process are looked for again (one the daemon was still creating).
const CREATE_SETTLE_CHECKS: u32 = 6;
const CREATE_SETTLE_STEP: Duration = Duration::from_millis(250);

/// Removes sandbox `id` and anything else this process started (a start cancelled before it
/// told the id), within [`STOP_TIMEOUT`].
async fn remove(docker: &DockerProvisioner, id: Option<&str>) {
    let removed = tokio::time::timeout(STOP_TIMEOUT, async {
        if let Some(id) = id
            && let Err(e) = docker.stop(id).await
            && !matches!(e, SandboxError::NotFound(_))
        {
            tracing::warn!("cannot remove the sandbox {id}: {e}");
        }
        docker.remove_owned_by_this_process().await;
    })
    .await;
    if removed.is_err() {
        tracing::warn!(
            "removing the sandbox took over {} s; the next start removes it",
            STOP_TIMEOUT.as_secs()
        );
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
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Publishes `state` if `generation` is still the current one; false when it is not.
    fn set(&self, generation: u64, state: SandboxState) -> bool {
        let mut inner = self.lock();
        if inner.generation != generation {
            return false;
        }
        inner.status.seq = inner.status.seq.wrapping_add(1);
        inner.status.state = state;
        // Under the lock, so that listeners hear the states in order.
        (self.notify)(&inner.status);
        true
    }

    fn current(&self, generation: u64) -> bool {
        self.lock().generation == generation
    }

    /// A start from the first step to `connected` or `failed`, then the watch.
    async fn run(self: Arc<Self>, generation: u64, workspace: String) {
        match self.launch(generation, &workspace).await {
            Ok((docker, id)) => self.watch(generation, &workspace, &docker, &id).await,
            Err(f) => {
                let (docker, id) = {
                    let mut inner = self.lock();
                    if inner.generation != generation {
                        return;
                    }
                    (inner.docker.take(), inner.id.take())
                };
                if let Some(docker) = docker {
                    remove(&docker, id.as_deref()).await;
                    self.forget_key().await;
                }
                self.set(
                    generation,
                    SandboxState::Failed {
                        workspace,
                        reason: f.reason,
                        code: f.code,
                    },
                );
            }
        }
    }

    async fn launch(
        &self,
        generation: u64,
        workspace: &str,
    ) -> Result<(DockerProvisioner, String), Failure> {
        let dir = PathBuf::from(workspace);
        if !dir.is_dir() {
            return Err(Failure {
                code: FailureCode::Workspace,
                reason: format!(
                    "the workspace {workspace} is not a folder: choose an existing folder"
                ),
            });
        }
        let mut docker = DockerProvisioner::connect().await?;
        if let Some(t) = self.config.health_timeout {
            docker = docker.with_health_timeout(t);
        }
        {
            let mut inner = self.lock();
            if inner.generation != generation {
                return Err(Failure {
                    code: FailureCode::Docker,
                    reason: "cancelled".into(),
                });
            }
            inner.docker = Some(docker.clone());
        }
        let mut spec = SandboxSpec::new(dir);
        spec.image = self.config.image.clone();
        spec.env = self.config.env.clone();
        spec.server_args = self.config.server_args.clone();
        let progress = |p: Progress| {
            if let Some(state) = state_of(workspace, p) {
                self.set(generation, state);
            }
        };
        let sandbox = match docker.start(&spec, &progress).await {
            Err(SandboxError::ImageMissing { image }) => {
                let binary = find_tandem_binary(&self.config.binary).map_err(|reason| Failure {
                    code: FailureCode::NoBinary,
                    reason,
                })?;
                self.set(
                    generation,
                    SandboxState::Building {
                        workspace: workspace.to_owned(),
                        line: Some(format!(
                            "{image} is missing: building it with {}",
                            binary.display()
                        )),
                    },
                );
                let mut opts = BuildOptions::new(binary);
                opts.tag = image;
                docker.build(&opts, &progress).await?;
                docker.start(&spec, &progress).await?
            }
            other => other?,
        };
        let stale = {
            let mut inner = self.lock();
            let stale = inner.generation != generation;
            if !stale {
                inner.id = Some(sandbox.id.clone());
            }
            stale
        };
        if stale {
            let _ = docker.stop(&sandbox.id).await;
            return Err(Failure {
                code: FailureCode::Docker,
                reason: "cancelled".into(),
            });
        }
        self.keep_key(&sandbox.session_key).await?;
        self.set(
            generation,
            SandboxState::Connected {
                workspace: workspace.to_owned(),
                base_url: sandbox.url.clone(),
                key_account: KEY_ACCOUNT.to_owned(),
                workspace_inside: sandbox.workspace.clone(),
                id: sandbox.id.clone(),
                model: self.config.model.clone(),
            },
        );
        Ok((docker, sandbox.id))
    }

    /// Checks the running sandbox until it is stopped from here (the task is cancelled then)
    /// or it dies on its own, which is published as `failed` with the reason and its last
    /// output.
    async fn watch(&self, generation: u64, workspace: &str, docker: &DockerProvisioner, id: &str) {
        let mut errors = 0;
        let failure = loop {
            tokio::time::sleep(self.config.watch_every).await;
            if !self.current(generation) {
                return;
            }
            match docker.health(id).await {
                Ok(Health::Stopped(reason)) => {
                    let logs = docker.logs(id, 20).await.unwrap_or_default();
                    break Failure {
                        code: FailureCode::Died,
                        reason: format!(
                            "the sandbox stopped: {reason}\n--- its last output ---\n{logs}"
                        ),
                    };
                }
                Ok(_) => errors = 0,
                Err(SandboxError::NotFound(_)) => {
                    break Failure {
                        code: FailureCode::Died,
                        reason:
                            "the sandbox's container was removed outside Tandem; start it again"
                                .into(),
                    };
                }
                Err(e) => {
                    errors += 1;
                    if errors >= WATCH_ERRORS {
                        break e.into();
                    }
                }
            }
        };
        {
            let mut inner = self.lock();
            if inner.generation != generation {
                return;
            }
            inner.docker = None;
            inner.id = None;
        }
        remove(docker, Some(id)).await;
        self.forget_key().await;
        self.set(
            generation,
            SandboxState::Failed {
                workspace: workspace.to_owned(),
                reason: failure.reason,
                code: failure.code,
            },
        );
    }

    async fn keyring<T: Send + 'static>(
        &self,
        f: impl FnOnce(&KeyStore) -> crate::Result<T> + Send + 'static,
    ) -> Result<T, String> {
        let keys = Arc::clone(&self.keys);
        let job = tokio::task::spawn_blocking(move || f(&keys));
        match tokio::time::timeout(KEYRING_TIMEOUT, job).await {
            Ok(Ok(r)) => r.map_err(|e| e.to_string()),
            Ok(Err(e)) => Err(format!("keyring call failed: {e}")),
            Err(_) => Err(format!(
                "the keyring did not answer within {} s",
                KEYRING_TIMEOUT.as_secs()
            )),
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
