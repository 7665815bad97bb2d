//! Running the agent's commands in one shell: typing them, waiting for the prompt marker (or a
//! soft timeout, hard timeout, or interrupt), and collecting what they printed.
//!
//! The [`Runner`] is the tool's side of a shell. It tracks from the markers whether the shell is
//! busy, whatever started the command (the agent, or a person typing in a viewer), and keeps
//! the agent's command that outlived a soft timeout so a later call can wait for or talk to it.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::inbox::Inbox;
use super::markers::{PromptInfo, ShellEvent};
use super::process;
use super::shell::Shell;

/// Why the shell could not take a command; the text is what the model reads.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ShellError {
    /// The call was cancelled while a new shell started.
    #[error("Interrupted while the shell was starting.")]
    InterruptedStarting,
    /// A new shell exited before its first prompt; its output says why.
    #[error("The shell exited while starting: {0}")]
    ExitedStarting(String),
    /// A new shell showed no prompt in time.
    #[error("The shell did not show a prompt within {} seconds.", STARTUP_LIMIT.as_secs())]
    NoPrompt,
    /// The call was cancelled before its command was typed: nothing ran.
    #[error("Interrupted before the command was typed: it did not run.")]
    NotTyped,
    /// The private file carrying the secrets could not be written.
    #[error("Could not prepare the secret environment variables: {0}")]
    PrepareEnv(std::io::Error),
    /// The shell did not come back from sourcing a private file (secrets, or variables moved
    /// with the conversation).
    #[error("Could not pass environment variables to or from the shell.")]
    ExportEnv,
    /// A fresh shell could not be started in place of the old one.
    #[error("Could not start a new shell: {0}")]
    Restart(std::io::Error),
}

/// How long a new shell may take to show its first prompt.
const STARTUP_LIMIT: Duration = Duration::from_secs(30);
/// How long a stopped command gets to exit after C-c before its processes are killed.
const INTERRUPT_GRACE: Duration = Duration::from_secs(1);
/// How long to wait for the prompt once the processes are killed.
const KILL_GRACE: Duration = Duration::from_secs(5);
/// Most output bytes one call keeps (its first and last halves); a command that prints without
/// pause for long must not exhaust memory.
const CAPTURE_LIMIT: usize = 32 * 1024 * 1024;
/// Longest wait for readline to show the prompt before typing: a hang guard for a prompt
/// changed by hand (it has no reading marker); the prompt shows within milliseconds otherwise.
const READING_LIMIT: Duration = Duration::from_secs(2);
/// Readline's "line accepted" sequence (bracketed paste off), which ends the command's echo.
const LINE_ACCEPTED: &[u8] = b"\x1b[?2004l";

/// Why a wait ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stop {
    /// The shell showed its prompt: the command finished.
    Prompt(PromptInfo),
    /// No output for the soft timeout.
    Quiet,
    /// The deadline passed.
    Deadline,
    /// The call was cancelled.
    Cancelled,
    /// The shell's PTY closed.
    Exited,
}

/// How a call ended, for the observation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Ending {
    /// The command finished by itself.
    Completed,
    /// It went quiet and still runs.
    SoftTimeout,
    /// It outlived its `timeout` and was stopped.
    HardTimeout,
    /// The call was interrupted and the command stopped.
    Interrupted,
    /// The shell exited.
    ShellExited,
}

/// What a call produced.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// The terminal bytes for the model (echo and markers removed).
    pub raw: Vec<u8>,
    /// How it ended.
    pub ending: Ending,
    /// The prompt that ended the command, if it did end.
    pub prompt: Option<PromptInfo>,
    /// The foreground process group while the command still runs.
    pub running_pid: Option<i32>,
}

/// Bytes kept up to a limit: the first half, then a rolling last half.
#[derive(Debug, Default)]
struct Bounded {
    head: Vec<u8>,
    tail: VecDeque<u8>,
    dropped: usize,
}

impl Bounded {
    fn push(&mut self, mut bytes: &[u8]) {
        let half = CAPTURE_LIMIT / 2;
        if self.head.len() < half {
            let n = bytes.len().min(half - self.head.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(half);
        if excess > 0 {
            self.tail.drain(..excess);
            self.dropped += excess;
        }
    }

    fn into_vec(self) -> Vec<u8> {
        let mut out = self.head;
        if self.dropped > 0 {
            let note = format!("\r\n[... {} bytes of output dropped ...]\r\n", self.dropped);
            out.extend_from_slice(note.as_bytes());
        }
        out.extend(self.tail);
        out
    }
}

/// Output collected during a wait.
#[derive(Debug, Default)]
struct Capture {
    /// Drop everything up to the command's start marker (the echo of the typed line).
    skip_echo: bool,
    started: bool,
    echo: Vec<u8>,
    data: Bounded,
}

impl Capture {
    fn new(skip_echo: bool) -> Self {
        Self {
            skip_echo,
            ..Self::default()
        }
    }

    fn push(&mut self, bytes: &[u8]) {
        if self.skip_echo && !self.started {
            self.echo.extend_from_slice(bytes);
        } else {
            self.data.push(bytes);
        }
    }

    fn started(&mut self) {
        if !self.started {
            self.started = true;
            self.echo.clear();
        }
    }

    /// The output; when the line never started a command (a comment, a syntax error), what
    /// followed the echo.
    fn finish(self) -> Vec<u8> {
        if !self.skip_echo || self.started {
            return self.data.into_vec();
        }
        let echo = self.echo;
        let after = echo
            .windows(LINE_ACCEPTED.len())
            .rposition(|w| w == LINE_ACCEPTED)
            .map_or(0, |i| i + LINE_ACCEPTED.len());
        echo[after..].to_vec()
    }
}

/// The tool's side of one shell.
#[derive(Debug)]
pub(crate) struct Runner {
    shell: Arc<Shell>,
    /// The shell's output, parsed by its reader thread (bounded: see [`Inbox`]).
    output: Inbox,
    backlog: VecDeque<ShellEvent>,
    ready: bool,
    busy: bool,
    /// Readline reads input: the prompt is shown and the terminal is in raw mode.
    reading: bool,
    exited: bool,
    /// The agent's command that is still running after a soft timeout.
    running: Option<String>,
    last_prompt: Option<PromptInfo>,
    /// Secret values already exported to this shell.
    exported: HashMap<String, String>,
}

async fn cancelled(cancel: Option<&CancellationToken>) {
    match cancel {
        Some(c) => c.cancelled().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// `command` wrapped for readline: as a bracketed paste, so tabs and newlines are literal and a
/// multi-line command is one entry, then Enter.
fn typed_command(command: &str) -> Vec<u8> {
    let command = command
        .replace("\r\n", "\n")
        .replace("\x1b[201~", "")
        .trim_end_matches('\n')
        .to_owned();
    let mut bytes = b"\x1b[200~".to_vec();
    bytes.extend_from_slice(command.as_bytes());
    bytes.extend_from_slice(b"\x1b[201~\r");
    bytes
}

fn valid_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn single_quoted(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

impl Runner {
    /// The runner of a freshly spawned shell.
    pub fn new(shell: Arc<Shell>, output: Inbox) -> Self {
        Self {
            shell,
            output,
            backlog: VecDeque::new(),
            ready: false,
            busy: false,
            reading: false,
            exited: false,
            running: None,
            last_prompt: None,
            exported: HashMap::new(),
        }
    }

    /// The shell this runner drives.
    pub fn shell(&self) -> &Arc<Shell> {
        &self.shell
    }

    /// Whether the shell's PTY has closed.
    pub fn exited(&self) -> bool {
        self.exited
    }

    /// The last prompt seen (the shell's state before the current command).
    pub fn last_prompt(&self) -> Option<&PromptInfo> {
        self.last_prompt.as_ref()
    }

    /// Parses everything the shell has printed so far into the backlog, without waiting.
    fn drain(&mut self) {
        if self.output.drain_into(&mut self.backlog) {
            self.exited = true;
        }
    }

    /// Drops pending output, keeping track of what the shell did meanwhile.
    fn settle(&mut self) {
        self.drain();
        while let Some(event) = self.backlog.pop_front() {
            self.apply(&event);
        }
    }

    fn apply(&mut self, event: &ShellEvent) {
        match event {
            ShellEvent::Output(_) => {}
            ShellEvent::Started => {
                self.busy = true;
                self.reading = false;
            }
            ShellEvent::Reading => self.reading = !self.busy,
            ShellEvent::Prompt(info) => {
                self.busy = false;
                self.ready = true;
                self.reading = false;
                self.running = None;
                self.last_prompt = Some(info.clone());
            }
        }
    }

    /// Whether a command is running or has output or an end not yet reported.
    pub fn has_pending_command(&mut self) -> bool {
        self.drain();
        self.busy
            || self
                .backlog
                .iter()
                .any(|e| matches!(e, ShellEvent::Started | ShellEvent::Prompt(_)))
    }

    /// Whether the running command has already ended (its prompt waits to be reported).
    pub fn finished_meanwhile(&mut self) -> bool {
        self.drain();
        self.backlog
            .iter()
            .any(|e| matches!(e, ShellEvent::Prompt(_)))
    }

    /// Whether the shell is running something now (after the output so far).
    pub fn is_busy(&mut self) -> bool {
        self.settle();
        self.busy
    }

    /// Collects output until the prompt, `quiet` without output, `deadline`, or `cancel`.
    async fn wait(
        &mut self,
        capture: &mut Capture,
        quiet: Option<Duration>,
        deadline: Option<Instant>,
        cancel: Option<&CancellationToken>,
    ) -> Stop {
        let mut last_output = Instant::now();
        loop {
            while let Some(event) = self.backlog.pop_front() {
                self.apply(&event);
                match event {
                    ShellEvent::Output(bytes) => {
                        capture.push(&bytes);
                        last_output = Instant::now();
                    }
                    ShellEvent::Started => capture.started(),
                    ShellEvent::Reading => {}
                    ShellEvent::Prompt(info) => return Stop::Prompt(info),
                }
            }
            if self.exited {
                return Stop::Exited;
            }
            let quiet_at = quiet.map(|q| last_output + q);
            let wake = match (quiet_at, deadline) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            tokio::select! {
                biased;
                () = cancelled(cancel) => return Stop::Cancelled,
                closed = self.output.recv_into(&mut self.backlog) => if closed {
                    self.exited = true;
                },
                () = sleep_until(wake) => {
                    return if deadline.is_some_and(|d| Instant::now() >= d) {
                        Stop::Deadline
                    } else {
                        Stop::Quiet
                    };
                }
            }
        }
    }

    /// Waits until readline shows the prompt and reads input, so that what is typed next is
    /// echoed once. Between the finished marker (printed by `PROMPT_COMMAND`) and the prompt,
    /// the terminal is still in cooked mode: the driver would echo typed bytes itself
    /// (`^[[200~ls^[[201~`) and readline then again, so viewers saw the command twice. Returns
    /// at once when a command runs (a person typed one) or the shell has gone. Returns false
    /// when `cancel` fired: nothing is to be typed then.
    async fn until_reading(&mut self, cancel: &CancellationToken) -> bool {
        let deadline = Instant::now() + READING_LIMIT;
        loop {
            self.settle();
            if cancel.is_cancelled() {
                return false;
            }
            if self.reading || self.busy || self.exited {
                return true;
            }
            tokio::select! {
                biased;
                () = cancel.cancelled() => return false,
                closed = self.output.recv_into(&mut self.backlog) => if closed {
                    self.exited = true;
                },
                () = tokio::time::sleep_until(deadline) => return true,
            }
        }
    }

    /// Waits for the new shell's first prompt.
    pub async fn wait_ready(&mut self, cancel: &CancellationToken) -> Result<(), ShellError> {
        if self.ready {
            return Ok(());
        }
        let mut capture = Capture::new(false);
        let deadline = Instant::now() + STARTUP_LIMIT;
        match self
            .wait(&mut capture, None, Some(deadline), Some(cancel))
            .await
        {
            Stop::Prompt(_) => Ok(()),
            Stop::Cancelled => Err(ShellError::InterruptedStarting),
            Stop::Exited => Err(ShellError::ExitedStarting(
                super::output::clean(&capture.data.into_vec())
                    .trim()
                    .to_owned(),
            )),
            Stop::Quiet | Stop::Deadline => Err(ShellError::NoPrompt),
        }
    }

    /// Exports the secrets in `env` that this shell does not have yet, without their values
    /// ever crossing the terminal: they go through a private file that the shell sources and
    /// deletes.
    pub async fn export_env(
        &mut self,
        env: &HashMap<String, String>,
        private_dir: &Path,
        cancel: &CancellationToken,
    ) -> Result<(), ShellError> {
        let mut names: Vec<&String> = env
            .iter()
            .filter(|(k, v)| valid_env_name(k) && self.exported.get(*k) != Some(*v))
            .map(|(k, _)| k)
            .collect();
        if names.is_empty() {
            return Ok(());
        }
        names.sort();
        let mut script = String::new();
        for name in &names {
            let value = env.get(*name).map(String::as_str).unwrap_or_default();
            script.push_str(&format!("export {name}={}\n", single_quoted(value)));
        }
        self.source_private(&script, private_dir, cancel).await?;
        for name in names {
            if let Some(value) = env.get(name) {
                self.exported.insert(name.clone(), value.clone());
            }
        }
        Ok(())
    }

    /// The names of the secrets exported to this shell.
    pub fn secret_names(&self) -> impl Iterator<Item = &str> {
        self.exported.keys().map(String::as_str)
    }

    /// The variables the shell exports now and its folder, written by `env -0` and `pwd -P`
    /// into private files (values never cross the terminal).
    pub async fn exported_vars(
        &mut self,
        private_dir: &Path,
        cancel: &CancellationToken,
    ) -> Result<(HashMap<String, String>, Option<String>), ShellError> {
        let file = private_dir.join(format!("vars-{}", uuid::Uuid::new_v4().simple()));
        let cwd_file = file.with_extension("cwd");
        let script = format!(
            "(umask 077; env -0 > {}; pwd -P > {})\n",
            single_quoted(&file.to_string_lossy()),
            single_quoted(&cwd_file.to_string_lossy())
        );
        let sourced = self.source_private(&script, private_dir, cancel).await;
        let bytes = tokio::fs::read(&file).await;
        let cwd = tokio::fs::read_to_string(&cwd_file).await.ok();
        let _ = tokio::fs::remove_file(&file).await;
        let _ = tokio::fs::remove_file(&cwd_file).await;
        sourced?;
        let bytes = bytes.map_err(ShellError::PrepareEnv)?;
        let cwd = cwd
            .map(|c| c.trim_end_matches('\n').to_owned())
            .filter(|c| !c.is_empty());
        let vars = bytes
            .split(|b| *b == 0)
            .filter_map(|entry| {
                let entry = String::from_utf8_lossy(entry);
                let (name, value) = entry.split_once('=')?;
                valid_env_name(name).then(|| (name.to_owned(), value.to_owned()))
            })
            .collect();
        Ok((vars, cwd))
    }

    /// Sets the variables of `set` and removes those of `unset`, through a private file.
    pub async fn apply_env(
        &mut self,
        set: &BTreeMap<String, String>,
        unset: &[String],
        private_dir: &Path,
        cancel: &CancellationToken,
    ) -> Result<(), ShellError> {
        let mut script = String::new();
        for (name, value) in set.iter().filter(|(k, _)| valid_env_name(k)) {
            script.push_str(&format!("export {name}={}\n", single_quoted(value)));
        }
        for name in unset.iter().filter(|k| valid_env_name(k)) {
            script.push_str(&format!("unset {name}\n"));
        }
        if script.is_empty() {
            return Ok(());
        }
        self.source_private(&script, private_dir, cancel).await
    }

    /// Runs `script` in the shell from a private file that the shell sources and deletes: what
    /// it holds never crosses the terminal.
    async fn source_private(
        &mut self,
        script: &str,
        private_dir: &Path,
        cancel: &CancellationToken,
    ) -> Result<(), ShellError> {
        let file = private_dir.join(format!("env-{}", uuid::Uuid::new_v4().simple()));
        write_private(&file, script)
            .await
            .map_err(ShellError::PrepareEnv)?;
        let quoted = single_quoted(&file.to_string_lossy());
        if !self.until_reading(cancel).await {
            let _ = tokio::fs::remove_file(&file).await;
            return Err(ShellError::NotTyped);
        }
        // A leading space keeps the line out of the shell's history.
        self.shell
            .write(typed_command(&format!(" . {quoted}; rm -f {quoted}")));
        self.busy = true;
        self.reading = false;
        let mut capture = Capture::new(true);
        let deadline = Instant::now() + STARTUP_LIMIT;
        let stop = self
            .wait(&mut capture, None, Some(deadline), Some(cancel))
            .await;
        let _ = tokio::fs::remove_file(&file).await;
        match stop {
            Stop::Prompt(_) => Ok(()),
            _ => Err(ShellError::ExportEnv),
        }
    }

    /// Types `command` and waits for it: until its prompt, `soft` without output (when there is
    /// no `timeout`), `timeout` (then stops it), or `cancel` (then stops it). `Err` when
    /// `cancel` fired before the command was typed: it did not run.
    pub async fn run(
        &mut self,
        command: &str,
        soft: Duration,
        timeout: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Result<Outcome, ShellError> {
        if !self.until_reading(cancel).await {
            return Err(ShellError::NotTyped);
        }
        self.shell.write(typed_command(command));
        self.busy = true;
        self.reading = false;
        self.running = Some(command.to_owned());
        let capture = Capture::new(true);
        Ok(self.follow(capture, soft, timeout, true, cancel).await)
    }

    /// Types `bytes` into the running command and collects what follows.
    pub async fn send_input(
        &mut self,
        bytes: Vec<u8>,
        soft: Duration,
        wait_limit: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Outcome {
        self.shell.write(bytes);
        self.follow(Capture::new(false), soft, wait_limit, false, cancel)
            .await
    }

    /// Collects more output of the running command.
    pub async fn resume(
        &mut self,
        soft: Duration,
        wait_limit: Option<Duration>,
        cancel: &CancellationToken,
    ) -> Outcome {
        self.follow(Capture::new(false), soft, wait_limit, false, cancel)
            .await
    }

    /// Waits; `limit` is a hard timeout when `stop_at_limit`, else how long to wait instead of
    /// the soft timeout.
    async fn follow(
        &mut self,
        mut capture: Capture,
        soft: Duration,
        limit: Option<Duration>,
        stop_at_limit: bool,
        cancel: &CancellationToken,
    ) -> Outcome {
        let (quiet, deadline) = match limit {
            Some(limit) => (None, Some(Instant::now() + limit)),
            None => (Some(soft), None),
        };
        let stop = self.wait(&mut capture, quiet, deadline, Some(cancel)).await;
        let (ending, prompt) = match stop {
            Stop::Prompt(info) => (Ending::Completed, Some(info)),
            Stop::Exited => (Ending::ShellExited, None),
            Stop::Quiet => (Ending::SoftTimeout, None),
            Stop::Deadline if !stop_at_limit => (Ending::SoftTimeout, None),
            Stop::Deadline => (Ending::HardTimeout, self.interrupt(&mut capture).await),
            Stop::Cancelled => (Ending::Interrupted, self.interrupt(&mut capture).await),
        };
        let running_pid = if prompt.is_none() && ending == Ending::SoftTimeout {
            self.shell.foreground_group()
        } else {
            None
        };
        Outcome {
            raw: capture.finish(),
            ending,
            prompt,
            running_pid,
        }
    }

    /// Stops the running command: C-c, then SIGKILL for its whole process tree. Returns the
    /// prompt if the shell came back.
    async fn interrupt(&mut self, capture: &mut Capture) -> Option<PromptInfo> {
        let shell = Arc::clone(&self.shell);
        let (pgrp, before) = tokio::task::spawn_blocking(move || {
            let pgrp = shell.foreground_group().unwrap_or(-1);
            (pgrp, process::job_tree(shell.pid(), pgrp))
        })
        .await
        .unwrap_or((-1, BTreeSet::new()));
        self.shell.write(b"\x03".to_vec());
        let grace = Instant::now() + INTERRUPT_GRACE;
        let mut stop = self.wait(capture, None, Some(grace), None).await;
        // Children that ignore SIGINT (background jobs of a script) outlive C-c: kill the tree
        // as it was, and whatever is still in the job's group.
        let shell = Arc::clone(&self.shell);
        let _ = tokio::task::spawn_blocking(move || {
            let mut all = before;
            all.extend(process::job_tree(shell.pid(), pgrp));
            process::kill_all(&all);
        })
        .await;
        if !matches!(stop, Stop::Prompt(_) | Stop::Exited) {
            let deadline = Instant::now() + KILL_GRACE;
            stop = self.wait(capture, None, Some(deadline), None).await;
        }
        match stop {
            Stop::Prompt(info) => Some(info),
            _ => None,
        }
    }

    /// Makes sure nothing is running before a new command; `Err` names what still runs.
    pub fn check_idle(&mut self) -> Result<(), Option<String>> {
        if self.is_busy() {
            Err(self.running.clone())
        } else {
            Ok(())
        }
    }
}

/// Writes `text` to a new file only the owner can read.
/// Gives `path` to the agent's `user` (when this process may).
pub(crate) fn give_to(path: &Path, user: &crate::agent_user::AgentUser) {
    if let Err(e) = std::os::unix::fs::chown(path, Some(user.uid), Some(user.gid)) {
        tracing::warn!(path = %path.display(), "cannot give it to the agent's user: {e}");
    }
}

async fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt;

    let mut file = tokio::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .await?;
    // In a sandbox the shell runs as the agent's user: the file is that user's to read.
    if let Some(user) = crate::agent_user::agent_user() {
        give_to(path, user);
    }
    file.write_all(text.as_bytes()).await?;
    file.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_is_dropped_even_without_a_start_marker() {
        let mut c = Capture::new(true);
        c.push(b"echo (\r\n\x1b[?2004l\rbash: syntax error\r\n");
        assert_eq!(c.finish(), b"\rbash: syntax error\r\n");
        let mut c = Capture::new(true);
        c.push(b"echo hi\r\n\x1b[?2004l\r");
        c.started();
        c.push(b"hi\r\n");
        c.started();
        c.push(b"more\r\n");
        assert_eq!(c.finish(), b"hi\r\nmore\r\n");
    }

    #[test]
    fn endless_output_keeps_head_and_tail() {
        let mut b = Bounded::default();
        let chunk = vec![b'x'; 1024 * 1024];
        for _ in 0..40 {
            b.push(&chunk);
        }
        b.push(b"END");
        let out = b.into_vec();
        assert!(out.len() < CAPTURE_LIMIT + 100);
        assert!(out.ends_with(b"xEND"));
        assert!(String::from_utf8_lossy(&out).contains("bytes of output dropped"));
    }

    /// A person's `yes` in the agent's shell while no tool call drains it: what is queued
    /// for the tool stays bounded, and the shell still works afterwards.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn output_nobody_waits_for_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let (feed_tx, feed_rx) = super::super::fanout::FeedTx::channel(16);
        // A viewer that keeps up.
        std::thread::spawn(move || while feed_rx.recv().is_ok() {});
        let spawned = super::super::shell::spawn(dir.path(), feed_tx).unwrap();
        let shell = Arc::new(spawned.shell);
        let mut runner = Runner::new(Arc::clone(&shell), spawned.output);
        let cancel = CancellationToken::new();
        runner.wait_ready(&cancel).await.unwrap();
        // bash leads its own session and carries the owner marker the leftover sweep reads.
        let environ = std::fs::read(format!("/proc/{}/environ", shell.pid())).unwrap();
        assert!(
            environ
                .split(|&b| b == 0)
                .any(|e| e.starts_with(b"TANDEM_OWNER="))
        );
        assert_eq!(
            nix::unistd::getsid(Some(nix::unistd::Pid::from_raw(shell.pid())))
                .unwrap()
                .as_raw(),
            shell.pid()
        );
        // Typed by a person, not through the tool.
        assert!(shell.write(b"yes\r".to_vec()));
        let mut most = 0;
        for _ in 0..30 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            most = most.max(runner.output.queued_bytes());
        }
        assert!(most > 0, "yes printed nothing");
        assert!(
            most <= super::super::inbox::OUTPUT_CAP,
            "{most} bytes queued for the tool"
        );
        shell.write(b"\x03".to_vec());
        let mut ok = false;
        for _ in 0..20 {
            runner.settle();
            if !runner.busy {
                ok = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(ok, "yes did not stop");
        let out = runner
            .run("echo still-here", Duration::from_secs(10), None, &cancel)
            .await
            .unwrap();
        assert!(String::from_utf8_lossy(&out.raw).contains("still-here"));
        shell.kill();
    }

    #[test]
    fn commands_are_pasted() {
        assert_eq!(typed_command("ls\n"), b"\x1b[200~ls\x1b[201~\r");
        assert!(valid_env_name("API_KEY2") && !valid_env_name("2X") && !valid_env_name("A-B"));
        assert_eq!(single_quoted("it's"), r"'it'\''s'");
    }
}
