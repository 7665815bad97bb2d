//! `kill -9` of `tandem serve` while a conversation browses (real Chromium), calls an MCP
//! server (server-everything over stdio) and runs commands (`sleep 1000 &`, then a
//! long-running `sleep 1001`): how long until no process of the dead server remains (found by
//! the owner marker `TANDEM_OWNER` its children carry), and whether a restarted server resumes
//! the conversation. One round per call; the test runs a few, the benchmark twenty.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tandem_protocol::{AgentSpec, ExecutionStatus, LlmConfig, Message, ToolSpec};
use tandem_sdk::ConversationClient;
use tandem_sdk::remote::{RemoteConversationOptions, RemoteWorkspace};
use tandem_testkit::{Script, ScriptedLlmServer, Step};

use crate::{KEY, TandemServer};

/// Hang guard for each wait (never a speed assertion).
const PATIENCE: Duration = Duration::from_secs(120);

/// What one round saw.
#[derive(Debug, Clone)]
pub struct Round {
    /// Processes of the server (its marked children and their descendants) just before the kill.
    pub children: usize,
    /// Seconds from `kill -9` until none of them was left.
    pub seconds_to_none_left: f64,
    /// Whether the restarted server ran the conversation to its end.
    pub resumed: bool,
}

/// server-everything's entry script in the npm cache, or `None` when it is not installed.
pub fn everything() -> Option<PathBuf> {
    let dir = tandem_testkit::mcp_servers::servers_dir()?;
    Some(PathBuf::from(tandem_testkit::mcp_servers::entry(
        &dir,
        "server-everything",
    )))
}

/// Whether Debian's Chromium is there.
pub fn chromium() -> bool {
    Path::new("/usr/bin/chromium").exists()
}

fn cmdline(pid: i32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

fn spec(llm: &ScriptedLlmServer, everything: &Path) -> AgentSpec {
    let mut config = LlmConfig::new("openai/fake");
    config.base_url = Some(llm.base_url());
    config.api_key = Some("x".into());
    config.num_retries = 0;
    let mut spec = AgentSpec::default_for(config);
    spec.tools.push(ToolSpec {
        name: "browser_tool_set".into(),
        params: Default::default(),
    });
    spec.mcp_config = Some(json!({"mcpServers": {"everything": {
        "command": "node",
        "args": [everything.to_string_lossy(), "stdio"],
    }}}));
    spec
}

fn script(site_url: &str) -> Script {
    let low = |mut v: Value| {
        v["security_risk"] = json!("LOW");
        v
    };
    Script::new([
        Step::tool_call("browser_navigate", low(json!({"url": site_url}))),
        Step::tool_call("echo", low(json!({"message": "chaos"}))),
        Step::tool_call("terminal", low(json!({"command": "sleep 1000 &"}))),
        Step::tool_call("terminal", low(json!({"command": "sleep 1001"}))),
        Step::tool_call("finish", json!({"message": "done"})),
        Step::tool_call("finish", json!({"message": "done"})),
    ])
    .with_no_tools_text("Chaos")
}

/// One round in `home` (a fresh conversation each time): start the server, let the
/// conversation start Chromium, the MCP server and the commands, `kill -9` the server, time
/// until none of its processes is left (up to `give_up`), restart it and resume.
pub async fn round(
    home: &Path,
    work: &Path,
    everything: &Path,
    site_url: &str,
    give_up: Duration,
) -> Result<Round> {
    std::fs::create_dir_all(work)?;
    let start_home = home.to_owned();
    let mut server =
        tokio::task::spawn_blocking(move || TandemServer::start(&start_home, &[])).await??;
    let llm = ScriptedLlmServer::start(script(site_url));
    let ws =
        RemoteWorkspace::connect(&server.url, Some(KEY.into()), work.to_string_lossy()).await?;
    let conv = ws
        .create_conversation(&RemoteConversationOptions::new(spec(&llm, everything)))
        .await?;
    conv.send_message(Message::user("browse, echo and sleep"), false)
        .await?;
    conv.run().await?;

    let pid = i32::try_from(server.child.pid())?;
    let marker = tandem_process::marker_for(pid).context("the server's marker")?;
    let deadline = Instant::now() + PATIENCE;
    let children = loop {
        let marked = tandem_process::marked_with_groups(&marker);
        let lines: Vec<String> = marked.iter().map(|&p| cmdline(p)).collect();
        let has = |needle: &str| lines.iter().any(|l| l.contains(needle));
        if has("sleep 1001") && has("sleep 1000") && has("chromium") && has("stdio") {
            break marked.len();
        }
        if Instant::now() > deadline {
            bail!("the conversation's processes did not all start: {lines:?}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };

    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )?;
    let killed = Instant::now();
    while server.child.try_wait().is_none() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let seconds_to_none_left = loop {
        let left = tandem_process::marked_with_groups(&marker);
        if left.is_empty() {
            break killed.elapsed().as_secs_f64();
        }
        if killed.elapsed() > give_up {
            let lines: Vec<String> = left
                .iter()
                .map(|&p| format!("{p}: {}", cmdline(p)))
                .collect();
            bail!(
                "{} processes of the killed server were left after {} s: {lines:#?}",
                left.len(),
                give_up.as_secs()
            );
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let id = conv.id().to_owned();
    drop(conv);
    drop(server);

    let start_home = home.to_owned();
    let server =
        tokio::task::spawn_blocking(move || TandemServer::start(&start_home, &[])).await??;
    let ws =
        RemoteWorkspace::connect(&server.url, Some(KEY.into()), work.to_string_lossy()).await?;
    let conv = ws.attach(&id).await?;
    conv.send_message(Message::user("go on"), false).await?;
    let status = tokio::time::timeout(PATIENCE, conv.run_to_end()).await??;
    drop(server);
    Ok(Round {
        children,
        seconds_to_none_left,
        resumed: status == ExecutionStatus::Finished,
    })
}
