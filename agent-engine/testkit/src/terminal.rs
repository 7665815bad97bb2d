//! Running a program on a real terminal in tests, through util-linux `script`.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// Runs shell command `line` on a fresh pseudo-terminal (util-linux `script`) with the
/// environment set on `env` (its program is not run), types `input` into it (the answers wait
/// in the terminal's line buffer until the program reads them) and returns what it printed
/// once it exits. Panics, after killing it, when it runs longer than `timeout`.
pub fn run_on_terminal(env: &Command, line: &str, input: &[u8], timeout: Duration) -> Output {
    let mut cmd = Command::new("script");
    cmd.args(["-qfec", line, "/dev/null"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start `script`: {e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    stdin
        .write_all(input)
        .unwrap_or_else(|e| panic!("typing into the terminal: {e}"));
    let pid = child.id();
    let (tx, rx) = mpsc::channel();
    // Output is read as it comes (a full pipe would stall the program); stdin stays open until
    // the program is done, as `script` ends the session when its input closes.
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(out) => {
            drop(stdin);
            out.unwrap_or_else(|e| panic!("waiting for `{line}`: {e}"))
        }
        Err(_) => {
            if let Ok(pid) = i32::try_from(pid) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
            panic!("`{line}` did not finish within {timeout:?} on the terminal");
        }
    }
}
