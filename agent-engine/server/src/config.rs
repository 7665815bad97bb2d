//! The server's configuration: where conversations live, who may connect, limits, and the LLM
//! profiles of the gateway. [`ServerConfig::from_env`] reads Tandem's and upstream's variables.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tandem_host::env::{keys_from_env, llm_from_env, var as env};
use tandem_protocol::LlmConfig;
use tandem_sdk::ToolCatalog;

use tandem_host::profiles::{KeySource, ProfileStore};

/// How the server runs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Accepted `X-Session-API-Key` values; empty = no authentication (loopback only).
    pub session_keys: Vec<String>,
    /// Root of the conversation directories.
    pub conversations_path: PathBuf,
    /// Workspace of conversations whose request names none.
    pub workspace_path: PathBuf,
    /// Where server-level bash events are written.
    pub bash_events_dir: PathBuf,
    /// The home of the workspaces' checkpoint stores (`$TANDEM_HOME`; stores live in its
    /// `checkpoints/`); `None` (`TANDEM_CHECKPOINTS=off`): actions are not checkpointed and
    /// rewind answers that checkpoints are off.
    pub checkpoints_home: Option<PathBuf>,
    /// Folders outside workspaces watched around actions, so what an action changed there is
    /// named (not restorable); default: the home folder, `/usr/local`, `/opt`, `/etc`; none
    /// with `TANDEM_CHECKPOINTS_OUTSIDE=off`.
    pub checkpoints_outside: Vec<PathBuf>,
    /// Folders outside workspaces checkpointed with them, so a rewind takes back what an
    /// action changed there (the sandbox's `/usr`, `/etc`, homes: `TANDEM_SYSTEM_CHECKPOINTS`);
    /// none by default. They replace the watched folders above.
    pub checkpoints_system: Vec<PathBuf>,
    /// Where server-level secrets are kept (values in memory only when `None`).
    pub secrets_file: Option<PathBuf>,
    /// Runs at once; more wait their turn in a queue.
    pub max_concurrent_runs: usize,
    /// Idle conversations leave memory after this long.
    pub idle_ttl: Duration,
    /// LLM profiles given by the environment or the embedding program (`default` first):
    /// served by the gateway and used as the key fallback after a restart, not stored.
    pub profiles: BTreeMap<String, LlmConfig>,
    /// Profiles saved through `/api/profiles` (in `$TANDEM_HOME/profiles`); a saved profile
    /// wins over one of [`profiles`](Self::profiles) of the same name.
    pub profile_store: Arc<ProfileStore>,
    /// How long a gateway request may run.
    pub gateway_timeout: Duration,
    /// A gateway-made conversation unused this long is deleted.
    pub gateway_retention: Duration,
    /// Gateway-made conversations kept at most; the least recently used go first.
    pub gateway_max_retained: usize,
    /// JSON bodies larger than this answer 413.
    pub max_body_bytes: usize,
    /// Uploads larger than this answer 413.
    pub max_upload_bytes: usize,
    /// The terminal's quiet time before a command returns still running (`None`: its default).
    pub terminal_soft_timeout: Option<Duration>,
    /// The VNC server showing this machine's desktop (`TANDEM_VNC_ADDR`, set in the sandbox): a
    /// unix socket path (`/run/tandem/vnc.sock` or `unix:PATH`) or `host:port`; `None`: the
    /// server has no desktop and `/sockets/vnc/{id}` refuses.
    pub vnc_addr: Option<String>,
    /// The tools an agent spec may name ([`tandem_host::catalog`]: the built-ins
    /// and the browser); a program embedding the server registers its own tools here, and a
    /// spec sent over the network names them like any other.
    pub tools: ToolCatalog,
    /// A replay of a trace (`tandem replay open`): every request that would change something
    /// (any method but GET, HEAD and OPTIONS) and every socket but the events' is refused with
    /// 409, so nothing runs and nothing is written.
    pub read_only: bool,
}

impl ServerConfig {
    /// Defaults rooted at `home` (`$TANDEM_HOME`): `conversations/`, `workspace/`,
    /// `bash_events/`, `profiles/`; no keys, 10 runs, 20 minutes idle TTL, no LLM profile
    /// given; gateway conversations kept 1 hour unused, 100 at most.
    pub fn new(home: &Path) -> Self {
        Self {
            session_keys: Vec::new(),
            conversations_path: home.join("conversations"),
            workspace_path: home.join("workspace"),
            bash_events_dir: home.join("bash_events"),
            checkpoints_home: Some(home.to_owned()),
            checkpoints_outside: tandem_checkpoint::outside::default_roots(),
            checkpoints_system: Vec::new(),
            secrets_file: None,
            max_concurrent_runs: 10,
            idle_ttl: Duration::from_secs(1200),
            profiles: BTreeMap::new(),
            profile_store: Arc::new(ProfileStore::new(home.join("profiles"))),
            gateway_timeout: Duration::from_secs(600),
            gateway_retention: Duration::from_secs(3600),
            gateway_max_retained: 100,
            max_body_bytes: 10 * 1024 * 1024,
            max_upload_bytes: 512 * 1024 * 1024,
            terminal_soft_timeout: None,
            vnc_addr: None,
            tools: tandem_host::catalog(),
            read_only: false,
        }
    }

    /// [`new`](Self::new) overridden by the environment: keys from `TANDEM_SESSION_KEY`,
    /// `TANDEM_SESSION_KEYS` (comma list), `OH_SESSION_API_KEYS_0..n` and `SESSION_API_KEY`; paths from
    /// `OH_CONVERSATIONS_PATH`, `OH_WORKSPACE_PATH`, `OH_BASH_EVENTS_DIR`; limits from
    /// `OH_MAX_CONCURRENT_RUNS` and `OH_CONVERSATION_IDLE_TTL_SECONDS`; the default LLM
    /// profile from `LLM_MODEL` / `LLM_BASE_URL` / `LLM_API_KEY`; the profiles' encryption key
    /// from `OH_SECRET_KEY` (else a key file); the gateway's retention from
    /// `TANDEM_GATEWAY_RETENTION_SECONDS` and `TANDEM_GATEWAY_MAX_RETAINED`; the desktop's VNC
    /// server from `TANDEM_VNC_ADDR`; checkpoints turned off by `TANDEM_CHECKPOINTS=off`.
    pub fn from_env(home: &Path) -> Self {
        let mut c = Self::new(home);
        c.session_keys = keys_from_env();
        if let Some(p) = env("OH_CONVERSATIONS_PATH") {
            c.conversations_path = PathBuf::from(p);
        }
        if let Some(p) = env("OH_WORKSPACE_PATH") {
            c.workspace_path = PathBuf::from(p);
        }
        if let Some(p) = env("OH_BASH_EVENTS_DIR") {
            c.bash_events_dir = PathBuf::from(p);
        }
        if let Some(n) = env("OH_MAX_CONCURRENT_RUNS").and_then(|n| n.parse().ok()) {
            c.max_concurrent_runs = n;
        }
        if let Some(n) = env("OH_CONVERSATION_IDLE_TTL_SECONDS").and_then(|n| n.parse().ok()) {
            c.idle_ttl = Duration::from_secs(n);
        }
        if let Some(secret) = env("OH_SECRET_KEY") {
            c.profile_store = Arc::new(ProfileStore::with_key(
                home.join("profiles"),
                KeySource::Secret(secret),
            ));
        }
        if let Some(n) = env("TANDEM_GATEWAY_RETENTION_SECONDS").and_then(|n| n.parse().ok()) {
            c.gateway_retention = Duration::from_secs(n);
        }
        if let Some(n) = env("TANDEM_GATEWAY_MAX_RETAINED").and_then(|n| n.parse().ok()) {
            c.gateway_max_retained = n;
        }
        if env("TANDEM_CHECKPOINTS").is_some_and(|v| matches!(v.trim(), "off" | "0" | "false")) {
            c.checkpoints_home = None;
        }
        if env("TANDEM_CHECKPOINTS_OUTSIDE")
            .is_some_and(|v| matches!(v.trim(), "off" | "0" | "false"))
        {
            c.checkpoints_outside.clear();
        }
        c.checkpoints_system = tandem_checkpoint::system::roots_from_env();
        c.vnc_addr = env("TANDEM_VNC_ADDR").map(|a| a.trim().to_owned());
        if let Some(llm) = llm_from_env() {
            c.profiles.insert("default".into(), llm);
        }
        c
    }

    /// The default LLM profile, if any.
    pub fn default_llm(&self) -> Option<&LlmConfig> {
        self.profiles
            .get("default")
            .or_else(|| self.profiles.values().next())
    }

    /// Every LLM profile by name: the given ones, and the saved ones over them.
    pub fn all_profiles(&self) -> BTreeMap<String, LlmConfig> {
        let mut all = self.profiles.clone();
        all.extend(self.profile_store.all());
        all
    }
}
