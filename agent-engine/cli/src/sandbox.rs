//! `tandem sandbox build|start|stop|ls|logs` and `tandem run --sandbox docker`: sandboxes
//! (`tandem_sandbox`, through its `Provisioner` trait: Docker today) from the command line.
//! Progress goes to stderr; what a script reads (the build report, the started sandbox, the
//! list) is JSON on stdout, a line each.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use tandem_sandbox::{
    BASE_IMAGE, BuildOptions, CancellationToken, ConnectOptions, Exit, IMAGE, Progress, Running,
    SandboxSpec, Supervisor, conversations_dir, forwarded_env,
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
        #[arg(long, default_value = IMAGE, env = IMAGE_ENV)]
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
    /// LLM settings are passed on without asking (the key in a file only the sandbox's server
    /// reads); a variable named like a credential (*_TOKEN, *_API_KEY, ...) is refused.
    #[arg(long = "env", value_name = "NAME[=VALUE]")]
    pub env: Vec<String>,
    /// Start even when the workspace is owned by root: the agent then runs as root inside the
    /// sandbox (it takes the workspace owner's user; nothing changes owner), where it can read
    /// the server's keys.
    #[arg(long)]
    pub allow_root: bool,
    /// Keep the sandbox's conversations inside its container (removed with it) instead of in
    /// $TANDEM_HOME/sandboxes/<workspace>/conversations on this machine.
    #[arg(long)]
    pub ephemeral: bool,
}

/// The variable naming another sandbox image to start (a tag of one's own while trying a change
/// of the image); `tandem sandbox start --image` wins over it.
pub(crate) const IMAGE_ENV: &str = "TANDEM_SANDBOX_IMAGE";

/// The LLM settings a sandbox gets from this environment besides [`tandem_sandbox::FORWARDED_ENV`]: the
/// default profile of its server.
const LLM_ENV: [&str; 3] = ["LLM_MODEL", "LLM_BASE_URL", "LLM_API_KEY"];

impl Limits {
    pub(crate) fn spec(
        &self,
        workspace: PathBuf,
        image: String,
        port: Option<u16>,
    ) -> Result<SandboxSpec> {
        let mut spec = SandboxSpec::new(workspace);
        spec.image = image;
        spec.memory = self.memory.clone();
        spec.cpus = self.cpus;
        spec.pids = self.pids;
        spec.port = port;
        spec.allow_root = self.allow_root;
        // Conversations live on this machine: a new sandbox on the same workspace resumes them.
        let canonical = spec
            .workspace
            .canonicalize()
            .unwrap_or_else(|_| spec.workspace.clone());
        if !self.ephemeral {
            spec.conversations = Some(conversations_dir(
                &crate::settings::tandem_home()?,
                &canonical,
            ));
        }
        spec.env = forwarded_env(|name| std::env::var(name).ok());
        for name in LLM_ENV {
            if let Some(v) = tandem_host::env::var(name) {
                spec.env.push((name.to_owned(), v));
            }
        }
        // The provider's variable (OPENAI_API_KEY, ...) as the LLM's key: it goes with the LLM
        // settings into the server's file, never into the container's environment.
        if !spec.env.iter().any(|(k, _)| k == "LLM_API_KEY")
            && let Some(model) = tandem_host::env::var("LLM_MODEL")
            && let Some(key) = tandem_host::env::env_key_for(&model)
        {
            spec.env.push(("LLM_API_KEY".to_owned(), key));
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

/// Starts `spec`, showing its progress; a Ctrl-C meanwhile cancels the start (what it created
/// is removed, waited for up to [`CANCEL_LIMIT`]) and answers `None`.
pub(crate) async fn start_unless_interrupted(
    sandboxes: &Supervisor,
    spec: &SandboxSpec,
) -> Option<Result<Running, tandem_sandbox::SandboxError>> {
    let cancel = CancellationToken::new();
    let start = sandboxes.start(spec, &show_progress, &cancel);
    tokio::pin!(start);
    tokio::select! {
        r = &mut start => Some(r),
        _ = tokio::signal::ctrl_c() => {
            eprintln!("\n‖ interrupted: removing the sandbox being started");
            cancel.cancel();
            let _ = tokio::time::timeout(CANCEL_LIMIT, start).await;
            None
        }
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

/// The sandboxes of kind `kind` (`docker`, or another of [`tandem_sandbox::PROVISIONERS`]).
pub(crate) async fn sandboxes_of(kind: &str) -> Result<Supervisor> {
    let provisioner = tandem_sandbox::connect(kind, &ConnectOptions::default()).await?;
    Ok(Supervisor::new(provisioner))
}

/// How long a run that failed waits for Docker to say whether its sandbox died under it.
const DEATH_NOTICE: std::time::Duration = std::time::Duration::from_secs(2);

/// How long a start interrupted by Ctrl-C may take to reach its next step and remove what it
/// created before the command quits anyway (the next start's sweep removes the rest).
const CANCEL_LIMIT: std::time::Duration = std::time::Duration::from_secs(10);

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
    let sandboxes = sandboxes_of("docker").await?;
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
            let report = sandboxes.build_image(&opts, &show_progress).await?;
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
            if let Some((_, url)) = spec.env.iter().find(|(k, _)| k == "LLM_BASE_URL")
                && let Some(to) = sandboxes.url_inside(url).await
            {
                // The provisioner rewrites it in the server's settings; said here.
                eprintln!(
                    "· bridge network: the sandbox reaches the LLM at {url} as {to} (host-gateway)"
                );
            }
            let Some(started) = start_unless_interrupted(&sandboxes, &spec).await else {
                bail!("interrupted");
            };
            let sb = started?.detach();
            println!("{}", serde_json::to_string(&sb)?);
        }
        SandboxCmd::Stop { ids } => {
            let mut failed = Vec::new();
            for id in ids {
                match sandboxes.stop(&id).await {
                    Ok(()) => eprintln!("· removed {id}"),
                    Err(e) => failed.push(format!("{id}: {e}")),
                }
            }
            if !failed.is_empty() {
                bail!("{}", failed.join("\n"));
            }
        }
        SandboxCmd::Ls => {
            for s in sandboxes.list().await? {
                println!("{}", serde_json::to_string(&s)?);
            }
        }
        SandboxCmd::Logs { id, tail } => print!("{}", sandboxes.logs(&id, tail).await?),
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
    if req.task.trim().is_empty() {
        bail!("the task is empty: say what the agent should do");
    }
    let workspace = match req.workspace.take() {
        Some(w) => w,
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    std::fs::create_dir_all(&workspace)
        .with_context(|| format!("cannot create workspace {}", workspace.display()))?;
    let image = std::env::var(IMAGE_ENV)
        .ok()
        .filter(|i| !i.trim().is_empty())
        .unwrap_or_else(|| IMAGE.to_owned());
    let mut spec = limits.spec(workspace.clone(), image, None)?;
    let sandboxes = match sandboxes_of(kind).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e:#}");
            return Ok(1);
        }
    };
    // On a bridge the sandbox reaches this machine as host.docker.internal: a loopback LLM
    // is asked for there (and must listen on the bridge's gateway address, not 127.0.0.1 only).
    // The LLM of the command line too: the sandbox's server keeps it (key included) in its
    // settings file, so a conversation resumed in a later sandbox finds its key again.
    for (name, value) in [
        ("LLM_MODEL", &req.llm.model),
        ("LLM_BASE_URL", &req.llm.base_url),
        ("LLM_API_KEY", &req.llm.api_key),
    ] {
        if let Some(v) = value.as_ref().filter(|v| !v.is_empty()) {
            spec.env.retain(|(k, _)| k != name);
            spec.env.push((name.to_owned(), v.clone()));
        }
    }
    // A model of the command line without a key: its provider's variable, as the LLM's key.
    if !spec.env.iter().any(|(k, _)| k == "LLM_API_KEY")
        && let Some(model) = &req.llm.model
        && let Some(key) = tandem_host::env::env_key_for(model)
    {
        spec.env.push(("LLM_API_KEY".to_owned(), key));
    }
    let mut bridged_flags = None;
    let base = req
        .llm
        .base_url
        .clone()
        .or_else(|| tandem_host::env::var("LLM_BASE_URL"))
        .or_else(|| settings.llm.base_url.clone());
    if let Some(from) = base
        && let Some(to) = sandboxes.url_inside(&from).await
    {
        eprintln!("· bridge network: the sandbox reaches the LLM at {from} as {to} (host-gateway)");
        let mut flags = req.llm.clone();
        flags.base_url = Some(to.clone());
        spec.env.retain(|(k, _)| k != "LLM_BASE_URL");
        spec.env.push(("LLM_BASE_URL".to_owned(), to));
        bridged_flags = Some(flags);
    }
    let mut req = match &bridged_flags {
        Some(flags) => RunRequest {
            task: req.task,
            workspace: req.workspace,
            confirm: req.confirm,
            max_iterations: req.max_iterations,
            extras: req.extras,
            llm: flags,
        },
        None => req,
    };
    // A second Ctrl-C quits at once: the start under way is cancelled and whatever this run
    // created is removed first.
    let quitting = sandboxes.clone();
    crate::exit::on_quit(move || {
        let s = quitting.clone();
        Box::pin(async move { s.shutdown().await })
    });
    let Some(started) = start_unless_interrupted(&sandboxes, &spec).await else {
        crate::exit::quit(130).await
    };
    let running = match started {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(1);
        }
    };
    let sb = running.sandbox().clone();
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
    // A sandbox that dies mid-run (out of memory, killed) ends the run at once with the reason
    // (Docker tells its exit), rather than leaving the client waiting for a server that is gone.
    let outcome = tokio::select! {
        r = remote::run(&flags, &sb.url, req, settings) => {
            // A server killed mid-run resets the client's connection, often before Docker
            // tells that its container stopped: a failed run waits a moment for that notice,
            // so the reason is still given.
            if matches!(r, Ok(0)) {
                r
            } else {
                match tokio::time::timeout(DEATH_NOTICE, running.exited()).await {
                    Ok(exit) => died(&running, exit).await,
                    Err(_) => r,
                }
            }
        }
        exit = running.exited() => died(&running, exit).await,
    };
    match running.stop().await {
        Ok(()) => eprintln!("· sandbox removed"),
        Err(e) => eprintln!("warning: the sandbox {} was not removed: {e}", sb.id),
    }
    outcome
}

/// Says why the sandbox stopped during a run, with its last output: the run's exit code 1.
async fn died(running: &Running, exit: Exit) -> Result<u8> {
    let logs = running.logs(20).await.unwrap_or_default();
    eprintln!(
        "error: the sandbox stopped during the run: {}\n--- its last output ---\n{logs}",
        exit.reason
    );
    Ok(1)
}
