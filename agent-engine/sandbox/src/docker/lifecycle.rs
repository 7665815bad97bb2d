//! The Docker provisioner's steps as the [`Supervisor`](crate::Supervisor) drives them: create,
//! start, ready (its server answers `/health`), wait (Docker's own `wait`, which resolves when
//! the container stops, with its exit code: no polling), remove, and the sweep of leftovers.

use std::time::Instant;

use bollard::query_parameters::WaitContainerOptionsBuilder;
use futures::StreamExt;
use futures::future::BoxFuture;

use super::{DockerProvisioner, short};
use crate::{
    BuildOptions, BuildReport, Created, Exit, OnProgress, Provisioner, Sandbox, SandboxError,
    SandboxInfo, SandboxSpec,
};

/// How often `/health` is asked while a sandbox comes up (its server, not Docker).
const HEALTH_EVERY: std::time::Duration = std::time::Duration::from_millis(50);

impl DockerProvisioner {
    /// Asks the server's `/health` until it answers or the health time is up.
    async fn until_healthy(&self, sandbox: &Sandbox) -> Result<(), SandboxError> {
        let started = Instant::now();
        while !self.answers(&sandbox.url).await {
            if started.elapsed() > self.health_timeout {
                return Err(SandboxError::Unhealthy {
                    id: short(&sandbox.id),
                    seconds: self.health_timeout.as_secs(),
                    logs: DockerProvisioner::logs(self, &sandbox.id, 30)
                        .await
                        .unwrap_or_default(),
                });
            }
            tokio::time::sleep(HEALTH_EVERY).await;
        }
        Ok(())
    }

    /// Waits for container `id` to stop (Docker answers the request when it does), then says
    /// why: its exit code, out of memory, or removed.
    async fn until_stopped(&self, id: &str) -> Result<Exit, SandboxError> {
        let opts = WaitContainerOptionsBuilder::default()
            .condition("not-running")
            .build();
        let mut waited = self.docker.wait_container(id, Some(opts));
        let code = match waited.next().await {
            Some(Ok(r)) => Some(r.status_code),
            // bollard reports a non-zero exit as an error carrying the code.
            Some(Err(bollard::errors::Error::DockerContainerWaitError { code, .. })) => Some(code),
            Some(Err(bollard::errors::Error::DockerResponseServerError {
                status_code: 404,
                ..
            })) => None,
            Some(Err(e)) => return Err(self.err(e)),
            None => None,
        };
        // Once, after it stopped: whether the kernel killed it for memory.
        let state = match self.docker.inspect_container(id, None).await {
            Ok(c) => c.state,
            Err(_) => None,
        };
        let Some(state) = state else {
            return Ok(Exit {
                code,
                reason: "its container was removed".into(),
            });
        };
        let mut reason = match code.or(state.exit_code) {
            Some(c) => format!("its server exited with code {c}"),
            None => "it is not running".to_owned(),
        };
        if state.oom_killed == Some(true) {
            reason.push_str(" (killed: out of memory; raise --memory)");
        }
        if let Some(e) = state.error.filter(|e| !e.is_empty()) {
            reason.push_str(&format!(": {e}"));
        }
        Ok(Exit {
            code: code.or(state.exit_code),
            reason,
        })
    }
}

impl Provisioner for DockerProvisioner {
    fn create<'a>(&'a self, spec: &'a SandboxSpec) -> BoxFuture<'a, Result<Created, SandboxError>> {
        Box::pin(self.create_sandbox(spec))
    }

    fn start<'a>(&'a self, created: &'a Created) -> BoxFuture<'a, Result<Sandbox, SandboxError>> {
        Box::pin(self.start_sandbox(created))
    }

    fn ready<'a>(&'a self, sandbox: &'a Sandbox) -> BoxFuture<'a, Result<(), SandboxError>> {
        Box::pin(self.until_healthy(sandbox))
    }

    fn wait<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Exit, SandboxError>> {
        Box::pin(self.until_stopped(id))
    }

    fn remove<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<(), SandboxError>> {
        Box::pin(DockerProvisioner::stop(self, id))
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<SandboxInfo>, SandboxError>> {
        Box::pin(DockerProvisioner::list(self))
    }

    fn logs<'a>(&'a self, id: &'a str, tail: usize) -> BoxFuture<'a, Result<String, SandboxError>> {
        Box::pin(DockerProvisioner::logs(self, id, tail))
    }

    fn sweep(&self, mine: bool) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.clean_leftovers().await;
            if mine {
                self.remove_owned_by_this_process().await;
            }
        })
    }

    fn build_image<'a>(
        &'a self,
        opts: &'a BuildOptions,
        progress: OnProgress<'a>,
    ) -> BoxFuture<'a, Result<BuildReport, SandboxError>> {
        Box::pin(self.build(opts, progress))
    }

    fn url_inside<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Option<String>> {
        Box::pin(async move {
            if self.bridged().await {
                crate::rewrite_loopback(url)
            } else {
                None
            }
        })
    }
}
