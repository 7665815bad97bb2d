//! `tandem sandbox build|start|stop|ls|logs` and `tandem run --sandbox docker`: the Docker
//! sandbox (`tandem_workspace`) from the command line. Progress goes to stderr; what a script
//! reads (the build report, the started sandbox, the list) is JSON on stdout, a line each.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use tandem_workspace::{
    BASE_IMAGE, BuildOptions, DockerProvisioner, IMAGE, Progress, Provisioner, SandboxSpec,
    forwarded_env,
};

use crate::remote::{self, RemoteFlags, RunRequest};
use crate::settings::SettingsFile;

/// `tandem sandbox ...`.
#[derive(Debug, clap::Subcommand)]
pub enum SandboxCmd {
    /// Build the sandbox image (tandem-sandbox:latest) with this tandem binary inside; cached
    /// when nothing changed. Makes the offline base image with debootstrap first when missing.
    Build {
        /// The image to build FROM: the offline base (default) or, with a registry,
        /// debian:bookworm-slim.
        #[arg(long, default_value = BASE_IMAGE)]
        base: String,
        /// The tag of the image.
        #[arg(long, default_value = IMAGE)]
        tag: String,
        /// Ignore Docker's build cache.
        #[arg(long)]
        no_cache: bool,
        /// The tandem binary to put in the image (default: this one).
        #[arg(long)]
        binary: Option<PathBuf>,
    },
    /// Start a sandbox with a workspace folder mounted; prints
    /// {"id","url","session_key","workspace"} once its server answers.
    Start {
        /// The folder the agent works in (mounted at /workspace).
        #[arg(long)]
        workspace: PathBuf,
        #[command(flatten)]
        limits: Limits,
        /// Host port of the sandbox's server (default: a free one).
        #[arg(long)]
        port: Option<u16>,
        /// The image to start.
        #[arg(long, default_value = IMAGE)]
        image: String,
    },
    /// Stop and remove sandboxes.
    Stop {
        /// Sandbox ids (or names) from `tandem sandbox ls`.
        #[arg(required = true)]
        ids: Vec<String>,
    },
    /// List sandboxes, one JSON line each.
    Ls,
    /// Print a sandbox's last lines of output.
    Logs {
        /// The sandbox id.
        id: String,
        /// How many lines.
        #[arg(long, default_value_t = 100)]
        tail: usize,
    },
}

/// Limits and environment of a sandbox.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct Limits {
    /// Memory limit (512m, 2g); the agent's commands are killed beyond it, its server goes on.
    #[arg(long)]
    pub memory: Option<String>,
    /// CPUs (0.5, 1, 2).
    #[arg(long)]
    pub cpus: Option<f64>,
    /// Most processes at once.
    #[arg(long)]
    pub pids: Option<i64>,
    /// Environment for the sandbox: NAME=VALUE, or NAME to pass this shell's value (repeatable).
    /// LLM settings and provider keys are passed on without asking.
    #[arg(long = "env", value_name = "NAME[=VALUE]")]
    pub env: Vec<String>,
}

/// The LLM settings a sandbox gets from this environment besides [`tandem_workspace::FORWARDED_ENV`]: the
/// default profile of its server.
const LLM_ENV: [&str; 3] = ["LLM_MODEL", "LLM_BASE_URL", "LLM_API_KEY"];

impl Limits {
    fn spec(&self, workspace: PathBuf, image: String, port: Option<u16>) -> Result<SandboxSpec> {
        let mut spec = SandboxSpec::new(workspace);
        spec.image = image;
        spec.memory = self.memory.clone();
        spec.cpus = self.cpus;
        spec.pids = self.pids;
        spec.port = port;
        spec.env = forwarded_env(|name| std::env::var(name).ok());
        for name in LLM_ENV {
            if let Ok(v) = std::env::var(name)
                && !v.is_empty()
            {
                spec.env.push((name.to_owned(), v));
            }
        }
        for e in &self.env {
            match e.split_once('=') {
                Some((k, v)) if !k.is_empty() => spec.env.push((k.to_owned(), v.to_owned())),
                Some(_) => bail!("invalid --env {e:?}: expected NAME=VALUE or NAME"),
                None => match std::env::var(e) {
                    Ok(v) => spec.env.push((e.clone(), v)),
                    Err(_) => bail!("--env {e}: this shell has no variable {e} to pass on"),
                },
            }
        }
        Ok(spec)
    }
}

fn show_progress(p: Progress) {
    match p {
        Progress::Building(line) => eprintln!("  {line}"),
        Progress::Starting => eprintln!("· starting the sandbox"),
        Progress::WaitingForHealth => eprintln!("· waiting for its server"),
        Progress::Ready => eprintln!("· sandbox ready"),
    }
}

async fn provisioner() -> Result<DockerProvisioner> {
    Ok(DockerProvisioner::connect().await?)
}

/// `tandem sandbox ...`; exit 1 for a sandbox error (printed), as other commands do.
pub async fn command(cmd: SandboxCmd) -> Result<u8> {
    match run_command(cmd).await {
        Ok(()) => Ok(0),
        Err(e) => {
            eprintln!("error: {e:#}");
            Ok(1)
        }
    }
}

async fn run_command(cmd: SandboxCmd) -> Result<()> {
    let docker = provisioner().await?;
    match cmd {
        SandboxCmd::Build {
            base,
            tag,
            no_cache,
            binary,
        } => {
            let binary = match binary {
                Some(b) => b,
                None => std::env::current_exe().context("cannot find this tandem binary")?,
            };
            let opts = BuildOptions {
                binary,
                base,
                tag,
                no_cache,
            };
            let report = docker.build(&opts, &show_progress).await?;
            eprintln!(
                "· built {} ({:.0} MB) in {:.1} s{}",
                report.tag,
                report.size_bytes as f64 / 1e6,
                report.seconds,
                if report.cached {
                    ", all from cache"
                } else {
                    ""
                }
            );
            println!("{}", serde_json::to_string(&report)?);
        }
        SandboxCmd::Start {
            workspace,
            limits,
            port,
            image,
        } => {
            std::fs::create_dir_all(&workspace)
                .with_context(|| format!("cannot create workspace {}", workspace.display()))?;
            let mut spec = limits.spec(workspace, image, port)?;
            // It outlives this command: `tandem sandbox stop` removes it.
            spec.owned_by_this_process = false;
            let sb = docker.start(&spec, &show_progress).await?;
            println!("{}", serde_json::to_string(&sb)?);
        }
        SandboxCmd::Stop { ids } => {
            let mut failed = Vec::new();
            for id in ids {
                match docker.stop(&id).await {
                    Ok(()) => eprintln!("· removed {id}"),
                    Err(e) => failed.push(format!("{id}: {e}")),
                }
            }
            if !failed.is_empty() {
                bail!("{}", failed.join("\n"));
            }
        }
        SandboxCmd::Ls => {
            for s in docker.list().await? {
                println!("{}", serde_json::to_string(&s)?);
            }
        }
        SandboxCmd::Logs { id, tail } => print!("{}", docker.logs(&id, tail).await?),
    }
    Ok(())
}

/// `tandem run --sandbox docker`: the run of `req` on a sandbox started for it, removed at the
/// end, on error and on Ctrl-C.
pub async fn run(
    kind: &str,
    limits: &Limits,
    mut req: RunRequest<'_>,
    settings: &SettingsFile,
) -> Result<u8> {
    if kind != "docker" {
        bail!("unknown --sandbox `{kind}`: the only sandbox is `docker`");
    }
    if req.task.trim().is_empty() {
        bail!("the task is empty: say what the agent should do");
    }
    let workspace = match req.workspace.take() {
        Some(w) => w,
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    std::fs::create_dir_all(&workspace)
        .with_context(|| format!("cannot create workspace {}", workspace.display()))?;
    let spec = limits.spec(workspace.clone(), IMAGE.to_owned(), None)?;
    let docker = match provisioner().await {
        Ok(d) => Arc::new(d),
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(1);
        }
    };
    let removing = Arc::clone(&docker);
    crate::exit::on_quit(move || {
        let d = Arc::clone(&removing);
        Box::pin(async move { d.remove_owned_by_this_process().await })
    });
    let started = tokio::select! {
        r = docker.start(&spec, &show_progress) => r,
        _ = tokio::signal::ctrl_c() => {
            eprintln!("\n‖ interrupted while starting the sandbox");
            crate::exit::quit(130).await
        }
    };
    let sb = match started {
        Ok(sb) => sb,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(1);
        }
    };
    eprintln!(
        "· sandbox {} ({}), {} mounted at {}",
        &sb.id[..12.min(sb.id.len())],
        sb.url,
        workspace.display(),
        sb.workspace
    );
    let flags = RemoteFlags {
        server: Some(sb.url.clone()),
        session_key: Some(sb.session_key.clone()),
    };
    req.workspace = Some(PathBuf::from(&sb.workspace));
    // A sandbox that dies mid-run (out of memory, killed) ends the run at once with the reason,
    // rather than leaving the client waiting for a server that is gone.
    let outcome = tokio::select! {
        r = remote::run(&flags, &sb.url, req, settings) => r,
        reason = died(&docker, &sb.id) => {
            let logs = docker.logs(&sb.id, 20).await.unwrap_or_default();
            eprintln!("error: the sandbox stopped during the run: {reason}\n--- its last output ---\n{logs}");
            Ok(1)
        }
    };
    match docker.stop(&sb.id).await {
        Ok(()) => eprintln!("· sandbox removed"),
        Err(e) => eprintln!("warning: the sandbox {} was not removed: {e}", sb.id),
    }
    outcome
}

/// Resolves once sandbox `id` is no longer running, with the reason.
async fn died(docker: &DockerProvisioner, id: &str) -> String {
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        if let Some(reason) = docker.stopped_reason_of(id).await {
            return reason;
        }
    }
}
