//! The `terminal` tool: the agent's persistent bash on a PTY that the engine owns.
//!
//! The shell starts on first use in the workspace, keeps its working directory and environment
//! across commands, and reports each command's end through prompt markers printed by bash itself
//! (no polling). Its output goes to the tool and, masked, to any number of viewers that may also
//! type into it ([`TerminalTool::session`]). Submodules: the model-facing `definition`; the
//! `shell` process and its I/O threads; prompt `markers`; the `runner` that types commands and
//! waits for them; viewer `fanout` with `stream_mask`ing; `output` cleaning and truncation; the
//! `observation` the model reads; `keys` for `is_input`; `process` tree killing.

mod definition;
mod fanout;
mod inbox;
mod keys;
mod markers;
mod observation;
mod output;
mod process;
mod record;
mod runner;
mod session;
mod shell;
mod stream_mask;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use futures::future::BoxFuture;
use tandem_protocol::{TerminalAction, TerminalObservation};
use tandem_sdk::{ToolContext, ToolDefinition, ToolInputError, TypedTool};

pub use definition::TOOL_NAME;
pub use record::{Lane, Recorder};
pub use session::{EnvChanges, TerminalSession};
pub use shell::INPUT_CAP;

/// How long a command may print nothing before the call returns with it still running.
pub const DEFAULT_SOFT_TIMEOUT: Duration = Duration::from_secs(10);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts a session, recorded by `recorder` when given (blocking: forks bash).
fn start_recorded(
    working_dir: &Path,
    recorder: Option<(Arc<Recorder>, Lane)>,
) -> std::io::Result<Arc<TerminalSession>> {
    let cast = recorder.as_ref().and_then(|(r, lane)| r.cast(*lane));
    let recorded = cast.is_some();
    let session = TerminalSession::start(working_dir, cast)?;
    if let Some((r, _)) = recorder.filter(|_| recorded) {
        r.add(&session);
    }
    Ok(session)
}

/// The `terminal` tool. Owns one shell session, started on first use.
pub struct TerminalTool {
    definition: ToolDefinition,
    soft_timeout: Duration,
    max_output_chars: usize,
    session: Mutex<Option<Arc<TerminalSession>>>,
    /// Where full outputs go when the conversation is not persisted.
    fallback_save_dir: PathBuf,
    /// Where sessions are recorded for replay, and as which lane.
    recorder: Mutex<Option<(Arc<Recorder>, Lane)>>,
    /// The file holding the shell state a conversation brought from another backend: a shell
    /// starts from it until the agent's first command runs, which removes it.
    resume_file: Mutex<Option<PathBuf>>,
    /// Environment changes brought along, applied before the shell's next command.
    pending_env: Mutex<Option<EnvChanges>>,
}

/// The shell a conversation brought from another backend ([`RESUME_FILE`]): the folder it was
/// in and the environment changes its commands had made.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ShellResume {
    /// The folder (absolute, on this machine).
    #[serde(default)]
    pub cwd: Option<String>,
    /// The environment changes.
    #[serde(default)]
    pub env: EnvChanges,
}

/// The file in a conversation's folder that holds its [`ShellResume`] until a shell starts.
pub const RESUME_FILE: &str = "tandem_shell.json";

impl std::fmt::Debug for TerminalTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalTool")
            .field("soft_timeout", &self.soft_timeout)
            .field("max_output_chars", &self.max_output_chars)
            .finish_non_exhaustive()
    }
}

impl Default for TerminalTool {
    fn default() -> Self {
        Self::new()
    }
}

impl TerminalTool {
    /// The tool with upstream's defaults: a 10 s soft timeout, 30,000 characters of output.
    pub fn new() -> Self {
        Self {
            definition: definition::definition(DEFAULT_SOFT_TIMEOUT.as_secs()),
            soft_timeout: DEFAULT_SOFT_TIMEOUT,
            max_output_chars: output::DEFAULT_MAX_OUTPUT_CHARS,
            session: Mutex::new(None),
            fallback_save_dir: std::env::temp_dir().join(format!(
                "tandem-observations-{}",
                uuid::Uuid::new_v4().simple()
            )),
            recorder: Mutex::new(None),
            resume_file: Mutex::new(None),
            pending_env: Mutex::new(None),
        }
    }

    /// A shell this tool starts takes the [`ShellResume`] in `file` when there is one (it
    /// starts in that folder, with that environment); the agent's first command removes the
    /// file (a shell started before it, and lost with its process, takes it again).
    pub fn resume_from(&self, file: PathBuf) {
        *lock(&self.resume_file) = Some(file);
    }

    /// The shell state waiting in the resume file, if any (read, not taken).
    pub fn pending_resume(&self) -> Option<ShellResume> {
        let file = lock(&self.resume_file).clone()?;
        serde_json::from_slice(&std::fs::read(file).ok()?).ok()
    }

    /// The folder the next shell starts in: the resume file's (its environment kept for the
    /// first command) when it names one that exists, else `working_dir`.
    fn start_dir(&self, working_dir: &Path) -> PathBuf {
        let Some(resume) = self.pending_resume() else {
            return working_dir.to_path_buf();
        };
        if resume.env != EnvChanges::default() {
            *lock(&self.pending_env) = Some(resume.env);
        }
        resume
            .cwd
            .map(PathBuf::from)
            .filter(|d| d.is_dir())
            .unwrap_or_else(|| working_dir.to_path_buf())
    }

    /// Applies the environment brought along to the running shell, once.
    pub async fn settle_resume(
        &self,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<(), String> {
        let Some(session) = self.session() else {
            return Ok(());
        };
        let Some(env) = lock(&self.pending_env).take() else {
            return Ok(());
        };
        session.apply_env_changes(&env, cancel).await
    }

    /// Uses `soft_timeout` as the quiet time after which a command returns still running.
    pub fn with_soft_timeout(mut self, soft_timeout: Duration) -> Self {
        self.soft_timeout = soft_timeout;
        self.definition = definition::definition(soft_timeout.as_secs().max(1));
        self
    }

    /// Shows at most `max_output_chars` characters of output (head and tail) to the model.
    pub fn with_max_output_chars(mut self, max_output_chars: usize) -> Self {
        self.max_output_chars = max_output_chars.max(2);
        self
    }

    /// Records the sessions started from now on with `recorder`, as `lane`.
    pub fn record_to(&self, recorder: Arc<Recorder>, lane: Lane) {
        *lock(&self.recorder) = Some((recorder, lane));
    }

    /// The running shell session, for viewers; `None` before the first command.
    pub fn session(&self) -> Option<Arc<TerminalSession>> {
        lock(&self.session).clone()
    }

    /// The shell session, started in `working_dir` if there is none yet (for a viewer that
    /// attaches before the agent's first command).
    pub fn start_session(&self, working_dir: &Path) -> std::io::Result<Arc<TerminalSession>> {
        let mut slot = lock(&self.session);
        if let Some(session) = slot.as_ref() {
            return Ok(Arc::clone(session));
        }
        let dir = self.start_dir(working_dir);
        let session = start_recorded(&dir, lock(&self.recorder).clone())?;
        *slot = Some(Arc::clone(&session));
        Ok(session)
    }

    /// The session, started on a blocking thread (forking bash) if there is none yet.
    async fn ensure_session(&self, working_dir: &Path) -> std::io::Result<Arc<TerminalSession>> {
        if let Some(session) = self.session() {
            return Ok(session);
        }
        let dir = self.start_dir(working_dir);
        let recorder = lock(&self.recorder).clone();
        let started = tokio::task::spawn_blocking(move || start_recorded(&dir, recorder))
            .await
            .map_err(std::io::Error::other)??;
        let mut slot = lock(&self.session);
        // Another call may have started one meanwhile; keep that (dropping ours kills it).
        Ok(Arc::clone(slot.get_or_insert(started)))
    }

    /// Runs one action to its observation.
    pub async fn run(&self, action: &TerminalAction, ctx: &ToolContext) -> TerminalObservation {
        let command = action.command.as_str();
        let fail = |message: &str| observation::error(command, message, &ctx.masker);
        if action.reset && action.is_input {
            return fail("`reset` cannot be combined with `is_input=true`.");
        }
        let session = match self.ensure_session(&ctx.working_dir).await {
            Ok(session) => session,
            Err(e) => {
                return fail(&format!(
                    "Could not start a shell in {}: {e}",
                    ctx.working_dir.display()
                ));
            }
        };
        let longest_secret = ctx
            .env
            .values()
            .map(String::len)
            .max()
            .unwrap_or(0)
            .max(ctx.masker.longest());
        session.set_masker(ctx.masker.clone(), longest_secret);

        let mut runner = session.runner().await;
        let mut notes = Vec::new();
        if action.reset || runner.exited() {
            if let Err(e) = session.restart(&mut runner, &ctx.working_dir).await {
                return fail(&e.to_string());
            }
            notes.push(if action.reset {
                "[The terminal was reset: a fresh shell replaced the old one; its environment \
variables, working directory and processes are gone.]"
            } else {
                "[The previous shell had exited, so a fresh one was started.]"
            });
        }
        if let Err(e) = runner.wait_ready(&ctx.cancel).await {
            return fail(&e.to_string());
        }

        let soft = self.soft_timeout;
        let limit = action.timeout.map(Duration::from_secs_f64);
        let cancel = &ctx.cancel;
        let (outcome, continued) = if action.reset && command.trim().is_empty() {
            let prompt = runner.last_prompt().cloned();
            let outcome = runner::Outcome {
                raw: Vec::new(),
                ending: runner::Ending::Completed,
                prompt,
                running_pid: None,
            };
            (outcome, false)
        } else if action.is_input || command.trim().is_empty() {
            if !runner.has_pending_command() {
                return fail(if action.is_input {
                    "No command is running, so there is nothing to send input to. Run a new \
command with is_input=false."
                } else {
                    "No command is running, so there is no more output to wait for. Give a \
command to run."
                });
            }
            let typing = action.is_input && !command.is_empty();
            let outcome = if typing && !runner.finished_meanwhile() {
                let bytes = keys::input_bytes(command);
                runner.send_input(bytes, soft, limit, cancel).await
            } else {
                if typing {
                    // Typed at the prompt, the input would run as a command.
                    notes.push("[The command had already finished, so the input was not sent.]");
                }
                runner.resume(soft, limit, cancel).await
            };
            (outcome, true)
        } else {
            if let Err(running) = runner.check_idle() {
                let what = running.map_or_else(|| "A command".to_owned(), |c| format!("`{c}`"));
                return fail(&format!(
                    "{what} is still running, so a new command cannot start yet. Send an empty \
command to wait for its output, set is_input=true to type into it (`C-c` stops it), or set \
reset=true for a fresh shell."
                ));
            }
            if let Err(e) = runner
                .export_env(&ctx.env, session.private_dir(), cancel)
                .await
            {
                return fail(&e.to_string());
            }
            let brought = lock(&self.pending_env).take();
            if let Some(env) = brought
                && let Err(e) = runner
                    .apply_env(&env.set, &env.unset, session.private_dir(), cancel)
                    .await
            {
                return fail(&e.to_string());
            }
            // From here the shell goes its own way: the state it was brought with is spent.
            let spent = lock(&self.resume_file).take();
            if let Some(file) = spent {
                let _ = std::fs::remove_file(file);
            }
            match runner.run(command, soft, limit, cancel).await {
                Ok(outcome) => (outcome, false),
                Err(e) => return fail(&e.to_string()),
            }
        };
        let last_prompt = runner.last_prompt().cloned();
        drop(runner);

        let save_dir = match &ctx.conversation_dir {
            Some(dir) => dir.join("observations"),
            None => self.fallback_save_dir.clone(),
        };
        let report = observation::Report {
            command,
            continued,
            notes: notes.into_iter().map(str::to_owned).collect(),
            soft_timeout: soft,
            timeout: limit,
            last_prompt,
            masker: &ctx.masker,
            max_output_chars: self.max_output_chars,
            save_dir: &save_dir,
        };
        observation::build(outcome, report).await
    }
}

impl TypedTool for TerminalTool {
    type Input = TerminalAction;
    type Output = TerminalObservation;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn validate(&self, action: &TerminalAction) -> Result<(), ToolInputError> {
        definition::validate(action)
    }

    fn run<'a>(
        &'a self,
        action: &'a TerminalAction,
        ctx: ToolContext,
    ) -> BoxFuture<'a, TerminalObservation> {
        Box::pin(async move { TerminalTool::run(self, action, &ctx).await })
    }

    fn close(&self) {
        if let Some(session) = lock(&self.session).take() {
            session.kill();
        }
    }
}
