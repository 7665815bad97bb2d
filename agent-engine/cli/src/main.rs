//! `tandem`: run, resume and list agent conversations from the command line.
//!
//! `tandem run "task"` starts a conversation in a workspace with the local engine and prints
//! one line per event; on a terminal it asks before risky actions run (per `--confirm`),
//! without one it never blocks. Conversations live in `$TANDEM_HOME/conversations`
//! (default `~/.tandem`), in the OpenHands agent-server layout.

mod checkpoints;
mod drive;
mod exit;
mod move_cmd;
mod move_lossy;
mod remote;
mod render;
mod replay;
mod sandbox;
mod serve;
mod settings;
mod subagents;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use clap::{Parser, Subcommand};
use tandem_host::DemoLlm;
use tandem_llm::Llm;
use tandem_protocol::{AgentSpec, ConversationState, LlmConfig};
use tandem_sdk::{Conversation, ConversationOptions, ConversationStore, Runtime};

use crate::settings::{LlmFlags, SettingsFile, parse_policy, resolve_llm, tandem_home};

#[derive(Debug, Parser)]
#[command(name = "tandem", version, about = "Work alongside a coding agent")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Start a conversation with a task and follow it to the end.
    Run {
        /// The task for the agent.
        task: String,
        /// The workspace folder the agent works in (default: the current folder).
        #[arg(long)]
        workspace: Option<PathBuf>,
        /// When to ask before an action runs: always, risky or never.
        #[arg(long)]
        confirm: Option<String>,
        /// Steps per run before the agent stops.
        #[arg(long, default_value_t = 500)]
        max_iterations: u32,
        /// Pause once the agent's LLM has cost this many US dollars.
        #[arg(long, value_name = "USD")]
        max_budget: Option<f64>,
        /// Give the agent a browser: upstream's browser tools on Chromium (`browser_tool_set`).
        #[arg(long)]
        browser: bool,
        /// Give the agent the tools of MCP servers: a JSON file in the `{"mcpServers": {...}}` form
        /// (with --server or --sandbox their commands run there).
        #[arg(long, value_name = "FILE")]
        mcp_config: Option<PathBuf>,
        /// Give the agent sub-agents: upstream's `task` tool (`task_tool_set`); each task runs
        /// as a child conversation in the same store, several at once when asked together.
        #[arg(long)]
        sub_agents: bool,
        /// Run in a sandbox started for this run and removed after it: `docker`.
        #[arg(long, value_name = "docker", conflicts_with = "server")]
        sandbox: Option<String>,
        #[command(flatten)]
        limits: sandbox::Limits,
        #[command(flatten)]
        llm: LlmFlags,
        #[command(flatten)]
        remote: remote::RemoteFlags,
    },
    /// Continue a conversation (after a stop, an approval wait or a crash).
    Resume {
        /// Conversation id (see `tandem conversations`).
        id: Option<String>,
        /// Continue the most recently updated conversation.
        #[arg(long, conflicts_with = "id")]
        last: bool,
        /// A new message for the agent.
        #[arg(long, short)]
        message: Option<String>,
        /// When to ask before an action runs: always, risky or never.
        #[arg(long)]
        confirm: Option<String>,
        #[command(flatten)]
        llm: LlmFlags,
        #[command(flatten)]
        remote: remote::RemoteFlags,
    },
    /// List conversations: id, status, title, cost.
    Conversations,
    /// List a conversation's checkpoints: what each action (or a person) changed, by event.
    Checkpoints {
        /// Conversation id.
        id: String,
    },
    /// Return a conversation's workspace to how it was at an event (or a checkpoint).
    Rewind {
        /// Conversation id.
        id: String,
        /// The event id (or checkpoint id, e.g. a rewind's undo checkpoint) to go back to.
        #[arg(long)]
        to: String,
        /// Restore the files (the default).
        #[arg(long, conflicts_with_all = ["chat", "both"])]
        code: bool,
        /// Move the conversation's head to the event.
        #[arg(long, conflicts_with = "both")]
        chat: bool,
        /// Both.
        #[arg(long)]
        both: bool,
        /// Also restore files a person edited since (still undoable).
        #[arg(long)]
        all: bool,
        /// Show the diff and what would be restored and skipped; write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Take the checkpoint of the folders `TANDEM_SYSTEM_CHECKPOINTS` names (the sandbox image
    /// runs it when built, so the image's files are the baseline a rewind returns to).
    #[command(hide = true)]
    SystemCheckpoint,
    /// Run the agent server (OpenHands-compatible API, PTY and workspace endpoints, OpenAI gateway).
    Serve(serve::ServeArgs),
    /// Docker sandboxes: build the image, start, stop and list sandboxes.
    #[command(subcommand)]
    Sandbox(sandbox::SandboxCmd),
    /// Replay: export a conversation as one trace file.
    #[command(subcommand)]
    Replay(replay::ReplayCmd),
    /// Move a conversation to another backend (`--to local` or an agent server's URL) with its
    /// events, state and workspace; the source keeps a read-only record of the move.
    Move(move_cmd::MoveArgs),
    /// Print the agent server's OpenAPI document (what `tandem serve` serves at /openapi.json).
    Openapi,
    /// Show the settings in force: TANDEM_HOME, settings.json, the LLM and confirmation policy.
    Settings {
        /// Print nothing; exit 0 when the environment or settings.json names an LLM, else 1.
        #[arg(long)]
        check_llm: bool,
    },
}

fn main() -> ExitCode {
    let mut cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // Before any thread starts: the server may re-execute itself without its credentials.
    if let Cmd::Serve(args) = &mut cli.command
        && let Err(e) = serve::shed_credentials(args)
    {
        eprintln!("error: {e:#}");
        return ExitCode::from(2);
    }
    // The keys this process holds stay out of reach of the agent's commands (same user).
    if let Err(e) = tandem_process::keep_memory_private() {
        eprintln!("warning: could not make this process undumpable: {e}");
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TANDEM_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    match runtime.block_on(dispatch(cli.command)) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

async fn dispatch(cmd: Cmd) -> Result<u8> {
    let cmd = match cmd {
        Cmd::Openapi => {
            print!("{}", tandem_server::routes::openapi_document());
            return Ok(0);
        }
        Cmd::Sandbox(c) => return sandbox::command(c).await,
        other => other,
    };
    let home = tandem_home()?;
    let settings = SettingsFile::load(&home)?;
    let store = ConversationStore::new(home.join("conversations"));
    match cmd {
        Cmd::Run {
            task,
            workspace,
            confirm,
            max_iterations,
            max_budget,
            browser,
            mcp_config,
            sub_agents,
            sandbox,
            limits,
            llm,
            remote,
        } => {
            let mcp_config = mcp_config.as_deref().map(read_mcp_config).transpose()?;
            let elsewhere = match (sandbox, remote.server.clone()) {
                (Some(kind), _) => Some(Elsewhere::Sandbox(kind)),
                (None, Some(url)) => Some(Elsewhere::Server(url)),
                (None, None) => None,
            };
            let extras = AgentExtras {
                browser,
                mcp_config,
                sub_agents,
            };
            if let Some(place) = elsewhere {
                if max_budget.is_some() {
                    bail!(
                        "--max-budget applies to local runs; the agent server (or sandbox) sets its own limits"
                    );
                }
                let req = remote::RunRequest {
                    task,
                    workspace,
                    confirm,
                    max_iterations,
                    extras,
                    llm: &llm,
                };
                return match place {
                    Elsewhere::Sandbox(kind) => sandbox::run(&kind, &limits, req, &settings).await,
                    Elsewhere::Server(url) => remote::run(&remote, &url, req, &settings).await,
                };
            }
            if task.trim().is_empty() {
                bail!("the task is empty: say what the agent should do");
            }
            let workspace = match workspace {
                Some(w) => w,
                None => std::env::current_dir().context("cannot read the current folder")?,
            };
            std::fs::create_dir_all(&workspace)
                .with_context(|| format!("cannot create workspace {}", workspace.display()))?;
            let workspace = workspace
                .canonicalize()
                .with_context(|| format!("cannot resolve workspace {}", workspace.display()))?;
            let policy = parse_policy(
                confirm
                    .as_deref()
                    .or(settings.confirm.as_deref())
                    .unwrap_or("never"),
            )?;
            let (config, demo) = llm_for(&llm, &settings, None)?;
            let llm_client = client(&config)?;
            let mut spec = AgentSpec::default_for(config);
            let mut extras = extras;
            if demo.is_some() {
                // The demo's tour reads a page of its own in the browser (when there is one)
                // and hands a task to a sub-agent: give it what it shows.
                extras.browser |= tandem_browser::chromium_executable().exists();
                extras.sub_agents = true;
            }
            extras.apply(&mut spec);
            let mut options = ConversationOptions::new(spec, workspace.clone());
            let id = uuid::Uuid::new_v4().to_string();
            options.id = Some(id.clone());
            options.confirmation_policy = policy;
            options.max_iterations = max_iterations;
            if let Some(b) = max_budget {
                if !(b.is_finite() && b > 0.0) {
                    bail!("invalid --max-budget {b}: expected a positive number of US dollars");
                }
                options.max_budget_per_task = Some(b);
            }
            warn_local(&workspace, demo.is_some());
            let (runtime, tools) =
                runtime_for(llm_client, &options.agent, &store, &id, &workspace, &home).await?;
            let handle = Conversation::create(&store, options, runtime).await?;
            let recording = tools.record(&handle);
            eprintln!("· conversation {}", handle.id());
            let outcome = drive::follow(&handle, Some(task)).await?;
            handle.close().await?;
            drop(recording);
            tools.close().await;
            drop(demo);
            Ok(outcome.code())
        }
        Cmd::Resume {
            id,
            last,
            message,
            confirm,
            llm,
            remote,
        } => {
            if let Some(url) = remote.server.clone() {
                let _ = llm;
                return remote::resume(&remote, &url, id, last, message, confirm).await;
            }
            let id = match (id, last) {
                (Some(id), _) => id,
                (None, true) => latest(&store)?.context("no conversations yet")?,
                (None, false) => bail!("name a conversation id or pass --last"),
            };
            refuse_moved(&store, &id)?;
            let state = read_state(&store, &id)?;
            let workspace = PathBuf::from(&state.workspace.working_dir);
            let (config, demo) = llm_for(&llm, &settings, Some(&state.agent.llm))?;
            let llm_client = client(&config)?;
            warn_local(&workspace, demo.is_some());
            let (runtime, tools) =
                runtime_for(llm_client, &state.agent, &store, &id, &workspace, &home).await?;
            let (handle, warnings) = Conversation::open(&store, &id, runtime).await?;
            let recording = tools.record(&handle);
            for w in warnings {
                eprintln!("warning: {w}");
            }
            if let Some(c) = confirm.or(settings.confirm.clone()) {
                handle.set_confirmation_policy(parse_policy(&c)?).await?;
            }
            eprintln!(
                "· conversation {} ({})",
                handle.id(),
                handle.status().as_str()
            );
            recap(&handle.events());
            let outcome = drive::follow(&handle, message).await?;
            handle.close().await?;
            drop(recording);
            tools.close().await;
            drop(demo);
            Ok(outcome.code())
        }
        Cmd::Serve(args) => serve::serve(args, &home, &settings).await,
        Cmd::Settings { check_llm } => settings::show(&home, &settings, check_llm),
        Cmd::Conversations => {
            list(&store)?;
            Ok(0)
        }
        Cmd::Checkpoints { id } => {
            checkpoints::list(&store, &id)?;
            Ok(0)
        }
        Cmd::Replay(cmd) => {
            replay::run(cmd, &home, &store).await?;
            Ok(0)
        }
        Cmd::Move(args) => move_cmd::run(args, &home, &settings).await,
        Cmd::SystemCheckpoint => {
            checkpoints::system(&home)?;
            Ok(0)
        }
        Cmd::Rewind {
            id,
            to,
            code: _,
            chat,
            both,
            all,
            dry_run,
        } => {
            let restore = match (chat, both) {
                (true, _) => checkpoints::Restore::Chat,
                (_, true) => checkpoints::Restore::Both,
                _ => checkpoints::Restore::Code,
            };
            checkpoints::rewind(&home, &store, &id, &to, restore, all, dry_run)?;
            Ok(0)
        }
        Cmd::Openapi | Cmd::Sandbox(_) => Ok(0),
    }
}

/// Where a run goes when not on this machine.
enum Elsewhere {
    /// `--sandbox KIND`: a sandbox started for it.
    Sandbox(String),
    /// `--server URL`.
    Server(String),
}

/// The LLM config, plus the demo LLM (kept alive by the caller) when `--llm demo` asked for it.
fn llm_for(
    flags: &LlmFlags,
    settings: &SettingsFile,
    base: Option<&LlmConfig>,
) -> Result<(LlmConfig, Option<DemoLlm>)> {
    match flags.llm.as_deref() {
        Some("demo") => {
            let demo = DemoLlm::start().context("cannot start the demo LLM on 127.0.0.1")?;
            eprintln!(
                "· demo mode: a scripted LLM on {} plays the agent (no provider needed)",
                demo.base_url()
            );
            return Ok((demo.config().clone(), Some(demo)));
        }
        Some(other) => bail!("unknown --llm `{other}`: the only built-in LLM is `demo`"),
        None => {}
    }
    match resolve_llm(flags, settings, base)? {
        Some(c) => Ok((c, None)),
        None => bail!(
            "no LLM configured: pass --model provider/model (and --base-url/--api-key), set LLM_MODEL, LLM_BASE_URL and LLM_API_KEY, or try `--llm demo`"
        ),
    }
}

fn client(config: &LlmConfig) -> Result<Arc<dyn Llm>> {
    Ok(tandem_llm::agent_llm(config.clone())?)
}

/// What `tandem run`'s flags add to the default agent, the same wherever it runs (here, on a
/// server, in a sandbox; MCP servers' commands then run there too).
#[derive(Debug, Default)]
pub struct AgentExtras {
    /// `--browser`: upstream's browser tools.
    pub browser: bool,
    /// `--mcp-config`: the file's MCP servers.
    pub mcp_config: Option<serde_json::Value>,
    /// `--sub-agents`: upstream's `task` tool.
    pub sub_agents: bool,
}

impl AgentExtras {
    /// Adds what the flags asked for to `spec`.
    pub fn apply(&self, spec: &mut AgentSpec) {
        if self.browser {
            spec.tools.extend(browser_specs());
        }
        if self.mcp_config.is_some() {
            spec.mcp_config.clone_from(&self.mcp_config);
        }
        if self.sub_agents {
            spec.tools.push(tandem_protocol::ToolSpec {
                name: tandem_sdk::subagent::TASK_TOOL_SET.into(),
                params: Default::default(),
            });
        }
    }
}

/// The agent spec's entry for the browser: upstream's tools. Not the handoff: a terminal run
/// has no live view through which a person could take over and hand back.
fn browser_specs() -> [tandem_protocol::ToolSpec; 1] {
    [tandem_protocol::ToolSpec {
        name: "browser_tool_set".into(),
        params: Default::default(),
    }]
}

/// What a headless run's tools need beside the runtime: the agent's terminal and browser (the
/// caller closes the browser at the end), recorded for replay.
struct RunTools {
    terminal: Arc<tandem_tools::terminal::TerminalTool>,
    browser: Option<tandem_browser::Browser>,
}

impl RunTools {
    /// Records the conversation's replay lanes as `tandem serve` does (the terminal with each
    /// event marked, the browser after each action), until the returned value is dropped.
    fn record(&self, handle: &tandem_sdk::ConversationHandle) -> tandem_server::ReplayRecording {
        tandem_server::record_replay(handle, &self.terminal, self.browser.clone())
    }

    async fn close(self) {
        if let Some(b) = self.browser {
            b.close().await;
        }
    }
}

/// An error when conversation `id` moved to another backend (`tandem move`): here it is a
/// read-only record.
fn refuse_moved(store: &ConversationStore, id: &str) -> Result<()> {
    let dir = store.dir_for(id)?;
    let Ok(bytes) = std::fs::read(dir.join(tandem_capsule::MOVED_FILE)) else {
        return Ok(());
    };
    let to: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    bail!(
        "conversation {id} moved to {} (as {}): here it is a read-only record; resume it there",
        to["url"].as_str().unwrap_or("another backend"),
        to["conversation_id"].as_str().unwrap_or(id)
    )
}

/// The tools of `spec` for conversation `id`, made through the server's catalog as `tandem
/// serve` makes them, with the terminal and the browser they use.
async fn runtime_for(
    llm: Arc<dyn Llm>,
    spec: &AgentSpec,
    store: &ConversationStore,
    id: &str,
    workspace: &std::path::Path,
    home: &std::path::Path,
) -> Result<(Runtime, RunTools)> {
    let slot = tandem_browser::BrowserSlot::new();
    let terminal = Arc::new(tandem_tools::terminal::TerminalTool::new());
    let mut env = tandem_sdk::ToolEnv::new(workspace);
    env.conversation_id = id.to_owned();
    env.conversation_dir = Some(store.dir_for(id)?);
    // A shell brought from another backend starts where it was.
    terminal.resume_from(store.dir_for(id)?.join(tandem_tools::terminal::RESUME_FILE));
    env.llm = Some(Arc::clone(&llm));
    let env = env.with(subagents::local(store, &llm));
    let mcp_warnings = tandem_mcp::McpWarnings(Arc::new(|w: &str| eprintln!("warning: {w}")));
    let env = env
        .with(Arc::clone(&terminal))
        .with(slot.clone())
        .with(mcp_warnings);
    let tools = tandem_tools::resolve_tools(spec, &tandem_host::catalog(), env)
        .await
        .map_err(|e| anyhow::anyhow!("the agent's {}: {e}", e.path.join(".")))?;
    let checkpoints = match tandem_checkpoint::Store::open(home, workspace) {
        Ok(store) => {
            let off = tandem_host::env::var("TANDEM_CHECKPOINTS_OUTSIDE")
                .is_some_and(|v| matches!(v.trim(), "off" | "0" | "false"));
            if !off {
                store.watch_outside(tandem_checkpoint::outside::default_roots());
            }
            Some(store)
        }
        Err(e) => {
            eprintln!("warning: actions are not checkpointed: {e}");
            None
        }
    };
    let runtime = Runtime {
        llm,
        tools,
        checkpoints,
        run_gate: None,
    };
    Ok((
        runtime,
        RunTools {
            terminal,
            browser: slot.get(),
        },
    ))
}

/// The `--mcp-config` file: JSON in the `{"mcpServers": {...}}` form.
fn read_mcp_config(path: &std::path::Path) -> Result<serde_json::Value> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read --mcp-config {}", path.display()))?;
    let config: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("--mcp-config {} is not JSON", path.display()))?;
    tandem_mcp::parse_config(&config)
        .map_err(|e| anyhow::anyhow!("--mcp-config {}: {}", path.display(), e.message))?;
    Ok(config)
}

fn warn_local(workspace: &std::path::Path, demo: bool) {
    let _ = demo;
    eprintln!(
        "warning: local mode: the agent runs commands on this machine, in {}",
        workspace.display()
    );
}

/// Reprints the turn in progress: from the last user message on.
fn recap(events: &[tandem_protocol::Event]) {
    let from = events
        .iter()
        .rposition(|e| matches!(e, tandem_protocol::Event::Message(m) if m.base.source == tandem_protocol::Source::User))
        .unwrap_or(0);
    for e in &events[from..] {
        if let Some(line) = render::line(e) {
            println!("{line}");
        }
    }
}

fn read_state(store: &ConversationStore, id: &str) -> Result<ConversationState> {
    let path = store.dir_for(id)?.join("base_state.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("conversation {id} not found ({})", path.display()))?;
    serde_json::from_str(&text)
        .with_context(|| format!("corrupt conversation state {}", path.display()))
}

/// Conversations, most recently updated first.
fn by_recent(store: &ConversationStore) -> Vec<tandem_sdk::ConversationMeta> {
    let mut metas = store.list();
    metas.sort_by_key(|m| std::cmp::Reverse(m.updated_at));
    metas
}

fn latest(store: &ConversationStore) -> Result<Option<String>> {
    Ok(by_recent(store).into_iter().next().map(|m| m.id))
}

fn list(store: &ConversationStore) -> Result<()> {
    let metas = by_recent(store);
    if metas.is_empty() {
        println!("no conversations yet; start one with: tandem run \"task\"");
        return Ok(());
    }
    println!(
        "{:<36}  {:<24}  {:>9}  {:<19}  TITLE",
        "ID", "STATUS", "COST", "UPDATED"
    );
    for m in metas {
        let (status, cost) = match read_state(store, &m.id) {
            Ok(s) => (s.execution_status.as_str().to_owned(), s.stats.total_cost()),
            Err(_) => ("unreadable".to_owned(), 0.0),
        };
        let id = uuid_dashed(&m.id);
        let updated = m.updated_at.format("%Y-%m-%d %H:%M:%S").to_string();
        let title = m.title.as_deref().unwrap_or("");
        println!(
            "{id:<36}  {status:<24}  {:>9}  {updated:<19}  {}",
            format!("${cost:.4}"),
            render::first_line(title, 60)
        );
    }
    Ok(())
}

fn uuid_dashed(id: &str) -> String {
    uuid_parse(id).unwrap_or_else(|| id.to_owned())
}

fn uuid_parse(id: &str) -> Option<String> {
    let hex: String = id.chars().filter(|c| *c != '-').collect();
    (hex.len() == 32 && hex.chars().all(|c| c.is_ascii_hexdigit())).then(|| {
        format!(
            "{}-{}-{}-{}-{}",
            &hex[0..8],
            &hex[8..12],
            &hex[12..16],
            &hex[16..20],
            &hex[20..32]
        )
    })
}
