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
