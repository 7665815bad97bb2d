//! The user the agent's commands run as in a sandbox (see [`tandem_process::agent_user`],
//! where it is defined so that every spawner, MCP stdio servers included, can take it), and
//! how a command on a PTY becomes that user: behind `setpriv`, since its command is built as a
//! portable-pty `CommandBuilder`, which has no uid setting.

use portable_pty::CommandBuilder;
pub use tandem_process::agent_user::{AgentUser, AgentUserError, agent_user};

/// `cmd` started as `user`: its program and arguments behind `setpriv` (not when this process
/// already is that user), its `HOME` the user's when known (also then: an agent running as
/// root beside a root server has its own home, not the server's).
pub fn wrap_pty(user: &AgentUser, cmd: &mut CommandBuilder) {
    if let Some(home) = &user.home {
        cmd.env("HOME", home);
    }
    let Some(prefix) = user.setpriv_prefix() else {
        return;
    };
    let argv = cmd.get_argv_mut();
    let mut wrapped: Vec<std::ffi::OsString> = prefix.into_iter().map(Into::into).collect();
    wrapped.append(argv);
    *argv = wrapped;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_pty_command_is_started_through_setpriv_only_for_another_user() {
        let m = std::fs::metadata("/proc/self").unwrap();
        let me = AgentUser {
            uid: m.uid(),
            gid: m.gid(),
            home: None,
        };
        let mut cmd = CommandBuilder::new("bash");
        wrap_pty(&me, &mut cmd);
        assert_eq!(cmd.get_argv(), &vec![std::ffi::OsString::from("bash")]);
        // The same user with a home of its own: no setpriv, that home.
        let rooted = AgentUser {
            home: Some("/root".into()),
            ..me.clone()
        };
        let mut cmd = CommandBuilder::new("bash");
        wrap_pty(&rooted, &mut cmd);
        assert_eq!(cmd.get_argv(), &vec![std::ffi::OsString::from("bash")]);
        assert_eq!(cmd.get_env("HOME"), Some(std::ffi::OsStr::new("/root")));

        let other = AgentUser {
            uid: me.uid + 1,
            gid: 4321,
            home: Some("/home/agent".into()),
        };
        let mut cmd = CommandBuilder::new("bash");
        cmd.arg("--norc");
        wrap_pty(&other, &mut cmd);
        let argv: Vec<String> = cmd
            .get_argv()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(argv[0], "setpriv");
        assert!(argv.contains(&format!("--reuid={}", me.uid + 1)));
        assert!(argv.contains(&"--regid=4321".to_owned()));
        assert!(argv.contains(&"--pdeathsig=keep".to_owned()));
        assert_eq!(&argv[argv.len() - 3..], ["--", "bash", "--norc"]);
        assert_eq!(
            cmd.get_env("HOME"),
            Some(std::ffi::OsStr::new("/home/agent"))
        );
    }
}
