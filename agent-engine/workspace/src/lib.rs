//! Provisioning of sandboxes: a place where the agent's commands run away from the person's
//! machine, with its own desktop, browser and resource limits, and an agent server inside that
//! every client reaches like any remote backend.
//!
//! [`Provisioner`] is the small interface every kind of sandbox implements (create, start,
//! ready, wait, remove, list, logs, sweep), and the [`Supervisor`] the one lifecycle both the CLI
//! and the desktop drive it through. [`DockerProvisioner`] is the one built now: it builds the sandbox image
//! (`sandbox-image/`, from a debootstrap base so nothing is pulled), starts a container of it
//! with the workspace mounted, waits for the server inside to answer `/health`, and removes it
//! again. A Kubernetes or remote-VM provisioner implements the same trait and hands back the
//! same [`Sandbox`] (a URL and a session key), so neither the UI nor the protocol changes.

mod docker;
mod error;
mod limits;
mod supervisor;

use std::path::PathBuf;

use futures::future::BoxFuture;

pub use docker::{BASE_IMAGE, BuildOptions, BuildReport, DockerProvisioner, IMAGE, SANDBOX_LABEL};
pub use error::SandboxError;
pub use limits::parse_memory;
pub use supervisor::{Running, Supervisor};
/// What cancels a [`Supervisor::start`] (re-exported: its callers need no other crate for it).
pub use tokio_util::sync::CancellationToken;

/// Where the workspace folder appears inside a sandbox.
pub const WORKSPACE_IN_SANDBOX: &str = "/workspace";

/// What a sandbox is started with.
#[derive(Debug, Clone)]
pub struct SandboxSpec {
    /// The host folder the agent works in, mounted at [`WORKSPACE_IN_SANDBOX`].
    pub workspace: PathBuf,
    /// The image to start (default [`IMAGE`]).
    pub image: String,
    /// Memory limit, Docker's notation (`512m`, `2g`); none: unlimited.
    pub memory: Option<String>,
    /// CPUs (`1.5`); none: unlimited.
    pub cpus: Option<f64>,
    /// Most processes at once; none: unlimited.
    pub pids: Option<i64>,
    /// Host port of the server; none: a free one.
    pub port: Option<u16>,
    /// Environment for the server and the agent's commands (LLM keys, secrets, `--env`).
    pub env: Vec<(String, String)>,
    /// Extra arguments of the `tandem serve` inside (`--llm demo`).
    pub server_args: Vec<String>,
    /// Remove the sandbox when this process is gone (the next start cleans it up); false for
    /// sandboxes started to outlive their starter (`tandem sandbox start`).
    pub owned_by_this_process: bool,
}

impl SandboxSpec {
    /// A spec for `workspace` with the default image, no limits and a free port.
    pub fn new(workspace: impl Into<PathBuf>) -> Self {
        Self {
            workspace: workspace.into(),
            image: IMAGE.to_owned(),
            memory: None,
            cpus: None,
            pids: None,
            port: None,
            env: Vec::new(),
            server_args: Vec::new(),
            owned_by_this_process: true,
        }
    }
}

/// Variables a sandbox gets from its starter's environment without being asked: what the
/// server inside needs to reach the same LLM providers (the CLI adds `LLM_MODEL`,
/// `LLM_BASE_URL` and `LLM_API_KEY`; the desktop passes its resolved LLM instead).
pub const FORWARDED_ENV: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "ANTHROPIC_API_KEY",
    "OPENROUTER_API_KEY",
    "GEMINI_API_KEY",
    "MISTRAL_API_KEY",
    "DEEPSEEK_API_KEY",
    "GROQ_API_KEY",
    "LLM_NUM_RETRIES",
    "TANDEM_LOG",
];

/// The [`FORWARDED_ENV`] variables `var` has a non-blank value for.
pub fn forwarded_env(var: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    FORWARDED_ENV
        .iter()
        .filter_map(|name| {
            var(name)
                .filter(|v| !v.trim().is_empty())
                .map(|v| ((*name).to_owned(), v))
        })
        .collect()
}

/// A started sandbox: an agent server to connect to.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sandbox {
    /// The provisioner's id for it (a container id).
    pub id: String,
    /// The agent server's base URL, reachable from this machine.
    pub url: String,
    /// The session key the server accepts.
    pub session_key: String,
    /// The workspace's path inside the sandbox.
    pub workspace: String,
}

/// One sandbox as `list` sees it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SandboxInfo {
    /// The provisioner's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// The image it runs.
    pub image: String,
    /// `running`, `exited`, ...
    pub state: String,
    /// The agent server's URL, when known.
    pub url: Option<String>,
    /// The host folder mounted as its workspace.
    pub workspace: Option<String>,
}

/// Steps of a start (and of a build), for progress shown to a person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// A line of the image build.
    Building(String),
    /// The container is being created and started.
    Starting,
    /// Started; waiting for the server inside to answer.
    WaitingForHealth,
    /// The server answers.
    Ready,
}

/// A sandbox's health.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub enum Health {
    /// Running and its server answers.
    Healthy,
    /// Running, but its server does not answer (yet).
    Unresponsive,
    /// Not running; why, when known (exit code, out of memory).
    Stopped(String),
}

/// Progress callback of a start or build.
pub type OnProgress<'a> = &'a (dyn Fn(Progress) + Send + Sync);

/// A sandbox created but not started yet: what [`Provisioner::create`] hands to
/// [`Provisioner::start`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// The provisioner's id for it (a container id): what removes it.
    pub id: String,
    /// The session key its server will accept.
    pub session_key: String,
    /// Its server's base URL, when known before it starts.
    pub url: Option<String>,
    /// The host port asked for or picked for its server, if any (to name it when taken).
    pub port: Option<u16>,
}

/// Why a sandbox stopped on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// Its exit code, when it exited (none: removed, or unknown).
    pub code: Option<i64>,
    /// The cause in words (exit code, out of memory, removed).
    pub reason: String,
}

/// A kind of sandbox: Docker now; Kubernetes (one pod per sandbox, the same image) or a
/// remote VM later, behind the same steps. The [`Supervisor`] drives them: it starts a sandbox
/// step by step (so a cancelled start always knows what to remove), watches it with
/// [`wait`](Self::wait) and removes it.
pub trait Provisioner: Send + Sync {
    /// Checks `spec` (the folder, the image) and creates the sandbox without starting it. The
    /// supervisor never drops this future half-way: what it creates always gets an id back.
    fn create<'a>(&'a self, spec: &'a SandboxSpec) -> BoxFuture<'a, Result<Created, SandboxError>>;
    /// Starts a created sandbox and answers where its server is. May be dropped half-way:
    /// [`remove`](Self::remove) of the created id cleans up.
    fn start<'a>(&'a self, created: &'a Created) -> BoxFuture<'a, Result<Sandbox, SandboxError>>;
    /// Resolves once the server of a started sandbox answers, or fails when it does not within
    /// the provisioner's time. May be dropped half-way.
    fn ready<'a>(&'a self, sandbox: &'a Sandbox) -> BoxFuture<'a, Result<(), SandboxError>>;
    /// Resolves once a started sandbox no longer runs, with why (the provisioner is told, it
    /// does not poll). An error: it can no longer be watched.
    fn wait<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Exit, SandboxError>>;
    /// Stops and removes a sandbox, whatever its state (nothing left behind);
    /// [`SandboxError::NotFound`] when there is none.
    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), SandboxError>>;
    /// The sandboxes this provisioner started.
    fn list(&self) -> BoxFuture<'_, Result<Vec<SandboxInfo>, SandboxError>>;
    /// The last `tail` lines of a sandbox's output.
    fn logs<'a>(&'a self, id: &'a str, tail: usize) -> BoxFuture<'a, Result<String, SandboxError>>;
    /// Removes leftovers: sandboxes whose owning process is gone, and with `mine` also those
    /// this process owns. Failures are logged, never in the way.
    fn sweep(&self, mine: bool) -> BoxFuture<'_, ()>;
}
