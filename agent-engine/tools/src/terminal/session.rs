//! [`TerminalSession`]: the agent's persistent shell as a shared object — the tool runs
//! commands in it, and any number of viewers watch its (masked) output and type into it.
//!
//! The session outlives a `reset`: the shell inside is replaced, viewers stay attached and keep
//! receiving output from the new shell.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use tandem_sdk::Masker;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::fanout::{Fanout, Feed, FeedTx};
use super::runner::{Runner, ShellError};
use super::shell::{self, Shell};

/// Raw output kept for viewers that attach late.
const SCROLLBACK_BYTES: usize = 256 * 1024;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The agent's shell on a PTY, shared by the terminal tool and attached viewers.
///
/// Viewers get the output with secrets masked ([`attach`](Self::attach) or
/// [`subscribe`](Self::subscribe) plus [`scrollback`](Self::scrollback)) and may type
/// ([`write_input`](Self::write_input)) and [`resize`](Self::resize) the terminal.
pub struct TerminalSession {
    fanout: Arc<Fanout>,
    viewer_feed: FeedTx,
    shell: Mutex<Arc<Shell>>,
    runner: tokio::sync::Mutex<Runner>,
    /// Holds the short-lived files that carry secrets into the shell.
    private_dir: PathBuf,
}

impl std::fmt::Debug for TerminalSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalSession")
            .field("shell_pid", &self.shell_pid())
            .finish_non_exhaustive()
    }
}

/// Changes a shell's commands made to its environment, as a conversation carries them to
/// another backend.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct EnvChanges {
    /// Variables set or changed.
    #[serde(default)]
    pub set: BTreeMap<String, String>,
    /// Variables removed.
    #[serde(default)]
    pub unset: Vec<String>,
    /// Variables left out because they hold a secret (named only).
    #[serde(default)]
    pub withheld: Vec<String>,
}

/// Variables the shell keeps for itself (its folder, prompt hooks, nesting): never moved.
fn shell_machinery(name: &str) -> bool {
    matches!(
        name,
        "PWD"
            | "OLDPWD"
            | "SHLVL"
            | "_"
            | "PS0"
            | "PS1"
            | "PS2"
            | "PROMPT_COMMAND"
            | "COLUMNS"
            | "LINES"
    ) || name.starts_with("__tandem")
        || name.starts_with("BASH_")
}

fn private_dir() -> std::io::Result<PathBuf> {
    use std::os::unix::fs::DirBuilderExt;

    let dir =
        std::env::temp_dir().join(format!("tandem-terminal-{}", uuid::Uuid::new_v4().simple()));
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    // In a sandbox the shell runs as the agent's user: it reads and writes its files here.
    if let Some(user) = crate::agent_user::agent_user() {
        super::runner::give_to(&dir, user);
    }
    Ok(dir)
}

impl TerminalSession {
    /// Starts a shell in `working_dir`, recorded to `cast` when given.
    pub(crate) fn start(
        working_dir: &Path,
        cast: Option<tandem_replay::CastWriter>,
    ) -> std::io::Result<Arc<Self>> {
        let (fanout, viewer_feed) = Fanout::start(SCROLLBACK_BYTES, cast)?;
        // The host's credentials are masked for viewers from the first byte, before the
        // agent's first command brings the conversation's masker.
        let known = tandem_sdk::known_credentials().masker();
        fanout.set_masker(known.clone(), known.longest());
        let spawned = shell::spawn(working_dir, viewer_feed.clone())?;
        let shell = Arc::new(spawned.shell);
        let runner = Runner::new(Arc::clone(&shell), spawned.output);
        let private_dir = match private_dir() {
            Ok(dir) => dir,
            Err(e) => {
                shell.kill();
                return Err(e);
            }
        };
        Ok(Arc::new(Self {
            fanout,
            viewer_feed,
            shell: Mutex::new(shell),
            runner: tokio::sync::Mutex::new(runner),
            private_dir,
        }))
    }

    /// A receiver of the terminal's output from now on (masked). Pair with
    /// [`scrollback`](Self::scrollback), or use [`attach`](Self::attach) to get both at once.
    pub fn subscribe(&self) -> broadcast::Receiver<Bytes> {
        self.fanout.subscribe()
    }

    /// The recent output (masked, up to 256 KiB), so a late viewer sees context.
    pub fn scrollback(&self) -> Vec<u8> {
        self.fanout.scrollback()
    }

    /// The scrollback and a receiver of everything after it, with nothing lost in between.
    pub fn attach(&self) -> (Vec<u8>, broadcast::Receiver<Bytes>) {
        self.fanout.attach()
    }

    /// Types `bytes` into the terminal as a keyboard would (recorded as the person's input).
    pub fn write_input(&self, bytes: &[u8]) -> std::io::Result<()> {
        if lock(&self.shell).write(bytes.to_vec()) {
            self.viewer_feed
                .send(Feed::Input(Bytes::copy_from_slice(bytes)));
            Ok(())
        } else {
            Err(std::io::Error::new(
                std::io::ErrorKind::BrokenPipe,
                "the shell has exited",
            ))
        }
    }

    /// Bytes a viewer or the tool typed that the terminal has not taken yet.
    pub fn queued_input(&self) -> usize {
        lock(&self.shell).queued_input()
    }

    /// Waits until there is room for a viewer's input: less than [`INPUT_CAP`] bytes typed and
    /// not yet taken (a program that does not read its input keeps it waiting). A viewer's
    /// socket waits here before reading the next frame.
    ///
    /// [`INPUT_CAP`]: super::INPUT_CAP
    pub fn input_room(&self) -> impl std::future::Future<Output = ()> + Send + use<> {
        lock(&self.shell).input_room()
    }

    /// Changes the terminal size.
    pub fn resize(&self, rows: u16, cols: u16) -> std::io::Result<()> {
        lock(&self.shell).resize(rows, cols)?;
        self.viewer_feed.send(Feed::Resize { cols, rows });
        Ok(())
    }

    /// Marks event `event_id` in the session's replay recording, after all the output read so
    /// far (nothing when the session is not recorded).
    pub fn mark(&self, event_id: &str) {
        self.viewer_feed.send(Feed::Marker(event_id.to_owned()));
    }

    /// The current shell's process id.
    pub fn shell_pid(&self) -> i32 {
        lock(&self.shell).pid()
    }

    /// Masks what viewers see and what is recorded with `masker` from now on (a person's own
    /// shell gets the conversation's; the agent's gets it with each command).
    pub fn mask_with(&self, masker: Masker) {
        let longest = masker.longest();
        self.fanout.set_masker(masker, longest);
    }

    /// Masks viewer output with `masker` from now on.
    pub(crate) fn set_masker(&self, masker: Masker, longest_secret: usize) {
        self.fanout.set_masker(masker, longest_secret);
    }

    /// The directory for files that carry secrets into the shell.
    pub(crate) fn private_dir(&self) -> &Path {
        &self.private_dir
    }

    /// Exclusive use of the shell for one tool call.
    pub(crate) async fn runner(&self) -> tokio::sync::MutexGuard<'_, Runner> {
        self.runner.lock().await
    }

    /// The shell's folder now and what commands changed in its environment since it
    /// started: variables set or changed, and ones removed. The secrets the shell was given,
    /// any value holding a secret or a host credential, and the shell's own prompt machinery
    /// stay out (withheld ones are named). Asked of the shell itself (a sandbox's server may
    /// not read another user's /proc entries); waits for it to be idle.
    pub async fn shell_state(
        &self,
        cancel: &CancellationToken,
    ) -> Result<(Option<PathBuf>, EnvChanges), String> {
        let mut runner = self.runner().await;
        runner.wait_ready(cancel).await.map_err(|e| e.to_string())?;
        let started = runner.shell().started_env().clone();
        let (now, cwd) = runner
            .exported_vars(&self.private_dir, cancel)
            .await
            .map_err(|e| e.to_string())?;
        let secrets: HashSet<&str> = runner.secret_names().collect();
        let masker = self.fanout.masker();
        let mut changes = EnvChanges::default();
        for (name, value) in &now {
            if shell_machinery(name) || started.get(name) == Some(value) {
                continue;
            }
            if secrets.contains(name.as_str()) || masker.contains_secret(value) {
                changes.withheld.push(name.clone());
            } else {
                changes.set.insert(name.clone(), value.clone());
            }
        }
        changes.unset = started
            .keys()
            .filter(|k| !now.contains_key(*k) && !shell_machinery(k))
            .cloned()
            .collect();
        changes.unset.sort();
        changes.withheld.sort();
        Ok((cwd.map(PathBuf::from), changes))
    }

    /// Applies `changes` (from [`shell_state`](Self::shell_state) of another shell) to this
    /// one; values pass through a private file, never the terminal.
    pub async fn apply_env_changes(
        &self,
        changes: &EnvChanges,
        cancel: &CancellationToken,
    ) -> Result<(), String> {
        let mut runner = self.runner().await;
        runner.wait_ready(cancel).await.map_err(|e| e.to_string())?;
        let set: BTreeMap<String, String> = changes
            .set
            .iter()
            .filter(|(k, _)| !shell_machinery(k))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let unset: Vec<String> = changes
            .unset
            .iter()
            .filter(|k| !shell_machinery(k))
            .cloned()
            .collect();
        runner
            .apply_env(&set, &unset, &self.private_dir, cancel)
            .await
            .map_err(|e| e.to_string())
    }

    /// Kills the shell behind `runner` (and all it started) and puts a fresh one in its place.
    pub(crate) async fn restart(
        &self,
        runner: &mut Runner,
        working_dir: &Path,
    ) -> Result<(), ShellError> {
        let old = Arc::clone(runner.shell());
        let feed = self.viewer_feed.clone();
        let dir = working_dir.to_path_buf();
        let spawned = tokio::task::spawn_blocking(move || {
            old.kill();
            shell::spawn(&dir, feed)
        })
        .await
        .map_err(std::io::Error::other)
        .and_then(|spawned| spawned)
        .map_err(ShellError::Restart)?;
        let shell = Arc::new(spawned.shell);
        *runner = Runner::new(Arc::clone(&shell), spawned.output);
        *lock(&self.shell) = shell;
        Ok(())
    }

    /// Kills the shell and everything it started.
    pub(crate) fn kill(&self) {
        lock(&self.shell).kill();
    }
}

impl Drop for TerminalSession {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.private_dir);
    }
}
