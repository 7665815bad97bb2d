//! The store's git: a bare repository under `$TANDEM_HOME` whose work tree is the workspace,
//! with its own index, run with no user or system config, no hooks and no signing.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use nix::sys::signal::Signal;

use crate::error::{CheckpointError, Result};

/// Settings every command runs with, whatever the machine's git config says.
const CONFIG: &[&str] = &[
    "core.hooksPath=/dev/null",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "safe.directory=*",
    "core.quotePath=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.symlinks=true",
    "core.fileMode=true",
    "core.untrackedCache=true",
    "core.preloadIndex=true",
    "core.fsmonitor=false",
    "index.version=4",
    "gc.auto=0",
    "maintenance.auto=false",
    "advice.addEmbeddedRepo=false",
    "diff.renames=false",
];

/// Runs git commands against one store.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    /// The store's directory (holds `git/` and `index`).
    pub store: PathBuf,
    /// The work tree.
    pub workspace: PathBuf,
    /// Settings of this store's kind on top of [`CONFIG`] (the system store's).
    pub extra: &'static [&'static str],
}

impl Git {
    pub fn git_dir(&self) -> PathBuf {
        self.store.join("git")
    }

    /// git with nothing of the host's environment but `PATH`, and no user or system config.
    fn bare_command(&self) -> Command {
        let mut c = Command::new("git");
        c.env_clear();
        if let Some(path) = std::env::var_os("PATH") {
            c.env("PATH", path);
        }
        c.env("HOME", &self.store)
            .env("LC_ALL", "C")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null");
        c
    }

    fn command(&self, args: &[&str]) -> Command {
        self.command_on(&self.workspace, &self.store.join("index"), args)
    }

    /// A store command whose work tree and index are elsewhere (a fork's worktree).
    pub fn command_on(&self, work_tree: &Path, index: &Path, args: &[&str]) -> Command {
        let mut c = self.bare_command();
        c.env("GIT_DIR", self.git_dir())
            .env("GIT_WORK_TREE", work_tree)
            .env("GIT_INDEX_FILE", index)
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_AUTHOR_NAME", "Tandem")
            .env("GIT_AUTHOR_EMAIL", "checkpoints@tandem.invalid")
            .env("GIT_COMMITTER_NAME", "Tandem")
            .env("GIT_COMMITTER_EMAIL", "checkpoints@tandem.invalid")
            .env("GIT_TERMINAL_PROMPT", "0")
            .current_dir(work_tree);
        for setting in CONFIG.iter().chain(self.extra) {
            c.args(["-c", setting]);
        }
        c.args(args);
        c
    }

    fn failed(&self, args: &[&str], stderr: &[u8]) -> CheckpointError {
        let text = String::from_utf8_lossy(stderr);
        let tail: Vec<&str> = text.lines().rev().take(4).collect();
        CheckpointError::Git {
            store: self.store.clone(),
            command: args.iter().take(2).copied().collect::<Vec<_>>().join(" "),
            stderr: tail.into_iter().rev().collect::<Vec<_>>().join("; "),
        }
    }

    /// Runs `git ARGS` and returns its stdout.
    pub fn run(&self, args: &[&str]) -> Result<Vec<u8>> {
        self.run_with_input(args, None)
    }

    /// Runs `git ARGS` with `input` on stdin.
    pub fn run_with_input(&self, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>> {
        self.output(self.command(args), args, input)
    }

    /// Runs git in the user's repository at `dir` (the workspace's own, for a fork's
    /// worktree): their repository config applies, but no hooks, no fsmonitor and nothing of
    /// the host's environment or global config.
    pub fn run_user(&self, dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
        let mut c = self.bare_command();
        c.current_dir(dir).env("GIT_TERMINAL_PROMPT", "0");
        for setting in [
            "core.hooksPath=/dev/null",
            "core.fsmonitor=false",
            "core.quotePath=false",
        ] {
            c.args(["-c", setting]);
        }
        c.args(args);
        self.output(c, args, None)
    }

    /// Runs a prepared command; its stdout, or an error with what git said.
    pub fn output(&self, mut c: Command, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>> {
        c.stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
        let mut child = spawn(c)?;
        if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
            // A writer thread: git may fill its stdout before it reads all its input.
            let bytes = bytes.to_vec();
            std::thread::spawn(move || {
                let _ = stdin.write_all(&bytes);
            });
        }
        let out = child.wait_with_output().map_err(CheckpointError::NoGit)?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(self.failed(args, &out.stderr))
        }
    }

    /// Runs `git ARGS` and returns its stdout as one trimmed line.
    pub fn line(&self, args: &[&str]) -> Result<String> {
        let out = self.run(args)?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// Removes the lock files a git killed mid-command left (its owner died). Only called
    /// under the store's lock, when no git of this store runs.
    pub fn clear_stale_locks(&self) {
        let dir = self.git_dir();
        for lock in [
            self.store.join("index.lock"),
            dir.join("refs/tandem/checkpoints.lock"),
            dir.join("HEAD.lock"),
            dir.join("config.lock"),
        ] {
            if std::fs::remove_file(&lock).is_ok() {
                tracing::warn!(lock = %lock.display(), "removed a lock a stopped git left");
            }
        }
    }

    /// Forgets the store's index; the next `add` hashes the whole workspace again.
    pub fn drop_index(&self) {
        let _ = std::fs::remove_file(self.store.join("index"));
    }

    /// Whether the store's repository exists.
    pub fn exists(&self) -> bool {
        self.git_dir().join("HEAD").is_file()
    }

    /// Creates the store's repository.
    pub fn init(&self) -> Result<()> {
        std::fs::create_dir_all(&self.store)
            .map_err(|e| CheckpointError::io("create", &self.store, e))?;
        let dir = self.git_dir();
        let mut c = self.bare_command();
        c.args(["init", "--quiet", "--bare"])
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let out = spawn(c)?
            .wait_with_output()
            .map_err(CheckpointError::NoGit)?;
        if !out.status.success() {
            return Err(self.failed(&["init", "--bare"], &out.stderr));
        }
        // Not bare after all: the workspace is its work tree.
        self.run(&["config", "core.bare", "false"])?;
        Ok(())
    }

    /// The size of each of `ids` (in order), `None` for an object the store does not have.
    pub fn sizes(&self, ids: &[String]) -> Result<Vec<Option<u64>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let mut input = ids.join("\n");
        input.push('\n');
        let out = self.run_with_input(&["cat-file", "--batch-check"], Some(input.as_bytes()))?;
        let text = String::from_utf8_lossy(&out);
        // "ID TYPE SIZE", or "ID missing".
        let mut sizes: Vec<Option<u64>> = text
            .lines()
            .map(|l| match l.split(' ').collect::<Vec<_>>().as_slice() {
                [_, _, size] => size.parse().ok(),
                _ => None,
            })
            .collect();
        sizes.resize(ids.len(), None);
        Ok(sizes)
    }

    /// The blobs of `ids` (in order), read through one `git cat-file --batch`.
    pub fn blobs(&self, ids: &[String]) -> Result<Vec<Vec<u8>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let args = ["cat-file", "--batch"];
        let mut c = self.command(&args);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = spawn(c)?;
        let mut input = String::new();
        for id in ids {
            input.push_str(id);
            input.push('\n');
        }
        let mut stdin = child.stdin.take();
        let writer = std::thread::spawn(move || {
            if let Some(s) = stdin.as_mut() {
                let _ = s.write_all(input.as_bytes());
            }
        });
        let mut out = BufReader::new(child.stdout.take().ok_or_else(|| {
            CheckpointError::NoGit(std::io::Error::other("git cat-file has no stdout"))
        })?);
        let mut blobs = Vec::with_capacity(ids.len());
        let mut header = String::new();
        let read_error = |e| CheckpointError::io("read", self.git_dir(), e);
        for id in ids {
            header.clear();
            out.read_line(&mut header).map_err(read_error)?;
            let fields: Vec<&str> = header.split_whitespace().collect();
            let size = match fields.as_slice() {
                [_, "blob", size] => size.parse::<usize>().ok(),
                _ => None,
            };
            let Some(size) = size else {
                let _ = child.kill();
                return Err(CheckpointError::Lost {
                    id: id.clone(),
                    detail: header.trim().to_owned(),
                });
            };
            let mut blob = vec![0; size + 1];
            out.read_exact(&mut blob).map_err(read_error)?;
            blob.pop();
            blobs.push(blob);
        }
        drop(out);
        let _ = writer.join();
        let _ = child.wait();
        Ok(blobs)
    }
}

/// Starts a git contained like every child of Tandem: a process group of its own and a
/// parent-death SIGTERM (on which git removes its lock files), so none outlives the server.
fn spawn(c: Command) -> Result<std::process::Child> {
    tandem_process::spawn_std(c, tandem_process::Isolation::Group, Signal::SIGTERM)
        .map_err(CheckpointError::NoGit)
}

/// Splits NUL-separated git output.
pub(crate) fn nul_fields(out: &[u8]) -> impl Iterator<Item = String> + '_ {
    out.split(|b| *b == 0)
        .filter(|f| !f.is_empty())
        .map(|f| String::from_utf8_lossy(f).into_owned())
}
