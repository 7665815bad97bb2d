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
//!
//! Hosts never name a provisioner's type: they get one through [`ProvisionerSource`] (a kind by
//! name, [`connect`]ed here, or one given ready-made), and everything else goes through the
//! trait. A new kind is a new arm of [`connect`]; the CLI, the desktop and the UI stay as they
//! are. The `fake` feature exports [`fake::Fake`], an in-memory provisioner for hosts' tests.

mod docker;
mod error;
#[cfg(any(test, feature = "fake"))]
pub mod fake;
mod limits;
mod supervisor;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

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
    /// Host port of the server; none: one the kernel or Docker assigns (read back once it runs).
    pub port: Option<u16>,
    /// Environment for the server and the agent's commands (`--env`, LLM settings). The LLM
    /// (`LLM_MODEL`, `LLM_BASE_URL`, `LLM_API_KEY`) never goes into the container's environment:
    /// it is written to a settings file only the server can read. Any other variable named like
    /// a credential ([`is_credential_name`]) is refused: `docker inspect` and the processes of
    /// the container would show it.
    pub env: Vec<(String, String)>,
    /// Extra arguments of the `tandem serve` inside (`--llm demo`).
    pub server_args: Vec<String>,
    /// Remove the sandbox when this process is gone (the next start cleans it up); false for
    /// sandboxes started to outlive their starter (`tandem sandbox start`).
    pub owned_by_this_process: bool,
    /// Run the agent as root inside the sandbox when the workspace is owned by root (the agent
    /// takes the workspace owner's uid, and files never change owner): an explicit opt-in, since
    /// an agent running as root can read the server's keys. Without it such a workspace is
    /// refused with the choices.
    pub allow_root: bool,
    /// A host folder holding the server's conversations (mounted over its conversations
    /// folder), so that stopping, killing or removing the sandbox loses none of them and the
    /// next sandbox lists and resumes them; see [`conversations_dir`]. None: they live and die
    /// with the container.
    pub conversations: Option<PathBuf>,
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
            allow_root: false,
            conversations: None,
        }
    }
}

/// Variables a sandbox gets from its starter's environment without being asked. No credential
/// is among them: the LLM's key goes with the LLM settings (`LLM_MODEL`, `LLM_BASE_URL`,
/// `LLM_API_KEY`, which the CLI and the desktop resolve, from the provider's variable too) into
/// a file only the sandbox's server reads.
pub const FORWARDED_ENV: &[&str] = &["OPENAI_BASE_URL", "LLM_NUM_RETRIES", "TANDEM_LOG"];

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

/// Whether a variable's name says it holds a credential (`*_API_KEY`, `*_TOKEN`, `*_SECRET`,
/// `*_PASSWORD`, session keys): such a variable never goes into a sandbox's environment.
pub fn is_credential_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "_API_KEY",
        "_TOKEN",
        "_SECRET",
        "_SECRET_KEY",
        "_PASSWORD",
        "_SESSION_KEY",
    ]
    .iter()
    .any(|suffix| n.ends_with(suffix))
        || matches!(
            n.as_str(),
            "SESSION_API_KEY" | "TANDEM_SESSION_KEYS" | "OH_SECRET_KEY"
        )
        || n.starts_with("OH_SESSION_API_KEYS_")
}

/// The host folder [`SandboxSpec::conversations`] is by default for `workspace`:
/// `<tandem_home>/sandboxes/<folder name>-<hash of its path>/conversations`, the same for every
/// sandbox on that workspace (so a new one resumes what an old one left).
pub fn conversations_dir(tandem_home: &std::path::Path, workspace: &std::path::Path) -> PathBuf {
    let path = workspace.to_string_lossy();
    // FNV-1a: stable across builds and platforms (the folder must be found again).
    let hash = path.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    tandem_home
        .join("sandboxes")
        .join(format!("{name}-{hash:016x}"))
        .join("conversations")
}

/// `url` with a loopback host (`127.0.0.1`, `localhost`, `::1`) replaced by
/// `host.docker.internal`, which a bridged sandbox maps to the host (Docker's `host-gateway`);
/// none when the URL does not point at loopback.
pub fn rewrite_loopback(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let (userinfo, hostport) = match authority.rsplit_once('@') {
        Some((u, h)) => (format!("{u}@"), h),
        None => (String::new(), authority),
    };
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, p) = v6.split_once(']')?;
        (h, p)
    } else {
        match hostport.rsplit_once(':') {
            Some((h, _)) => (h, &hostport[h.len()..]),
            None => (hostport, ""),
        }
    };
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host == "::1"
        || host
            .parse::<std::net::Ipv4Addr>()
            .is_ok_and(|ip| ip.is_loopback());
    loopback.then(|| format!("{scheme}://{userinfo}{HOST_GATEWAY_NAME}{port}{path}"))
}

/// The name a bridged sandbox reaches its host by.
pub const HOST_GATEWAY_NAME: &str = "host.docker.internal";

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

/// The kinds of sandbox [`connect`] knows, by the name `tandem run --sandbox KIND` takes.
pub const PROVISIONERS: &[&str] = &["docker"];

/// How a host wants its provisioner set up.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// How long a started sandbox's server may take to answer (the provisioner's own default
    /// when none).
    pub health_timeout: Option<Duration>,
}

/// The provisioner of kind `kind` (one of [`PROVISIONERS`]), connected to what runs its
/// sandboxes (for Docker: the daemon at `DOCKER_HOST`, else the local socket).
pub async fn connect(
    kind: &str,
    options: &ConnectOptions,
) -> Result<Arc<dyn Provisioner>, SandboxError> {
    match kind {
        "docker" => {
            let mut docker = DockerProvisioner::connect().await?;
            if let Some(t) = options.health_timeout {
                docker = docker.with_health_timeout(t);
            }
            Ok(Arc::new(docker))
        }
        other => Err(SandboxError::Invalid(format!(
            "unknown sandbox `{other}`: Tandem has {}",
            PROVISIONERS.join(", ")
        ))),
    }
}

/// Where a host gets its provisioner: a kind [`connect`]ed when a sandbox is wanted (what the
/// CLI and the desktop use), or one made elsewhere (a test's fake, an embedder's own).
#[derive(Clone)]
pub enum ProvisionerSource {
    /// A kind of [`PROVISIONERS`].
    Kind(String),
    /// A provisioner ready to use.
    Given(Arc<dyn Provisioner>),
}

impl Default for ProvisionerSource {
    fn default() -> Self {
        Self::Kind("docker".to_owned())
    }
}

impl std::fmt::Debug for ProvisionerSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Kind(k) => f.debug_tuple("Kind").field(k).finish(),
            Self::Given(_) => f.write_str("Given(..)"),
        }
    }
}

impl ProvisionerSource {
    /// The provisioner: connected now for a kind, the given one as it is.
    pub async fn get(
        &self,
        options: &ConnectOptions,
    ) -> Result<Arc<dyn Provisioner>, SandboxError> {
        match self {
            Self::Kind(kind) => connect(kind, options).await,
            Self::Given(p) => Ok(Arc::clone(p)),
        }
    }
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
    /// Makes the image `opts.tag` from the tandem binary `opts.binary`, for a start that found
    /// it missing ([`SandboxError::ImageMissing`]). A kind whose images come from elsewhere (a
    /// registry) answers with what to do instead.
    fn build_image<'a>(
        &'a self,
        opts: &'a BuildOptions,
        progress: OnProgress<'a>,
    ) -> BoxFuture<'a, Result<BuildReport, SandboxError>>;
    /// The URL a sandbox uses for `url`, an address of this machine (a local LLM): `None` when
    /// it reaches it as it is (Docker's host network), else the address it is reached at from
    /// inside (Docker's bridge: the host gateway).
    fn url_inside<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Option<String>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loopback_llm_url_is_rewritten_to_the_host_gateway() {
        let r = |u: &str| rewrite_loopback(u);
        assert_eq!(
            r("http://127.0.0.1:11434/v1").as_deref(),
            Some("http://host.docker.internal:11434/v1")
        );
        assert_eq!(
            r("http://localhost:8080").as_deref(),
            Some("http://host.docker.internal:8080")
        );
        assert_eq!(
            r("https://user:pw@127.0.0.2/v1/").as_deref(),
            Some("https://user:pw@host.docker.internal/v1/")
        );
        assert_eq!(
            r("http://[::1]:9000/v1").as_deref(),
            Some("http://host.docker.internal:9000/v1")
        );
        assert_eq!(r("https://api.openai.com/v1"), None);
        assert_eq!(r("http://10.0.0.5:8000/v1"), None);
        assert_eq!(r("not a url"), None);
    }

    #[test]
    fn credentials_are_told_by_their_names() {
        for n in [
            "LLM_API_KEY",
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY_SECRET",
            "DB_PASSWORD",
            "TANDEM_SESSION_KEY",
            "TANDEM_SESSION_KEYS",
            "SESSION_API_KEY",
            "OH_SESSION_API_KEYS_0",
            "OH_SECRET_KEY",
        ] {
            assert!(is_credential_name(n), "{n}");
        }
        for n in [
            "LLM_MODEL",
            "LLM_BASE_URL",
            "TANDEM_LOG",
            "PATH",
            "TOKENIZERS",
        ] {
            assert!(!is_credential_name(n), "{n}");
        }
        assert!(FORWARDED_ENV.iter().all(|n| !is_credential_name(n)));
    }

    #[test]
    fn each_workspace_has_its_own_conversations_folder_found_again() {
        let home = std::path::Path::new("/home/p/.tandem");
        let a = conversations_dir(home, std::path::Path::new("/src/my app"));
        assert_eq!(
            a,
            conversations_dir(home, std::path::Path::new("/src/my app"))
        );
        assert!(
            a.to_string_lossy()
                .starts_with("/home/p/.tandem/sandboxes/my_app-"),
            "{}",
            a.display()
        );
        assert!(a.ends_with("conversations"));
        assert_ne!(
            a,
            conversations_dir(home, std::path::Path::new("/other/my app"))
        );
    }
}
