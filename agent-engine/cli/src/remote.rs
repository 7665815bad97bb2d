//! `tandem run --server URL` and `tandem resume --server URL ID`: the same conversation, driven
//! on an agent server (ours or upstream's) through `tandem_sdk::remote`, followed by the same
//! loop as local runs (`drive::follow`): the same line-per-event output, approval prompts and
//! exit codes.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use tandem_protocol::AgentSpec;
use tandem_sdk::remote::{RemoteConversationOptions, RemoteWorkspace};

use crate::drive;
use crate::settings::{LlmFlags, SettingsFile, parse_policy};

/// Where the agent server is.
#[derive(Debug, Default, Clone, clap::Args)]
pub struct RemoteFlags {
    /// Run on this agent server instead of locally (`http://host:port`; env TANDEM_SERVER_URL).
    #[arg(long, env = "TANDEM_SERVER_URL")]
    pub server: Option<String>,
    /// The server's session key, sent as X-Session-API-Key (env TANDEM_SESSION_KEY).
    #[arg(long, env = "TANDEM_SESSION_KEY", hide_env_values = true)]
    pub session_key: Option<String>,
}

/// What `tandem run` asked for.
#[derive(Debug)]
pub struct RunRequest<'a> {
    /// The task.
    pub task: String,
    /// The working directory on the server (default: the current folder's path).
    pub workspace: Option<PathBuf>,
    /// `--confirm`.
    pub confirm: Option<String>,
    /// `--max-iterations`.
    pub max_iterations: u32,
    /// `--browser`, `--mcp-config`, `--sub-agents`.
    pub extras: super::AgentExtras,
    /// The LLM flags.
    pub llm: &'a LlmFlags,
}

async fn connect(flags: &RemoteFlags, url: &str, working_dir: String) -> Result<RemoteWorkspace> {
    RemoteWorkspace::connect(url, flags.session_key.clone(), working_dir)
        .await
        .map_err(|e| anyhow::anyhow!(e))
}

/// `tandem run --server URL "task"`.
pub async fn run(
    flags: &RemoteFlags,
    url: &str,
    req: RunRequest<'_>,
    settings: &SettingsFile,
) -> Result<u8> {
    if req.task.trim().is_empty() {
        bail!("the task is empty: say what the agent should do");
    }
    let dir = match req.workspace {
        Some(w) if w.is_absolute() => w,
        Some(w) => std::env::current_dir()
            .context("cannot read the current folder")?
            .join(w),
        None => std::env::current_dir().context("cannot read the current folder")?,
    };
    let policy = parse_policy(
        req.confirm
            .as_deref()
            .or(settings.confirm.as_deref())
            .unwrap_or("never"),
    )?;
    let (config, demo) = super::llm_for(req.llm, settings, None)?;
    let ws = match connect(flags, url, dir.to_string_lossy().into_owned()).await {
        Ok(ws) => ws,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(1);
        }
    };
    let mut spec = AgentSpec::default_for(config);
    req.extras.apply(&mut spec);
    let mut options = RemoteConversationOptions::new(spec);
    options.confirmation_policy = policy;
    options.max_iterations = req.max_iterations;
    let conv = match ws.create_conversation(&options).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(1);
        }
    };
    eprintln!(
        "· conversation {} on {url} (the agent runs commands there, in {})",
        conv.id(),
        ws.working_dir()
    );
    let outcome = drive::follow(&conv, Some(req.task)).await?;
    conv.close().await?;
    drop(demo);
    Ok(outcome.code())
}

/// `tandem resume --server URL ID [-m message]` (`--last`: the server's newest conversation).
pub async fn resume(
    flags: &RemoteFlags,
    url: &str,
    id: Option<String>,
    last: bool,
    message: Option<String>,
    confirm: Option<String>,
) -> Result<u8> {
    let ws = match connect(flags, url, String::new()).await {
        Ok(ws) => ws,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(1);
        }
    };
    let id = match (id, last) {
        (Some(id), _) => id,
        (None, true) => {
            let newest = ws
                .list_conversations(1)
                .await
                .map_err(|e| anyhow::anyhow!(e))?;
            newest
                .first()
                .and_then(|c| c.get("id"))
                .and_then(|v| v.as_str())
                .map(str::to_owned)
                .context("the server has no conversations yet")?
        }
        (None, false) => bail!("name a conversation id or pass --last"),
    };
    let conv = match ws.attach(&id).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(1);
        }
    };
    if let Some(c) = confirm {
        conv.set_confirmation_policy(parse_policy(&c)?)
            .await
            .map_err(|e| anyhow::anyhow!(e))?;
    }
    eprintln!(
        "· conversation {} on {url} ({})",
        conv.id(),
        conv.status().as_str()
    );
    let events = conv.events();
    let from = events
        .iter()
        .rposition(|e| matches!(e, tandem_protocol::Event::Message(m) if m.base.source == tandem_protocol::Source::User))
        .unwrap_or(0);
    for e in &events[from..] {
        drive::print_event(e);
    }
    let outcome = drive::follow(&conv, message).await?;
    conv.close().await?;
    Ok(outcome.code())
}
