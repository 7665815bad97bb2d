//! The user the agent's commands run as, when it is not the server's own.
//!
//! In a sandbox the server runs as root and keeps its keys in files only root can read, while
//! everything the agent runs (the terminal's bash, `/api/bash` commands, MCP stdio servers,
//! Chromium through its launcher) runs as the workspace's owner: another uid cannot read the server's
//! `/proc/<pid>/environ`, its open files or its key files. `tandem serve` learns that user from
//! `TANDEM_AGENT_UID` and `TANDEM_AGENT_GID` (and `TANDEM_AGENT_HOME`, the agent's `HOME`),
//! which the sandbox's entrypoint sets; without them commands run as the server (local mode,
//! where the agent runs as the person).
//!
//! Processes on a PTY are started through `setpriv` (their command is built as a portable-pty
//! `CommandBuilder`, which has no uid setting), keeping the parent-death signal `tandem_process`
//! gives them; `tokio::process` commands switch with `uid`/`gid` (the standard library then
//! also drops the supplementary groups, and sets the uid before `tandem_process`'s parent-death
//! signal, which therefore stays). Either way they get the agent's scrubbed environment
//! (`tandem_sdk::agent_env`) with the agent's `HOME`, the switch from root to another uid leaves
//! the process no capabilities, and no setuid binary gives any back: the sandbox's server runs
//! with no-new-privs, which its children inherit.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The uid and gid the agent's commands take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentUser {
    /// Its user id.
    pub uid: u32,
    /// Its group id.
    pub gid: u32,
    /// Its `HOME`, when known.
    pub home: Option<PathBuf>,
}

/// Why the agent's user cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentUserError {
    /// A variable that is not a numeric id.
    #[error("{name}={value:?} is not a numeric id (expected a number such as 1000)")]
    NotAnId {
        /// The variable.
        name: &'static str,
        /// Its value.
        value: String,
    },
}

impl AgentUser {
    /// The agent's user named by `var` (`TANDEM_AGENT_UID`, `TANDEM_AGENT_GID` (default: the
    /// uid), `TANDEM_AGENT_HOME`); none without `TANDEM_AGENT_UID`.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Option<Self>, AgentUserError> {
        let id = |name: &'static str| -> Result<Option<u32>, AgentUserError> {
            match var(name)
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
            {
                None => Ok(None),
                Some(v) => v
                    .parse()
                    .map(Some)
                    .map_err(|_| AgentUserError::NotAnId { name, value: v }),
            }
        };
        let Some(uid) = id("TANDEM_AGENT_UID")? else {
            return Ok(None);
        };
        let gid = id("TANDEM_AGENT_GID")?.unwrap_or(uid);
        let home = var("TANDEM_AGENT_HOME")
            .filter(|h| !h.trim().is_empty())
            .map(PathBuf::from);
        Ok(Some(Self { uid, gid, home }))
    }

    /// Whether this process must switch users to become it (it runs as someone else).
    pub fn differs_from_this_process(&self) -> bool {
        this_process_ids() != Some((self.uid, self.gid))
    }

    /// The `setpriv` command line that starts a program as this user (the program and its
    /// arguments follow it), keeping the parent-death signal [`crate::spawn_std`] gives it;
    /// none when this process already is this user.
    pub fn setpriv_prefix(&self) -> Option<Vec<String>> {
        if !self.differs_from_this_process() {
            return None;
        }
        Some(vec![
            "setpriv".into(),
            format!("--reuid={}", self.uid),
            format!("--regid={}", self.gid),
            "--clear-groups".into(),
            "--inh-caps=-all".into(),
            "--no-new-privs".into(),
            // The parent-death signal set at spawn survives the switch (a change of uid
            // clears it otherwise): the process still dies with the server.
            "--pdeathsig=keep".into(),
            "--".into(),
        ])
    }

    /// `cmd` started as this user (its `HOME` too, when known). The uid is set before the
    /// parent-death signal of [`crate::spawn_tokio`] (the standard library switches users
    /// before it runs `pre_exec` hooks), so that signal stays.
    pub fn apply(&self, cmd: &mut tokio::process::Command) {
        self.apply_std(cmd.as_std_mut());
    }

    /// [`apply`](Self::apply) for a standard library command. Its `HOME` is the user's also
    /// when no switch is needed (an agent running as root beside a root server).
    pub fn apply_std(&self, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        if let Some(home) = &self.home {
            cmd.env("HOME", home);
        }
        if self.differs_from_this_process() {
            cmd.uid(self.uid).gid(self.gid);
        }
    }

    /// Gives `path` (made by the server for the agent, e.g. a file the file editor created) to
    /// this user, so that it belongs to the workspace's owner rather than to the server.
    pub fn adopt(&self, path: &Path) {
        if !self.differs_from_this_process() {
            return;
        }
        if let Err(e) = std::os::unix::fs::chown(path, Some(self.uid), Some(self.gid)) {
            tracing::warn!("cannot give {} to uid {}: {e}", path.display(), self.uid);
        }
    }
}

/// The agent's user of this process (read once from its environment), or none: commands run as
/// the server. Malformed variables fail closed: the agent's commands then run as `nobody`
/// (65534), never as the server, and the reason is logged.
pub fn agent_user() -> Option<&'static AgentUser> {
    static USER: OnceLock<Option<AgentUser>> = OnceLock::new();
    USER.get_or_init(|| match AgentUser::from_vars(|n| std::env::var(n).ok()) {
        Ok(user) => user,
        Err(e) => {
            tracing::error!("{e}: the agent's commands run as nobody (65534)");
            Some(AgentUser {
                uid: NOBODY,
                gid: NOBODY,
                home: None,
            })
        }
    })
    .as_ref()
}

/// The effective uid and gid of this process, from `/proc/self/status` (not the owner of
/// `/proc/self`, which is root once the process is undumpable: [`crate::keep_memory_private`]).
fn this_process_ids() -> Option<(u32, u32)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    // `Uid:\treal\teffective\tsaved\tfs`.
    let effective = |key: &str| -> Option<u32> {
        let line = status.lines().find_map(|l| l.strip_prefix(key))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((effective("Uid:")?, effective("Gid:")?))
}

/// `nobody`'s uid and gid.
const NOBODY: u32 = 65534;

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |n| {
            pairs
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn the_user_comes_from_the_variables() {
        assert_eq!(AgentUser::from_vars(vars(&[])), Ok(None));
        let u = AgentUser::from_vars(vars(&[("TANDEM_AGENT_UID", "2345")]))
            .unwrap()
            .unwrap();
        assert_eq!((u.uid, u.gid, u.home), (2345, 2345, None));
        let u = AgentUser::from_vars(vars(&[
            ("TANDEM_AGENT_UID", "2345"),
            ("TANDEM_AGENT_GID", "77"),
            ("TANDEM_AGENT_HOME", "/home/agent"),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!((u.uid, u.gid), (2345, 77));
        assert_eq!(u.home.as_deref(), Some(Path::new("/home/agent")));
        let e = AgentUser::from_vars(vars(&[("TANDEM_AGENT_UID", "bob")])).unwrap_err();
        assert!(e.to_string().contains("TANDEM_AGENT_UID=\"bob\""), "{e}");
    }

    #[test]
    fn this_process_is_known_by_its_effective_ids() {
        use std::os::unix::fs::MetadataExt;
        // A file this process creates carries its effective uid and gid.
        let made = std::env::temp_dir().join(format!("tandem-ids-{}", std::process::id()));
        std::fs::write(&made, "").unwrap();
        let m = std::fs::metadata(&made).unwrap();
        let _ = std::fs::remove_file(&made);
        assert_eq!(this_process_ids(), Some((m.uid(), m.gid())));
    }

    #[test]
    fn setpriv_is_asked_only_for_another_user() {
        let (uid, gid) = this_process_ids().unwrap();
        let me = AgentUser {
            uid,
            gid,
            home: None,
        };
        assert_eq!(me.setpriv_prefix(), None);
        let other = AgentUser {
            uid: uid + 1,
            gid: 4321,
            home: None,
        };
        let argv = other.setpriv_prefix().unwrap();
        assert_eq!(argv[0], "setpriv");
        assert!(argv.contains(&format!("--reuid={}", uid + 1)));
        assert!(argv.contains(&"--regid=4321".to_owned()));
        assert!(argv.contains(&"--pdeathsig=keep".to_owned()));
        assert_eq!(argv.last().map(String::as_str), Some("--"));
    }
}
