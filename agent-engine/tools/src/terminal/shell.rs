//! One bash process on a PTY: spawning it with a controlled environment, and the threads that
//! move bytes in and out of the (blocking) PTY so the async side never blocks.
//!
//! The reader thread parses every chunk into the tool's bounded [`Inbox`] (never waiting for
//! the tool) and sends it to the viewer fan-out (a bounded channel: when the fan-out falls
//! behind, the reader waits, and so does whatever writes to the terminal); the writer thread
//! writes whatever the tool or a viewer types, counting what waits ([`INPUT_CAP`]: a viewer
//! waits for room, so a person's socket stops being read while the shell does not read its
//! input). Dropping [`Shell`] closes the input channel,
//! which ends the writer thread; the reader thread ends when the PTY closes (after
//! [`Shell::kill`]).
//!
//! bash leads a session of its own with the PTY as its controlling terminal, and gets SIGHUP
//! when the server dies (`tandem_process`: the parent-death signal, and the owner marker the
//! leftover sweep looks for). Like a closed terminal window, SIGHUP makes bash hang up its
//! jobs, background ones included.

use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Mutex;

use bytes::Bytes;
use nix::sys::signal::Signal;
use portable_pty::{CommandBuilder, MasterPty, PtySize, native_pty_system};
use tandem_process::Isolation;

use super::fanout::FeedTx;
use super::inbox::{Inbox, inbox};
use super::markers::PromptVars;
use super::process;

/// Initial terminal size; viewers may resize.
pub(crate) const DEFAULT_ROWS: u16 = 48;
/// Initial terminal width: wide, so tool output wraps less.
pub(crate) const DEFAULT_COLS: u16 = 160;

const READ_BUF: usize = 64 * 1024;

/// Typed input waiting for the PTY to take it, beyond which viewers wait for room
/// ([`Shell::input_room`]): input is backpressured, never dropped. The tool's own commands
/// are small and always queued.
pub const INPUT_CAP: usize = 1 << 20;

/// A running bash on a PTY.
pub(crate) struct Shell {
    pid: i32,
    input: std::sync::mpsc::Sender<Vec<u8>>,
    /// Bytes typed and not yet written to the PTY.
    queued: std::sync::Arc<tokio::sync::watch::Sender<usize>>,
    master: Mutex<Box<dyn MasterPty + Send>>,
    /// The environment it was started with.
    started_env: std::collections::HashMap<String, String>,
}

impl std::fmt::Debug for Shell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shell").field("pid", &self.pid).finish()
    }
}

/// A freshly spawned shell and the stream of its output for the tool.
pub(crate) struct Spawned {
    /// The shell.
    pub shell: Shell,
    /// Its output parsed into events, bounded; closes when the PTY does.
    pub output: Inbox,
}

fn command(working_dir: &Path, vars: &PromptVars) -> CommandBuilder {
    let mut cmd = CommandBuilder::new("bash");
    // `+H`: no history expansion, so `!` in commands means what it says.
    cmd.args(["--norc", "--noprofile", "+H"]);
    cmd.cwd(working_dir);
    // The host's environment never passes whole: it holds the server's credentials. The shell
    // gets the agent's allowlist (`tandem_sdk::agent_env`), and no startup file or prompt hook
    // of the host's (`BASH_ENV`, `PS1`, ...) since none of those is on it.
    cmd.env_clear();
    for (key, value) in tandem_sdk::agent_env::agent_env() {
        cmd.env(key, value);
    }
    cmd.env("TERM", "xterm-256color");
    cmd.env("PS0", &vars.ps0);
    cmd.env("PS1", &vars.ps1);
    cmd.env("PS2", "");
    cmd.env("PROMPT_COMMAND", &vars.prompt_command);
    // Readline defaults only (bracketed paste on), whatever the user's inputrc says.
    cmd.env("INPUTRC", "/dev/null");
    cmd.env("HISTFILE", "/dev/null");
    cmd.env("HISTCONTROL", "ignorespace");
    // Nobody is there to press `q` in a pager.
    cmd.env("PAGER", "cat");
    cmd.env("GIT_PAGER", "cat");
    cmd.env("SYSTEMD_PAGER", "");
    cmd
}

fn io_error(e: impl std::fmt::Display) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// `builder` as a std command whose stdio is the PTY slave at `tty`.
fn std_command(builder: &CommandBuilder, tty: &Path) -> std::io::Result<std::process::Command> {
    let argv = builder.get_argv();
    let program = argv
        .first()
        .ok_or_else(|| std::io::Error::other("no program to run on the terminal"))?;
    let mut cmd = std::process::Command::new(program);
    cmd.args(&argv[1..]);
    if let Some(dir) = builder.get_cwd() {
        cmd.current_dir(dir);
    }
    cmd.env_clear();
    cmd.envs(builder.iter_full_env_as_str());
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(nix::libc::O_NOCTTY)
        .open(tty)?;
    cmd.stdin(slave.try_clone()?);
    cmd.stdout(slave.try_clone()?);
    cmd.stderr(slave);
    Ok(cmd)
}

/// Starts bash in `working_dir`, feeding its output to the tool and to `viewers`.
pub(crate) fn spawn(working_dir: &Path, viewers: FeedTx) -> std::io::Result<Spawned> {
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    let vars = PromptVars::new(&nonce);
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: DEFAULT_ROWS,
            cols: DEFAULT_COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .map_err(io_error)?;
    let tty = pair
        .master
        .tty_name()
        .ok_or_else(|| std::io::Error::other("the terminal has no name"))?;
    let mut builder = command(working_dir, &vars);
    // In a sandbox: as the agent's user, not the server's (see `agent_user`), with the same
    // scrubbed environment (its HOME the agent's).
    if let Some(user) = crate::agent_user::agent_user() {
        crate::agent_user::wrap_pty(user, &mut builder);
    }
    let started_env = builder
        .iter_full_env_as_str()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    let cmd = std_command(&builder, &tty)?;
    let mut child = tandem_process::spawn_std(cmd, Isolation::Terminal, Signal::SIGHUP)?;
    // The child holds its own copies of the slave; ours would keep the PTY open after it exits.
    drop(pair.slave);
    let pid = i32::try_from(child.id()).unwrap_or(-1);
    let mut reader = pair.master.try_clone_reader().map_err(io_error)?;
    let mut writer = pair.master.take_writer().map_err(io_error)?;

    let (mut tool_tx, tool_rx) = inbox(&nonce);
    std::thread::Builder::new()
        .name("terminal-reader".into())
        .spawn(move || {
            let mut buf = vec![0u8; READ_BUF];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let chunk = Bytes::copy_from_slice(&buf[..n]);
                        // The tool first, then viewers (and the recording), in one step: a
                        // marker of an event the tool reports waits until the output the tool
                        // saw is queued before it.
                        viewers.output(chunk, |chunk| tool_tx.push(chunk));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            // Reap the shell so it does not linger as a zombie.
            let _ = child.wait();
            drop(tool_tx);
        })?;

    // Unbounded by count, bounded by the bytes `queued` counts (viewers wait at INPUT_CAP).
    let (input_tx, input_rx) = std::sync::mpsc::channel::<Vec<u8>>();
    let queued = std::sync::Arc::new(tokio::sync::watch::Sender::new(0usize));
    let taken = std::sync::Arc::clone(&queued);
    std::thread::Builder::new()
        .name("terminal-writer".into())
        .spawn(move || {
            while let Ok(bytes) = input_rx.recv() {
                let written = writer.write_all(&bytes).and_then(|()| writer.flush());
                taken.send_modify(|q| *q = q.saturating_sub(bytes.len()));
                if written.is_err() {
                    break;
                }
            }
            // Nothing more will be written: whoever waits for room stops waiting.
            taken.send_replace(0);
        })?;

    Ok(Spawned {
        shell: Shell {
            pid,
            input: input_tx,
            queued,
            master: Mutex::new(pair.master),
            started_env,
        },
        output: tool_rx,
    })
}

impl Shell {
    /// The shell's process id.
    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// The environment the shell was started with.
    pub fn started_env(&self) -> &std::collections::HashMap<String, String> {
        &self.started_env
    }

    /// Queues `bytes` to be typed into the terminal; false when the shell is gone.
    pub fn write(&self, bytes: Vec<u8>) -> bool {
        let len = bytes.len();
        self.queued.send_modify(|q| *q += len);
        let sent = self.input.send(bytes).is_ok();
        if !sent {
            self.queued.send_modify(|q| *q = q.saturating_sub(len));
        }
        sent
    }

    /// Bytes typed and not yet taken by the terminal.
    pub fn queued_input(&self) -> usize {
        *self.queued.borrow()
    }

    /// Waits until less than [`INPUT_CAP`] of typed input waits (at once when the shell is
    /// gone).
    pub fn input_room(&self) -> impl std::future::Future<Output = ()> + Send + use<> {
        let mut rx = self.queued.subscribe();
        async move {
            let _ = rx.wait_for(|q| *q < INPUT_CAP).await;
        }
    }

    /// Changes the terminal size.
    pub fn resize(&self, rows: u16, cols: u16) -> std::io::Result<()> {
        let master = self.master.lock().unwrap_or_else(|e| e.into_inner());
        master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(io_error)
    }

    /// The terminal's foreground process group (the running command's, or the shell's).
    pub fn foreground_group(&self) -> Option<i32> {
        let master = self.master.lock().unwrap_or_else(|e| e.into_inner());
        master.process_group_leader()
    }

    /// Ends the shell and everything in its session: SIGHUP/SIGTERM, SIGKILL for what is
    /// left after a grace, from a thread of its own (blocking only to read `/proc`).
    pub fn kill(&self) {
        // The session tree holds the shell itself.
        process::stop_all(self.pid, &process::session_tree(self.pid));
    }
}
