//! The Docker provisioner: the sandbox image started as a container through the Docker API
//! (bollard), on the daemon `DOCKER_HOST` names.
//!
//! Networking: where the daemon has its default bridge network the container gets it and its
//! server port is published on 127.0.0.1 only; where it has none (a daemon started with
//! `--bridge=none`, as on build machines without iptables) the container shares the host's
//! network and its server binds 127.0.0.1 on a free port. Either way the server is reachable
//! from this machine only, and the VNC server inside stays on loopback behind the server's
//! authenticated proxy.

mod build;
mod leftovers;
mod lifecycle;

use std::collections::HashMap;
use std::net::{Ipv4Addr, TcpListener};
use std::path::Path;
use std::time::Duration;

use bollard::Docker;
use bollard::models::{ContainerCreateBody, HostConfig, PortBinding};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, ListContainersOptionsBuilder, LogsOptionsBuilder,
    RemoveContainerOptionsBuilder,
};
use futures::StreamExt;

pub use build::{BASE_IMAGE, BuildOptions, BuildReport};

use crate::limits::{nano_cpus, parse_memory};
use crate::{
    Created, Health, Sandbox, SandboxError, SandboxInfo, SandboxSpec, WORKSPACE_IN_SANDBOX,
};

/// The sandbox image `tandem sandbox build` makes.
pub const IMAGE: &str = "tandem-sandbox:latest";
/// The label every sandbox container carries (value `1`).
pub const SANDBOX_LABEL: &str = "dev.tandem.sandbox";
const URL_LABEL: &str = "dev.tandem.sandbox.url";
const WORKSPACE_LABEL: &str = "dev.tandem.sandbox.workspace";
/// `<boot id>/<pid>` of the process a sandbox belongs to, when it must not outlive it.
const OWNER_LABEL: &str = "dev.tandem.sandbox.owner";
/// The server's port inside a bridged container.
const SERVER_PORT_INSIDE: u16 = 8000;
const VNC_PORT_INSIDE: u16 = 5900;

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

    fn create_body(
        &self,
        spec: &SandboxSpec,
        workspace: &Path,
        net: Network,
        port: u16,
        key: &str,
        name: &str,
    ) -> Result<ContainerCreateBody, SandboxError> {
        let url = format!("http://127.0.0.1:{port}");
        let (uid, gid) = owner_of(workspace);
        let (server_port, vnc_port, bind) = match net {
            Network::Host => (port, free_port()?, "127.0.0.1"),
            Network::Bridge => (SERVER_PORT_INSIDE, VNC_PORT_INSIDE, "0.0.0.0"),
        };
        let mut env = vec![
            format!("TANDEM_HOST={bind}"),
            format!("TANDEM_PORT={server_port}"),
            format!("TANDEM_VNC_PORT={vnc_port}"),
            format!("TANDEM_SESSION_KEYS={key}"),
            format!("TANDEM_UID={uid}"),
            format!("TANDEM_GID={gid}"),
        ];
        env.extend(spec.env.iter().map(|(k, v)| format!("{k}={v}")));
        let mut labels = HashMap::from([
            (SANDBOX_LABEL.to_owned(), "1".to_owned()),
            (URL_LABEL.to_owned(), url),
            (
                WORKSPACE_LABEL.to_owned(),
                workspace.to_string_lossy().into_owned(),
            ),
        ]);
        if spec.owned_by_this_process {
            labels.insert(OWNER_LABEL.to_owned(), leftovers::this_process());
        }
        let memory = spec.memory.as_deref().map(parse_memory).transpose()?;
        let mut host = HostConfig {
            binds: Some(vec![format!(
                "{}:{WORKSPACE_IN_SANDBOX}",
                workspace.to_string_lossy()
            )]),
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
                host.port_bindings = Some(HashMap::from([(
                    format!("{SERVER_PORT_INSIDE}/tcp"),
                    Some(vec![PortBinding {
                        host_ip: Some("127.0.0.1".into()),
                        host_port: Some(port.to_string()),
                    }]),
                )]));
            }
        }
        Ok(ContainerCreateBody {
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
        })
    }
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
        let port = match spec.port {
            Some(p) => {
                if TcpListener::bind((Ipv4Addr::LOCALHOST, p)).is_err() {
                    return Err(SandboxError::PortTaken { port: p });
                }
                p
            }
            None => free_port()?,
        };
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
        let body = self.create_body(spec, &workspace, net, port, &key, &name)?;
        let opts = CreateContainerOptionsBuilder::default().name(&name).build();
        let created = self
            .docker
            .create_container(Some(opts), body)
            .await
            .map_err(|e| self.err(e))?;
        Ok(Created {
            id: created.id,
            session_key: key,
            url: Some(format!("http://127.0.0.1:{port}")),
            port: Some(port),
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
        Ok(Sandbox {
            id: id.clone(),
            url: created.url.clone().unwrap_or_default(),
            session_key: created.session_key.clone(),
            workspace: WORKSPACE_IN_SANDBOX.to_owned(),
        })
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
        Ok(found
            .into_iter()
            .map(|c| {
                let labels = c.labels.unwrap_or_default();
                SandboxInfo {
                    id: c.id.unwrap_or_default(),
                    name: c
                        .names
                        .and_then(|n| n.first().map(|n| n.trim_start_matches('/').to_owned()))
                        .unwrap_or_default(),
                    image: c.image.unwrap_or_default(),
                    state: c.state.map(|s| s.to_string()).unwrap_or_default(),
                    url: labels.get(URL_LABEL).cloned(),
                    workspace: labels.get(WORKSPACE_LABEL).cloned(),
                }
            })
            .collect())
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
        let labels = self.labels_of(id).await?;
        match labels.get(URL_LABEL) {
            Some(url) if self.answers(url).await => Ok(Health::Healthy),
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

/// A port free on 127.0.0.1 right now.
fn free_port() -> Result<u16, SandboxError> {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(SandboxError::io("finding a free port on 127.0.0.1"))
}

/// The owner of the workspace, so the sandbox's user can write what the person can read.
fn owner_of(dir: &Path) -> (u32, u32) {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir)
        .map(|m| (m.uid(), m.gid()))
        .unwrap_or((1000, 1000))
}
