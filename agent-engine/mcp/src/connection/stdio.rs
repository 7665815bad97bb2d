//! Stdio servers: a child process in its own process group, JSON-RPC one message per line.
//! When the connection closes or is dropped, the whole group gets SIGTERM, then SIGKILL after
//! a grace, so a server that starts helpers (`npm exec` → `node`) leaves nothing behind. The
//! server gets a parent-death signal and Tandem's owner marker (`tandem_process`), so a crash
//! of Tandem takes it along, or the next start sweeps it up.
//!
//! Lines are read with a cap ([`MAX_LINE`] for messages, [`MAX_STDERR_LINE`] for stderr):
//! a longer message ends the connection with an error naming the server, instead of growing
//! memory without bound; a longer stderr line is skipped.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use nix::sys::signal::Signal;
use tandem_process::Isolation;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

use super::{Diagnostics, RmcpConnection, Rx, SharedDiagnostics, Wire};
use crate::config::{ServerConfig, Transport};
use crate::{McpError, McpErrorKind};

/// The variables a server inherits from Tandem's environment (as upstream's MCP SDK does):
/// enough to run, never Tandem's provider keys. The server's `env` adds to them.
const INHERITED_ENV: [&str; 9] = [
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "LANG",
    "TMPDIR",
    "NODE_PATH",
];

/// Lines of stderr kept to explain a failure.
const STDERR_TAIL: usize = 6;
/// Longest JSON-RPC message line a server may send (images travel base64-encoded inside).
pub(crate) const MAX_LINE: usize = 16 * 1024 * 1024;
/// Longest stderr line read; longer ones are skipped.
const MAX_STDERR_LINE: usize = 64 * 1024;
/// How long a closed server has after SIGTERM before its group gets SIGKILL.
const CLOSE_GRACE: Duration = tandem_process::DEFAULT_GRACE;

pub(super) async fn connect(
    server: &ServerConfig,
    default_cwd: Option<&Path>,
) -> Result<RmcpConnection, McpError> {
    let name = server.name.as_str();
    let Transport::Stdio {
        command,
        args,
        env,
        cwd,
    } = &server.transport
    else {
        return Err(McpError::new(
            name,
            McpErrorKind::Config,
            "not a stdio server",
        ));
    };
    let mut cmd = Command::new(command);
    cmd.args(args)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for key in INHERITED_ENV {
        if let Some(v) = std::env::var_os(key) {
            cmd.env(key, v);
        }
    }
    cmd.envs(env);
    if let Some(dir) = cwd.as_deref().or(default_cwd) {
        if !dir.is_dir() {
            return Err(McpError::new(
                name,
                McpErrorKind::Start,
                format!("its working directory {} does not exist", dir.display()),
            ));
        }
        cmd.current_dir(dir);
    }
    // In a sandbox: as the agent's user, like the agent's commands (the server's keys are
    // files only its own user reads), its HOME the agent's.
    if let Some(user) = tandem_process::agent_user::agent_user() {
        user.apply(&mut cmd);
    }
    let spawned = tandem_process::spawn_tokio(cmd, Isolation::Group, Signal::SIGKILL).await;
    let mut child = spawned.map_err(|e| {
        let why = if e.kind() == std::io::ErrorKind::NotFound {
            "no such program (is it installed and on PATH?)".to_owned()
        } else {
            e.to_string()
        };
        McpError::new(
            name,
            McpErrorKind::Start,
            format!("could not start `{command}`: {why}"),
        )
    })?;
    let pgid = child.id().and_then(|p| i32::try_from(p).ok());
    let guard = GroupGuard(pgid);
    let (Some(stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(McpError::new(
            name,
            McpErrorKind::Start,
            "its stdio could not be piped",
        ));
    };
    let diag = SharedDiagnostics::default();

    let stderr_task = tokio::spawn({
        let diag = diag.clone();
        let name = name.to_owned();
        async move {
            let mut lines =
                FramedRead::new(stderr, LinesCodec::new_with_max_length(MAX_STDERR_LINE));
            while let Some(line) = lines.next().await {
                let line = match line {
                    Ok(line) => line,
                    Err(LinesCodecError::MaxLineLengthExceeded) => continue,
                    Err(LinesCodecError::Io(_)) => break,
                };
                tracing::debug!(server = %name, "MCP server stderr: {line}");
                let line = line.trim();
                if line.is_empty() {
                    continue;
                }
                let mut d = Diagnostics::lock(&diag);
                if d.stderr.len() == STDERR_TAIL {
                    d.stderr.pop_front();
                }
                d.stderr.push_back(line.chars().take(300).collect());
            }
        }
    });
    let (exited_tx, exited_rx) = tokio::sync::watch::channel(false);
    tokio::spawn({
        let diag = diag.clone();
        async move {
            let status = child.wait().await;
            let text = match status {
                Ok(s) => format!("the server exited ({s})"),
                Err(e) => format!("the server could not be waited for: {e}"),
            };
            Diagnostics::lock(&diag).ended.get_or_insert(text);
            let _ = exited_tx.send(true);
        }
    });

    let spawn_transport = {
        let diag = diag.clone();
        move |wire: Wire| {
            let Wire {
                mut outgoing,
                mut incoming,
            } = wire;
            tokio::spawn(async move {
                let mut stdin = stdin;
                while let Some(msg) = outgoing.next().await {
                    let Ok(mut line) = serde_json::to_vec(&msg) else {
                        continue;
                    };
                    line.push(b'\n');
                    if stdin.write_all(&line).await.is_err() || stdin.flush().await.is_err() {
                        break;
                    }
                }
            });
            tokio::spawn(async move {
                let mut lines = FramedRead::new(stdout, LinesCodec::new_with_max_length(MAX_LINE));
                loop {
                    let line = match lines.next().await {
                        Some(Ok(line)) => line,
                        None => break,
                        Some(Err(LinesCodecError::MaxLineLengthExceeded)) => {
                            Diagnostics::lock(&diag)
                                .protocol_error
                                .get_or_insert(format!(
                                    "a message longer than {} MiB (the limit of one line)",
                                    MAX_LINE / (1024 * 1024)
                                ));
                            break;
                        }
                        Some(Err(LinesCodecError::Io(e))) => {
                            Diagnostics::lock(&diag)
                                .protocol_error
                                .get_or_insert(format!("unreadable output ({e})"));
                            break;
                        }
                    };
                    let text = line.trim();
                    if text.is_empty() {
                        continue;
                    }
                    match serde_json::from_str::<Rx>(text) {
                        Ok(msg) => {
                            if incoming.send(msg).await.is_err() {
                                break;
                            }
                        }
                        // Not JSON at all and not trying to be: stray log output some servers
                        // print on stdout; skipped like other clients do.
                        Err(_) if !text.starts_with(['{', '[']) => {
                            tracing::debug!("MCP server stdout (not JSON-RPC): {text}");
                        }
                        Err(e) => {
                            let excerpt: String = text.chars().take(120).collect();
                            Diagnostics::lock(&diag)
                                .protocol_error
                                .get_or_insert(format!("{excerpt:?} ({e})"));
                            break;
                        }
                    }
                }
                // The output ended: wait a moment for the exit status and the last stderr
                // lines, so the failed call can say why.
                let mut exited_rx = exited_rx;
                let _ =
                    tokio::time::timeout(Duration::from_millis(500), exited_rx.wait_for(|e| *e))
                        .await;
                let _ = tokio::time::timeout(Duration::from_millis(200), stderr_task).await;
                drop(incoming);
            });
        }
    };
    RmcpConnection::start(name, diag, spawn_transport, Some(Box::new(guard))).await
}

/// Closes the server's process group when dropped: SIGTERM, then SIGKILL after
/// [`CLOSE_GRACE`] (on a thread of its own, so dropping never waits).
struct GroupGuard(Option<i32>);

impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pgid) = self.0 {
            let stopper = std::thread::Builder::new()
                .name("mcp-server-stop".into())
                .spawn(move || tandem_process::stop_group_blocking(pgid, CLOSE_GRACE));
            if stopper.is_err() {
                tandem_process::signal_group(pgid, Signal::SIGKILL);
            }
        }
    }
}
