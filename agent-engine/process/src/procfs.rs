//! What `/proc` says about processes: groups, start times and owner markers.

use std::path::Path;

use crate::OWNER_VAR;

/// The fields of `/proc/<pid>/stat` this crate needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stat {
    pub pid: i32,
    pub pgrp: i32,
    /// Clock ticks after boot.
    pub start: u64,
}

/// The stat of a live (not zombie) process.
pub(crate) fn stat(pid: i32) -> Option<Stat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // `pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
    // utime stime cutime cstime priority nice num_threads itrealvalue starttime ...`; comm may
    // hold spaces and parentheses.
    let after = text.get(text.rfind(')')? + 1..)?;
    let fields: Vec<&str> = after.split_ascii_whitespace().collect();
    let state = *fields.first()?;
    if state == "Z" || state == "X" {
        return None;
    }
    Some(Stat {
        pid,
        pgrp: fields.get(2)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Every live process visible in `/proc`.
pub(crate) fn all() -> Vec<Stat> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(stat)
        .collect()
}

/// Whether any live process is in group `pgid`.
pub(crate) fn group_alive(pgid: i32) -> bool {
    all().iter().any(|p| p.pgrp == pgid)
}

/// The start time of `pid`, in clock ticks after boot.
pub(crate) fn start_time(pid: i32) -> Option<u64> {
    stat(pid).map(|s| s.start)
}

/// The inode of this process's pid namespace (0 when unreadable).
pub(crate) fn pid_namespace() -> u64 {
    std::fs::read_link(Path::new("/proc/self/ns/pid"))
        .ok()
        .and_then(|target| {
            // `pid:[4026531836]`
            let text = target.to_string_lossy().into_owned();
            text.trim_start_matches("pid:[")
                .trim_end_matches(']')
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// The owner marker in the environment `pid` started with, if it has one and it is readable.
pub(crate) fn marker_of(pid: i32) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{OWNER_VAR}=");
    environ
        .split(|&b| b == 0)
        .find_map(|entry| entry.strip_prefix(prefix.as_bytes()))
        .map(|value| String::from_utf8_lossy(value).into_owned())
}

/// `<namespace>:<pid>:<start>`.
pub(crate) fn parse_marker(marker: &str) -> Option<(u64, i32, u64)> {
    let mut parts = marker.split(':');
    let ns = parts.next()?.parse().ok()?;
    let pid = parts.next()?.parse().ok()?;
    let start = parts.next()?.parse().ok()?;
    parts.next().is_none().then_some((ns, pid, start))
}

/// Whether the process `pid` that started at `start` (clock ticks after boot) is still alive.
pub fn owner_alive(pid: i32, start: u64) -> bool {
    start_time(pid) == Some(start)
}

/// The live processes that carry `marker` (one server's children and their descendants).
pub fn marked_by(marker: &str) -> Vec<i32> {
    all()
        .into_iter()
        .filter(|p| marker_of(p.pid).as_deref() == Some(marker))
        .map(|p| p.pid)
        .collect()
}

/// The live processes that carry `marker`, and every member of the process groups they lead
/// (a process whose environment cannot be read, such as a Chromium helper in a namespace of
/// its own, is found through its group).
pub fn marked_with_groups(marker: &str) -> Vec<i32> {
    let procs = all();
    let marked: Vec<Stat> = procs
        .iter()
        .filter(|p| marker_of(p.pid).as_deref() == Some(marker))
        .copied()
        .collect();
    let groups: Vec<i32> = marked
        .iter()
        .filter(|p| p.pgrp == p.pid)
        .map(|p| p.pgrp)
        .collect();
    let mut pids: Vec<i32> = procs
        .iter()
        .filter(|p| groups.contains(&p.pgrp) || marked.iter().any(|m| m.pid == p.pid))
        .map(|p| p.pid)
        .collect();
    pids.sort_unstable();
    pids
}

/// The marker the children of the process `pid` carry (in this pid namespace).
pub fn marker_for(pid: i32) -> Option<String> {
    Some(format!("{}:{pid}:{}", pid_namespace(), start_time(pid)?))
}
