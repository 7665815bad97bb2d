//! Finding and killing the processes a command started, by walking `/proc`.
//!
//! bash runs each command line as its own process group (job control is on in an interactive
//! shell), which is the terminal's foreground group while it runs. Stopping a command kills that
//! group and every descendant of its members (children that moved to another group included);
//! background jobs of earlier commands are left alone. Resetting the shell kills its whole
//! session. These functions read `/proc` and are meant for blocking threads.

use std::collections::{BTreeSet, HashMap};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// One line of `/proc/<pid>/stat`, the fields we need.
#[derive(Debug, Clone, Copy)]
struct ProcStat {
    pid: i32,
    ppid: i32,
    pgrp: i32,
    session: i32,
}

fn read_stat(pid: i32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp session ...`; comm may hold spaces and parentheses.
    let after = &text[text.rfind(')')? + 1..];
    let mut fields = after.split_ascii_whitespace();
    let state = fields.next()?;
    if state == "Z" || state == "X" {
        return None;
    }
    let ppid = fields.next()?.parse().ok()?;
    let pgrp = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some(ProcStat {
        pid,
        ppid,
        pgrp,
        session,
    })
}

fn all_processes() -> Vec<ProcStat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(read_stat)
        .collect()
}

/// `roots` and all their live descendants.
fn with_descendants(procs: &[ProcStat], roots: BTreeSet<i32>) -> BTreeSet<i32> {
    let mut children: HashMap<i32, Vec<i32>> = HashMap::new();
    for p in procs {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut all = roots.clone();
    let mut stack: Vec<i32> = roots.into_iter().collect();
    while let Some(pid) = stack.pop() {
        for &c in children.get(&pid).map(Vec::as_slice).unwrap_or_default() {
            if all.insert(c) {
                stack.push(c);
            }
        }
    }
    all
}

/// The processes of the foreground job `pgrp` and their descendants, never the shell itself.
pub(crate) fn job_tree(shell_pid: i32, pgrp: i32) -> BTreeSet<i32> {
    if pgrp <= 1 || pgrp == shell_pid {
        return BTreeSet::new();
    }
    let procs = all_processes();
    let members = procs
        .iter()
        .filter(|p| p.pgrp == pgrp)
        .map(|p| p.pid)
        .collect();
    let mut tree = with_descendants(&procs, members);
    tree.remove(&shell_pid);
    tree
}

/// How long a closed shell's processes get to end after SIGHUP/SIGTERM before SIGKILL.
pub(crate) const CLOSE_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// Ends a shell and `pids` (its session) as a closed terminal would: SIGHUP to the shell
/// (an interactive bash ignores SIGTERM, and hangs up its jobs on SIGHUP), SIGTERM to the
/// others, SIGCONT so stopped ones see it; whatever is still alive after [`CLOSE_GRACE`] gets
/// SIGKILL from a thread of its own, so the caller never waits.
pub(crate) fn stop_all(shell_pid: i32, pids: &BTreeSet<i32>) {
    let own = std::process::id() as i32;
    let targets: Vec<ProcStat> = pids
        .iter()
        .filter(|&&pid| pid > 1 && pid != own)
        .filter_map(|&pid| read_stat(pid))
        .collect();
    if targets.is_empty() {
        return;
    }
    for p in &targets {
        let first = if p.pid == shell_pid {
            Signal::SIGHUP
        } else {
            Signal::SIGTERM
        };
        let _ = kill(Pid::from_raw(p.pid), first);
        let _ = kill(Pid::from_raw(p.pid), Signal::SIGCONT);
    }
    let reaper = move || {
        let deadline = std::time::Instant::now() + CLOSE_GRACE;
        // The same process still: same pid and session (a pid reused meanwhile is left alone).
        let alive = |t: &ProcStat| read_stat(t.pid).is_some_and(|now| now.session == t.session);
        while std::time::Instant::now() < deadline {
            if !targets.iter().any(alive) {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(25));
        }
        for t in targets.iter().filter(|t| alive(t)) {
            let _ = kill(Pid::from_raw(t.pid), Signal::SIGKILL);
        }
    };
    if std::thread::Builder::new()
        .name("terminal-close".into())
        .spawn(reaper)
        .is_err()
    {
        // No thread to wait with: at once.
        kill_all(pids);
    }
}

/// Everything in the shell's session and everything descended from the shell.
pub(crate) fn session_tree(shell_pid: i32) -> BTreeSet<i32> {
    if shell_pid <= 1 {
        return BTreeSet::new();
    }
    let procs = all_processes();
    let mut roots: BTreeSet<i32> = procs
        .iter()
        .filter(|p| p.session == shell_pid)
        .map(|p| p.pid)
        .collect();
    roots.insert(shell_pid);
    with_descendants(&procs, roots)
}

/// Sends SIGKILL to each pid (ones already gone are skipped silently).
pub(crate) fn kill_all(pids: &BTreeSet<i32>) {
    let own = std::process::id() as i32;
    for &pid in pids {
        if pid > 1 && pid != own {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
}
