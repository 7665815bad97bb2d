//! The Docker provisioner: the sandbox image started as a container through the Docker API
//! (bollard), on the daemon `DOCKER_HOST` names.
//!
//! Networking: where the daemon has its default bridge network the container gets it, its server
//! port is published on 127.0.0.1 on a port Docker picks (read back with inspect), and
//! `host.docker.internal` maps to the host (`host-gateway`), to which a loopback LLM URL is
//! rewritten; where it has none (a daemon started with `--bridge=none`, as on build machines
//! without iptables) the container shares the host's network and its server binds 127.0.0.1 on a
//! port the kernel picks (read back from its first line of output). Either way the server is
//! reachable from this machine only, and the desktop's VNC server listens on no port at all (a
//! unix socket only the server inside can open).
//!
//! Secrets: the session key and the LLM's settings are written into the created container as
//! root-only files (Docker's archive upload, before it starts), never into its environment; the
//! server inside runs as root and the agent's commands as the workspace's owner.

mod build;
mod leftovers;
mod lifecycle;

use std::collections::HashMap;
use std::net::{Ipv4Addr, TcpListener};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bollard::Docker;
use bollard::models::{ContainerCreateBody, ContainerInspectResponse, HostConfig, PortBinding};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, ListContainersOptionsBuilder, LogsOptionsBuilder,
    RemoveContainerOptionsBuilder, UploadToContainerOptionsBuilder,
};
use futures::StreamExt;

pub use build::{BASE_IMAGE, BuildOptions, BuildReport};

use crate::limits::{nano_cpus, parse_memory};
use crate::{
    Created, HOST_GATEWAY_NAME, Health, Sandbox, SandboxError, SandboxInfo, SandboxSpec,
    WORKSPACE_IN_SANDBOX, is_credential_name, rewrite_loopback,
};

/// The sandbox image `tandem sandbox build` makes.
pub const IMAGE: &str = "tandem-sandbox:latest";
/// The label every sandbox container carries (value `1`).
pub const SANDBOX_LABEL: &str = "dev.tandem.sandbox";
/// The server's URL, on sandboxes started before ports were read back (older versions).
const URL_LABEL: &str = "dev.tandem.sandbox.url";
const WORKSPACE_LABEL: &str = "dev.tandem.sandbox.workspace";
/// `<boot id>/<pid>` of the process a sandbox belongs to, when it must not outlive it.
const OWNER_LABEL: &str = "dev.tandem.sandbox.owner";
/// The server's port inside a bridged container.
const SERVER_PORT_INSIDE: u16 = 8000;
/// The server's home inside the container (root only): its settings and conversations.
const SERVER_HOME: &str = "var/lib/tandem";
/// The server's secrets inside the container (root only): the session key.
const SECRETS_DIR: &str = "run/tandem";
/// What the server prints first, followed by its URL.
const LISTENING_LINE: &str = "Tandem agent server on ";

/// How long a started sandbox may take to answer `/health` by default.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(90);

/// Starts, lists and removes sandbox containers.
#[derive(Debug, Clone)]
pub struct DockerProvisioner {
    docker: Docker,
    host: String,
    health_timeout: Duration,
    http: reqwest::Client,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Network {
    Host,
    Bridge,
}

impl DockerProvisioner {
    /// Connects to the daemon `DOCKER_HOST` names (default `/var/run/docker.sock`), failing
    /// within seconds with the cause and the fix when none answers.
    pub async fn connect() -> Result<Self, SandboxError> {
        let host = std::env::var("DOCKER_HOST")
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unix:///var/run/docker.sock".to_owned());
        let docker =
            Docker::connect_with_defaults().map_err(|e| SandboxError::from_docker(&host, e))?;
        match tokio::time::timeout(Duration::from_secs(5), docker.ping()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => return Err(SandboxError::from_docker(&host, e)),
            Err(_) => {
                return Err(SandboxError::NoDaemon {
                    host,
                    detail: "no answer within 5 s".into(),
                });
            }
        }
        let docker = docker
            .negotiate_version()
            .await
            .map_err(|e| SandboxError::from_docker(&host, e))?;
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .build()
            .map_err(|e| SandboxError::Docker(format!("HTTP client: {e}")))?;
        Ok(Self {
            docker,
            host,
            health_timeout: HEALTH_TIMEOUT,
            http,
        })
    }

    /// How long `start` waits for the server inside to answer.
    pub fn with_health_timeout(mut self, timeout: Duration) -> Self {
        self.health_timeout = timeout;
        self
    }

    fn err(&self, e: bollard::errors::Error) -> SandboxError {
        SandboxError::from_docker(&self.host, e)
    }

    async fn network(&self) -> Network {
        match std::env::var("TANDEM_SANDBOX_NETWORK").as_deref() {
            Ok("host") => return Network::Host,
            Ok("bridge") => return Network::Bridge,
            _ => {}
        }
        match self.docker.inspect_network("bridge", None).await {
            Ok(_) => Network::Bridge,
            Err(_) => Network::Host,
        }
    }

    /// Whether sandboxes get Docker's bridge network here (else they share the host's): on a
    /// bridge, this machine is `host.docker.internal` to them.
    pub async fn bridged(&self) -> bool {
        self.network().await == Network::Bridge
    }

    async fn image_exists(&self, image: &str) -> Result<bool, SandboxError> {
        match self.docker.inspect_image(image).await {
            Ok(_) => Ok(true),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Ok(false),
            Err(e) => Err(self.err(e)),
        }
    }

    /// Removes a container, whatever its state, with its anonymous volumes.
    async fn remove(&self, id: &str) -> Result<(), SandboxError> {
        let opts = RemoveContainerOptionsBuilder::default()
            .force(true)
            .v(true)
            .build();
        match self.docker.remove_container(id, Some(opts)).await {
            Ok(()) => Ok(()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Err(SandboxError::NotFound(id.to_owned())),
            // Already being removed (a second stop racing the first): gone either way.
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 409, ..
            }) => Ok(()),
            Err(e) => Err(self.err(e)),
        }
    }

    async fn labels_of(&self, id: &str) -> Result<HashMap<String, String>, SandboxError> {
        match self.docker.inspect_container(id, None).await {
            Ok(c) => Ok(c.config.and_then(|c| c.labels).unwrap_or_default()),
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => Err(SandboxError::NotFound(id.to_owned())),
            Err(e) => Err(self.err(e)),
        }
    }

    /// Why a container is not running (exit code, out of memory), or None while it runs.
    async fn stopped_reason(&self, id: &str) -> Result<Option<String>, SandboxError> {
        let c = match self.docker.inspect_container(id, None).await {
            Ok(c) => c,
            Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404, ..
            }) => return Ok(Some("it was removed".into())),
            Err(e) => return Err(self.err(e)),
        };
        let state = c.state.unwrap_or_default();
        if state.running == Some(true) {
            return Ok(None);
        }
        let mut reason = match state.exit_code {
            Some(code) => format!("its server exited with code {code}"),
            None => "it is not running".to_owned(),
        };
        if state.oom_killed == Some(true) {
            reason.push_str(" (killed: out of memory; raise --memory)");
        }
        if let Some(e) = state.error.filter(|e| !e.is_empty()) {
            reason.push_str(&format!(": {e}"));
        }
        Ok(Some(reason))
    }

    async fn answers(&self, url: &str) -> bool {
        matches!(
            self.http.get(format!("{url}/health")).send().await,
            Ok(r) if r.status().is_success()
        )
    }

    /// The URL of sandbox `id`'s server, when it runs and it is known.
    async fn url_of_id(&self, id: &str) -> Option<String> {
        let c = self.docker.inspect_container(id, None).await.ok()?;
        if let Some(url) = c
            .config
            .as_ref()
            .and_then(|c| c.labels.as_ref())
            .and_then(|l| l.get(URL_LABEL))
        {
            return Some(url.clone());
        }
        self.url_of(&c).await
    }

    /// The container to create for `spec`, and the root-only files to put in it before it
    /// starts (a tar archive to extract at `/`).
    fn create_body(
        &self,
        spec: &SandboxSpec,
        workspace: &Path,
        net: Network,
        key: &str,
        name: &str,
    ) -> Result<(ContainerCreateBody, Vec<u8>), SandboxError> {
        let (uid, gid) = owner_of(workspace);
        if uid == 0 && !spec.allow_root {
            return Err(SandboxError::Invalid(format!(
                "the workspace {} is owned by root: the agent runs as the workspace's owner and \
                 nothing in it changes owner, so it would run as root inside the sandbox, where \
                 it could read the server's keys. Choose a folder your own user owns, or opt in \
                 to an agent running as root with --allow-root",
                workspace.display()
            )));
        }
        let (llm, passed) = split_env(&spec.env, net)?;
        let (server_port, bind) = match net {
            // Port 0: the kernel picks a free one, read back from the server's first line.
            Network::Host => (spec.port.unwrap_or(0), "127.0.0.1"),
            Network::Bridge => (SERVER_PORT_INSIDE, "0.0.0.0"),
        };
        let mut env = vec![
            format!("TANDEM_HOST={bind}"),
            format!("TANDEM_PORT={server_port}"),
            format!("TANDEM_UID={uid}"),
            format!("TANDEM_GID={gid}"),
        ];
        if spec.allow_root {
            env.push("TANDEM_ALLOW_ROOT=1".to_owned());
        }
        env.extend(passed.iter().map(|(k, v)| format!("{k}={v}")));
        let mut labels = HashMap::from([
            (SANDBOX_LABEL.to_owned(), "1".to_owned()),
            (
                WORKSPACE_LABEL.to_owned(),
                workspace.to_string_lossy().into_owned(),
            ),
        ]);
        if spec.owned_by_this_process {
            labels.insert(OWNER_LABEL.to_owned(), leftovers::this_process());
        }
        let mut binds = vec![format!(
            "{}:{WORKSPACE_IN_SANDBOX}",
            workspace.to_string_lossy()
        )];
        if let Some(dir) = &spec.conversations {
            let dir = conversations_folder(dir)?;
            binds.push(format!("{}:/{SERVER_HOME}/conversations", dir.display()));
        }
        let memory = spec.memory.as_deref().map(parse_memory).transpose()?;
        let mut host = HostConfig {
            binds: Some(binds),
            memory,
            // No swap beyond the limit: a memory hog is killed, not slowed to a crawl.
            memory_swap: memory,
            nano_cpus: spec.cpus.map(nano_cpus).transpose()?,
            pids_limit: spec.pids,
            // Chromium needs more shared memory than Docker's 64 MB default.
            shm_size: Some(256 << 20),
            ..Default::default()
        };
        match net {
            Network::Host => host.network_mode = Some("host".into()),
            Network::Bridge => {
                // An empty host port: Docker picks a free one (no race with other programs).
                host.port_bindings = Some(HashMap::from([(
                    format!("{SERVER_PORT_INSIDE}/tcp"),
                    Some(vec![PortBinding {
                        host_ip: Some("127.0.0.1".into()),
                        host_port: Some(spec.port.map(|p| p.to_string()).unwrap_or_default()),
                    }]),
                )]));
                host.extra_hosts = Some(vec![format!("{HOST_GATEWAY_NAME}:host-gateway")]);
            }
        }
        let body = ContainerCreateBody {
            image: Some(spec.image.clone()),
            // Its own name even on the host's network: the agent can tell where it is.
            hostname: Some(name.to_owned()),
            env: Some(env),
            labels: Some(labels),
            exposed_ports: (net == Network::Bridge)
                .then(|| vec![format!("{SERVER_PORT_INSIDE}/tcp")]),
            host_config: Some(host),
            // The entrypoint passes its arguments on to `tandem serve`.
            cmd: (!spec.server_args.is_empty()).then(|| spec.server_args.clone()),
            ..Default::default()
        };
        Ok((body, secrets_tar(key, &llm)?))
    }

    /// The URL of sandbox `id`'s server as this machine reaches it: the published port Docker
    /// picked (bridge), or the address the server printed (host network); none while unknown.
    async fn url_of(&self, c: &ContainerInspectResponse) -> Option<String> {
        let host = c.host_config.as_ref();
        if host.and_then(|h| h.network_mode.as_deref()) == Some("host") {
            let id = c.id.as_deref()?;
            return self.printed_url(id).await;
        }
        let ports = c.network_settings.as_ref()?.ports.as_ref()?;
        let binding = ports
            .get(&format!("{SERVER_PORT_INSIDE}/tcp"))?
            .as_ref()?
            .iter()
            .find_map(|b| b.host_port.as_deref().and_then(|p| p.parse::<u16>().ok()))?;
        Some(format!("http://127.0.0.1:{binding}"))
    }

    /// The URL in the server's first line of output (`Tandem agent server on URL`).
    async fn printed_url(&self, id: &str) -> Option<String> {
        let opts = LogsOptionsBuilder::default().stdout(true).build();
        let mut stream = self.docker.logs(id, Some(opts));
        let mut seen = String::new();
        // Only the start of the output is read: the line comes first.
        while let Some(Ok(chunk)) = stream.next().await {
            seen.push_str(&chunk.to_string());
            if let Some(url) = listening_url(&seen) {
                return Some(url);
            }
            if seen.len() > 64 * 1024 {
                break;
            }
        }
        None
    }
}

/// The URL in a `Tandem agent server on URL` line of `output`.
fn listening_url(output: &str) -> Option<String> {
    output.lines().find_map(|l| {
        let url = l.trim().strip_prefix(LISTENING_LINE)?.trim();
        url.starts_with("http://").then(|| url.to_owned())
    })
}

/// The LLM settings a sandbox's server gets in its settings file.
#[derive(Debug, Default, serde::Serialize)]
struct LlmFile {
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    base_url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    api_key: Option<String>,
}

/// `env` split into the LLM settings (for the settings file; a loopback base URL rewritten to
/// the host gateway on a bridge) and what the container's environment may hold; an error naming
/// a credential, which never goes into an environment.
fn split_env(
    env: &[(String, String)],
    net: Network,
) -> Result<(LlmFile, Vec<(String, String)>), SandboxError> {
    let mut llm = LlmFile::default();
    let mut passed = Vec::new();
    for (k, v) in env {
        match k.as_str() {
            "LLM_MODEL" => llm.model = Some(v.clone()),
            "LLM_BASE_URL" => llm.base_url = Some(v.clone()),
            "LLM_API_KEY" => llm.api_key = Some(v.clone()),
            _ if is_credential_name(k) => {
                return Err(SandboxError::Invalid(format!(
                    "{k} looks like a credential: a sandbox passes none through its environment \
                     (`docker inspect` and the agent's commands would see it). The LLM's key \
                     goes as LLM_API_KEY into a file only the sandbox's server reads; give the \
                     agent a credential as a secret of its conversation"
                )));
            }
            _ => passed.push((k.clone(), v.clone())),
        }
    }
    if net == Network::Bridge
        && let Some(url) = llm.base_url.as_deref().and_then(rewrite_loopback)
    {
        llm.base_url = Some(url);
    }
    Ok((llm, passed))
}

/// The host folder of a sandbox's conversations, made (private) when missing.
fn conversations_folder(dir: &Path) -> Result<PathBuf, SandboxError> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(SandboxError::io(format!(
            "creating the sandbox's conversations folder {}",
            dir.display()
        )))?;
    dir.canonicalize().map_err(SandboxError::io(format!(
        "reading the sandbox's conversations folder {}",
        dir.display()
    )))
}

/// The root-only files a sandbox starts with: its session key (`/run/tandem/session-key`,
/// 0400) and, when there is an LLM, the server's settings (`/var/lib/tandem/settings.json`,
/// 0600), in folders only root may enter.
fn secrets_tar(key: &str, llm: &LlmFile) -> Result<Vec<u8>, SandboxError> {
    let packing = || SandboxError::io("packing the sandbox's secrets");
    let mut tar = tar::Builder::new(Vec::new());
    let mut add = |path: &str, data: &[u8], mode: u32, dir: bool| {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(mode);
        header.set_uid(0);
        header.set_gid(0);
        header.set_mtime(0);
        header.set_entry_type(if dir {
            tar::EntryType::Directory
        } else {
            tar::EntryType::Regular
        });
        header.set_cksum();
        tar.append_data(&mut header, path, data)
    };
    add(&format!("{SECRETS_DIR}/"), b"", 0o700, true).map_err(packing())?;
    add(
        &format!("{SECRETS_DIR}/session-key"),
        format!("{key}\n").as_bytes(),
        0o400,
        false,
    )
    .map_err(packing())?;
    if llm.model.is_some() || llm.base_url.is_some() || llm.api_key.is_some() {
        let settings = serde_json::json!({ "llm": llm }).to_string();
        add(&format!("{SERVER_HOME}/"), b"", 0o700, true).map_err(packing())?;
        add(
            &format!("{SERVER_HOME}/settings.json"),
            settings.as_bytes(),
            0o600,
            false,
        )
        .map_err(packing())?;
    }
    tar.into_inner().map_err(packing())
}

impl DockerProvisioner {
    /// Checks `spec` and creates its container, not started yet (the supervisor's first step).
    pub(crate) async fn create_sandbox(&self, spec: &SandboxSpec) -> Result<Created, SandboxError> {
        let workspace = spec.workspace.canonicalize().map_err(|e| {
            SandboxError::Invalid(format!(
                "the workspace {} cannot be used: {e}",
                spec.workspace.display()
            ))
        })?;
        if !workspace.is_dir() {
            return Err(SandboxError::Invalid(format!(
                "the workspace {} is not a folder",
                workspace.display()
            )));
        }
        self.clean_leftovers().await;
        if !self.image_exists(&spec.image).await? {
            return Err(SandboxError::ImageMissing {
                image: spec.image.clone(),
            });
        }
        if let Some(p) = spec.port
            && TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_err()
        {
            return Err(SandboxError::PortTaken { port: p });
        }
        let net = self.network().await;
        let key = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let name = format!(
            "tandem-sandbox-{}",
            &uuid::Uuid::new_v4().simple().to_string()[..12]
        );
        let (body, secrets) = self.create_body(spec, &workspace, net, &key, &name)?;
        let opts = CreateContainerOptionsBuilder::default().name(&name).build();
        let created = self
            .docker
            .create_container(Some(opts), body)
            .await
            .map_err(|e| self.err(e))?;
        // The key and the LLM settings as root-only files, before anything runs in it. The
        // supervisor only learns the id once this returns: a failure here removes it.
        let upload = UploadToContainerOptionsBuilder::default().path("/").build();
        if let Err(e) = self
            .docker
            .upload_to_container(
                &created.id,
                Some(upload),
                bollard::body_full(secrets.into()),
            )
            .await
        {
            let _ = self.remove(&created.id).await;
            return Err(self.err(e));
        }
        Ok(Created {
            id: created.id,
            session_key: key,
            // Known once it runs: the port Docker or the kernel picks.
            url: None,
            port: spec.port,
        })
    }

    /// Starts a created container (the supervisor's second step; it removes the container when
    /// this fails).
    pub(crate) async fn start_sandbox(&self, created: &Created) -> Result<Sandbox, SandboxError> {
        let id = &created.id;
        self.docker.start_container(id, None).await.map_err(|e| {
            match (self.err(e), created.port) {
                (SandboxError::Docker(m), Some(port)) if m.contains("address already in use") => {
                    SandboxError::PortTaken { port }
                }
                (other, _) => other,
            }
        })?;
        let url = match &created.url {
            Some(url) => url.clone(),
            None => self.started_url(id).await?,
        };
        Ok(Sandbox {
            id: id.clone(),
            url,
            session_key: created.session_key.clone(),
            workspace: WORKSPACE_IN_SANDBOX.to_owned(),
        })
    }

    /// The URL of a just started sandbox's server, read back: the host port Docker published
    /// (bridge: known at once), or the address the server printed on its first line (host
    /// network, where the kernel picks the port as it binds). Fails when the container stops
    /// first or nothing is known within the health time.
    async fn started_url(&self, id: &str) -> Result<String, SandboxError> {
        let started = Instant::now();
        loop {
            let c = self
                .docker
                .inspect_container(id, None)
                .await
                .map_err(|e| self.err(e))?;
            if let Some(url) = self.url_of(&c).await {
                return Ok(url);
            }
            if c.state.as_ref().and_then(|s| s.running) != Some(true)
                && let Some(reason) = self.stopped_reason(id).await?
            {
                return Err(SandboxError::Died {
                    id: short(id),
                    reason,
                    logs: DockerProvisioner::logs(self, id, 30)
                        .await
                        .unwrap_or_default(),
                });
            }
            if started.elapsed() > self.health_timeout {
                return Err(SandboxError::Unhealthy {
                    id: short(id),
                    seconds: self.health_timeout.as_secs(),
                    logs: DockerProvisioner::logs(self, id, 30)
                        .await
                        .unwrap_or_default(),
                });
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Stops and removes sandbox `id`; refuses a container that is not a Tandem sandbox.
    pub async fn stop(&self, id: &str) -> Result<(), SandboxError> {
        let labels = self.labels_of(id).await?;
        if labels.get(SANDBOX_LABEL).map(String::as_str) != Some("1") {
            return Err(SandboxError::Invalid(format!(
                "the container {id} is not a Tandem sandbox (it has no {SANDBOX_LABEL} label); not touching it"
            )));
        }
        self.remove(id).await
    }

    /// The Tandem sandboxes of this daemon, running or not.
    pub async fn list(&self) -> Result<Vec<SandboxInfo>, SandboxError> {
        let found = self
            .docker
            .list_containers(Some(labelled(&format!("{SANDBOX_LABEL}=1"))))
            .await
            .map_err(|e| self.err(e))?;
        let mut out = Vec::with_capacity(found.len());
        for c in found {
            let labels = c.labels.unwrap_or_default();
            let id = c.id.unwrap_or_default();
            let state = c.state.map(|s| s.to_string()).unwrap_or_default();
            let url = if state == "running" {
                self.url_of_id(&id).await
            } else {
                None
            };
            out.push(SandboxInfo {
                name: c
                    .names
                    .and_then(|n| n.first().map(|n| n.trim_start_matches('/').to_owned()))
                    .unwrap_or_default(),
                image: c.image.unwrap_or_default(),
                state,
                url,
                workspace: labels.get(WORKSPACE_LABEL).cloned(),
                id,
            });
        }
        Ok(out)
    }

    /// The last `tail` lines of a sandbox's output.
    pub async fn logs(&self, id: &str, tail: usize) -> Result<String, SandboxError> {
        let opts = LogsOptionsBuilder::default()
            .stdout(true)
            .stderr(true)
            .tail(&tail.to_string())
            .build();
        let mut out = String::new();
        let mut stream = self.docker.logs(id, Some(opts));
        while let Some(chunk) = stream.next().await {
            match chunk {
                Ok(c) => out.push_str(&c.to_string()),
                Err(e) => return Err(self.err(e)),
            }
        }
        Ok(out)
    }

    /// Whether a sandbox runs and its server answers.
    pub async fn health(&self, id: &str) -> Result<Health, SandboxError> {
        if let Some(reason) = self.stopped_reason(id).await? {
            return Ok(Health::Stopped(reason));
        }
        match self.url_of_id(id).await {
            Some(url) if self.answers(&url).await => Ok(Health::Healthy),
            _ => Ok(Health::Unresponsive),
        }
    }
}

/// Every container (running or not) with `label` (`name=value`).
fn labelled(label: &str) -> bollard::query_parameters::ListContainersOptions {
    ListContainersOptionsBuilder::default()
        .all(true)
        .filters(&HashMap::from([("label", vec![label.to_owned()])]))
        .build()
}

fn short(id: &str) -> String {
    id.chars().take(12).collect()
}

/// The owner of the workspace, so the sandbox's user can write what the person can read.
fn owner_of(dir: &Path) -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir)
        .map(|m| (m.uid(), m.gid()))
        .unwrap_or((1000, 1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A provisioner whose daemon is never called (create_body only builds values). bollard
    /// wants the socket file to exist when it connects; nothing ever answers on it.
    fn offline() -> DockerProvisioner {
        static SOCKET: std::sync::OnceLock<(tempfile::TempDir, std::os::unix::net::UnixListener)> =
            std::sync::OnceLock::new();
        let (dir, _) = SOCKET.get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let listener =
                std::os::unix::net::UnixListener::bind(dir.path().join("d.sock")).unwrap();
            (dir, listener)
        });
        let sock = dir.path().join("d.sock");
        DockerProvisioner {
            docker: Docker::connect_with_unix(
                &sock.to_string_lossy(),
                1,
                bollard::API_DEFAULT_VERSION,
            )
            .unwrap(),
            host: "unix:///nonexistent/docker.sock".into(),
            health_timeout: HEALTH_TIMEOUT,
            http: reqwest::Client::new(),
        }
    }

    /// A folder a person owns (uid 1000 when the tests run as root, which a root-owned
    /// workspace would be refused for).
    fn persons_folder() -> tempfile::TempDir {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        if std::fs::metadata(dir.path()).unwrap().uid() == 0 {
            std::os::unix::fs::chown(dir.path(), Some(1000), Some(1000)).unwrap();
        }
        dir
    }

    fn env_of(body: &ContainerCreateBody) -> Vec<String> {
        body.env.clone().unwrap_or_default()
    }

    /// The files of a secrets archive: path, mode, content.
    fn files(tar_bytes: &[u8]) -> Vec<(String, u32, String)> {
        let mut a = tar::Archive::new(tar_bytes);
        a.entries()
            .unwrap()
            .map(|e| {
                let mut e = e.unwrap();
                let path = e.path().unwrap().to_string_lossy().into_owned();
                let mode = e.header().mode().unwrap();
                assert_eq!(e.header().uid().unwrap(), 0);
                let mut text = String::new();
                std::io::Read::read_to_string(&mut e, &mut text).unwrap();
                (path, mode, text)
            })
            .collect()
    }

    #[test]
    fn no_key_goes_into_the_environment_only_into_root_only_files() {
        let dir = persons_folder();
        let mut spec = SandboxSpec::new(dir.path());
        spec.env = vec![
            ("LLM_MODEL".into(), "openai/m".into()),
            ("LLM_BASE_URL".into(), "http://127.0.0.1:9/v1".into()),
            ("LLM_API_KEY".into(), "sk-llm-secret".into()),
            ("TANDEM_LOG".into(), "debug".into()),
        ];
        for net in [Network::Host, Network::Bridge] {
            let (body, tar) = offline()
                .create_body(&spec, dir.path(), net, "the-session-key", "n")
                .unwrap();
            let env = env_of(&body);
            assert!(
                env.iter()
                    .all(|e| !e.contains("the-session-key") && !e.contains("sk-llm-secret")),
                "{env:?}"
            );
            assert!(env.iter().all(|e| !e.starts_with("LLM_")), "{env:?}");
            assert!(env.contains(&"TANDEM_LOG=debug".to_owned()));
            let files = files(&tar);
            let key = files
                .iter()
                .find(|f| f.0 == "run/tandem/session-key")
                .unwrap();
            assert_eq!((key.1, key.2.trim()), (0o400, "the-session-key"));
            let settings = files
                .iter()
                .find(|f| f.0 == "var/lib/tandem/settings.json")
                .unwrap();
            assert_eq!(settings.1, 0o600);
            let v: serde_json::Value = serde_json::from_str(&settings.2).unwrap();
            assert_eq!(v["llm"]["api_key"], "sk-llm-secret");
            assert_eq!(v["llm"]["model"], "openai/m");
            // On a bridge the loopback LLM is reached through the host gateway.
            let want = match net {
                Network::Host => "http://127.0.0.1:9/v1",
                Network::Bridge => "http://host.docker.internal:9/v1",
            };
            assert_eq!(v["llm"]["base_url"], want);
            assert!(files.iter().all(|f| f.1 & 0o077 == 0), "{files:?}");
        }
    }

    #[test]
    fn a_credential_in_the_environment_is_refused_by_name() {
        let dir = persons_folder();
        let mut spec = SandboxSpec::new(dir.path());
        spec.env = vec![("GITHUB_TOKEN".into(), "ghp_x".into())];
        let e = offline()
            .create_body(&spec, dir.path(), Network::Host, "k", "n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("GITHUB_TOKEN") && !e.contains("ghp_x"), "{e}");
    }

    #[test]
    fn the_agent_takes_the_workspace_owner_and_a_root_owned_one_needs_an_opt_in() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::chown(dir.path(), Some(2345), Some(2346)).unwrap();
        let spec = SandboxSpec::new(dir.path());
        let (body, _) = offline()
            .create_body(&spec, dir.path(), Network::Host, "k", "n")
            .unwrap();
        let env = env_of(&body);
        assert!(env.contains(&"TANDEM_UID=2345".to_owned()), "{env:?}");
        assert!(env.contains(&"TANDEM_GID=2346".to_owned()), "{env:?}");

        std::os::unix::fs::chown(dir.path(), Some(0), Some(0)).unwrap();
        let e = offline()
            .create_body(&spec, dir.path(), Network::Host, "k", "n")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("owned by root")
                && e.contains("Choose a folder")
                && e.contains("--allow-root"),
            "{e}"
        );
        let mut spec = spec;
        spec.allow_root = true;
        let (body, _) = offline()
            .create_body(&spec, dir.path(), Network::Host, "k", "n")
            .unwrap();
        assert!(env_of(&body).contains(&"TANDEM_ALLOW_ROOT=1".to_owned()));
    }

    #[test]
    fn ports_are_picked_by_docker_or_the_kernel_and_a_bridge_maps_the_host_gateway() {
        let dir = persons_folder();
        let conv = dir.path().join("convs");
        let mut spec = SandboxSpec::new(dir.path());
        spec.conversations = Some(conv.clone());
        let (body, _) = offline()
            .create_body(&spec, dir.path(), Network::Bridge, "k", "n")
            .unwrap();
        let host = body.host_config.unwrap();
        let bindings = host.port_bindings.unwrap();
        let binding = bindings["8000/tcp"].as_ref().unwrap()[0].clone();
        assert_eq!(binding.host_ip.as_deref(), Some("127.0.0.1"));
        assert_eq!(binding.host_port.as_deref(), Some(""));
        assert_eq!(
            host.extra_hosts.unwrap(),
            vec!["host.docker.internal:host-gateway".to_owned()]
        );
        let binds = host.binds.unwrap();
        assert!(
            binds.contains(&format!(
                "{}:/var/lib/tandem/conversations",
                conv.canonicalize().unwrap().display()
            )),
            "{binds:?}"
        );
        let (body, _) = offline()
            .create_body(&spec, dir.path(), Network::Host, "k", "n")
            .unwrap();
        assert!(env_of(&body).contains(&"TANDEM_PORT=0".to_owned()));
        assert_eq!(
            listening_url("noise\nTandem agent server on http://127.0.0.1:41234\nmore"),
            Some("http://127.0.0.1:41234".to_owned())
        );
        assert_eq!(listening_url("Tandem agent server on ftp://x"), None);
    }
}
