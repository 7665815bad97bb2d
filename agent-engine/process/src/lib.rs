//! Tandem's children die with their owner.
//!
//! Every process Tandem starts (Chromium, MCP stdio servers, the agent's shells, `/api/bash`
//! commands) is spawned through this crate, which gives it three things:
//!
//! - **Its own process group** (or session, for a shell on a PTY), so closing it reaches
//!   everything it started: [`stop_group`] sends SIGTERM to the group, then SIGKILL after a
//!   grace.
//! - **A parent-death signal** (`PR_SET_PDEATHSIG`), so a `kill -9` of the server takes it
//!   along. Linux sends that signal when the *thread* that forked the child exits, not when the
//!   process does: a child spawned from a blocking-pool thread would die when that thread idles
//!   out. So every spawn runs on one long-lived thread of this crate ([`on_spawner_thread`]).
//!   The child re-checks `getppid` after setting the signal: if the server died between `fork`
//!   and `prctl`, the signal would never come, and the spawn fails instead.
//! - **A marker** in its environment, [`OWNER_VAR`]`=<pid namespace>:<pid>:<start time>` of the
//!   server, which its descendants inherit. At start, [`sweep`] kills the processes whose
//!   marker names an owner that is no longer alive: only Tandem's, only dead owners', never a
//!   live server's children (its pid and start time still match).

use std::io;
use std::os::unix::process::CommandExt;
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

pub mod agent_user;
mod procfs;

pub use procfs::{marked_by, marked_with_groups, marker_for, owner_alive};

/// The environment variable that marks a process as started by a Tandem server.
pub const OWNER_VAR: &str = "TANDEM_OWNER";

/// The usual grace between SIGTERM and SIGKILL when a child is closed.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(2);

/// How a child is separated from the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// A process group of its own (`setpgid(0, 0)`).
    Group,
    /// A session of its own (`setsid`), and so a group of its own.
    Session,
    /// A session of its own whose controlling terminal is its stdin (a PTY's slave).
    Terminal,
}

/// Keeps this process's memory and environment from other processes of the same user: not
/// dumpable (`PR_SET_DUMPABLE` 0), so `/proc/<pid>/environ` and `/proc/<pid>/mem` belong to
/// root and ptrace needs `CAP_SYS_PTRACE`; no core dumps either. A server holds session keys
/// and provider keys; the agent's commands run as the same user locally. Call it first thing
/// in `main` (an `exec` resets it; the children Tandem starts are dumpable again).
pub fn keep_memory_private() -> io::Result<()> {
    nix::sys::prctl::set_dumpable(false).map_err(io::Error::from)
}

/// This server's marker: `<pid namespace>:<pid>:<start time>`.
pub fn owner_marker() -> &'static str {
    static MARKER: OnceLock<String> = OnceLock::new();
    MARKER.get_or_init(|| {
        let pid = std::process::id() as i32;
        marker_for(pid).unwrap_or_else(|| format!("{}:{pid}:0", procfs::pid_namespace()))
    })
}

/// Prepares `cmd` so its process is contained: `isolation`, the parent-death signal
/// `death_signal` and the owner marker. Spawn it with [`spawn_std`] or [`spawn_tokio`] (or
/// inside [`on_spawner_thread`]) so the death signal is tied to a thread that lives as long as
/// the server.
pub fn contain(cmd: &mut std::process::Command, isolation: Isolation, death_signal: Signal) {
    cmd.env(OWNER_VAR, owner_marker());
    install_pre_exec(cmd, isolation, death_signal, std::process::id() as i32);
}

/// The one place in Tandem with `unsafe`: the hook that runs in the child between `fork` and
/// `exec`.
#[allow(unsafe_code)]
fn install_pre_exec(
    cmd: &mut std::process::Command,
    isolation: Isolation,
    death_signal: Signal,
    parent: i32,
) {
    use nix::libc;
    use nix::unistd::{getppid, setpgid, setsid};

    // SAFETY: `pre_exec` runs the closure in the forked child, where only async-signal-safe
    // functions may be called. The closure makes plain system calls (setpgid, setsid,
    // ioctl(TIOCSCTTY), prctl(PR_SET_PDEATHSIG), getppid) through thin wrappers that neither
    // allocate nor lock, and builds `io::Error`s from raw errno values (no allocation). It
    // captures only `Copy` values, so nothing of the parent's heap is touched. The ioctl
    // passes fd 0 (the PTY slave the caller set as stdin) and an integer argument, as the
    // kernel expects for TIOCSCTTY.
    unsafe {
        cmd.pre_exec(move || {
            match isolation {
                Isolation::Group => setpgid(Pid::from_raw(0), Pid::from_raw(0))?,
                Isolation::Session => {
                    setsid()?;
                }
                Isolation::Terminal => {
                    setsid()?;
                    if libc::ioctl(0, libc::TIOCSCTTY, 0) == -1 {
                        return Err(io::Error::last_os_error());
                    }
                }
            }
            nix::sys::prctl::set_pdeathsig(death_signal)?;
            // The server may have died between fork and prctl: then no signal would ever come.
            if getppid().as_raw() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

type Job = Box<dyn FnOnce() + Send>;

thread_local! {
    static ON_SPAWNER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn spawner() -> Option<&'static mpsc::Sender<Job>> {
    static SPAWNER: OnceLock<Option<mpsc::Sender<Job>>> = OnceLock::new();
    SPAWNER
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<Job>();
            let started = std::thread::Builder::new()
                .name("tandem-spawner".into())
                .spawn(move || {
                    ON_SPAWNER.with(|f| f.set(true));
                    while let Ok(job) = rx.recv() {
                        // A panicking job must not take the thread (and every later spawn)
                        // with it.
                        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                    }
                });
            match started {
                Ok(_) => Some(tx),
                Err(e) => {
                    tracing::error!(error = %e, "the process spawner thread could not start");
                    None
                }
            }
        })
        .as_ref()
}

fn submit(job: Job) -> io::Result<()> {
    if ON_SPAWNER.with(std::cell::Cell::get) {
        job();
        return Ok(());
    }
    let tx =
        spawner().ok_or_else(|| io::Error::other("the process spawner thread is not running"))?;
    tx.send(job)
        .map_err(|_| io::Error::other("the process spawner thread has ended"))
}

/// Runs `job` on the long-lived spawner thread and waits for its result (blocking). Children
/// forked there get their parent-death signal only when the server itself exits.
pub fn on_spawner_thread<T: Send + 'static>(
    job: impl FnOnce() -> T + Send + 'static,
) -> io::Result<T> {
    let (tx, rx) = mpsc::sync_channel(1);
    submit(Box::new(move || {
        let _ = tx.send(job());
    }))?;
    rx.recv()
        .map_err(|_| io::Error::other("the process spawner thread dropped a spawn"))
}

/// Spawns `cmd` contained (see [`contain`]) from the spawner thread.
pub fn spawn_std(
    mut cmd: std::process::Command,
    isolation: Isolation,
    death_signal: Signal,
) -> io::Result<std::process::Child> {
    contain(&mut cmd, isolation, death_signal);
    on_spawner_thread(move || cmd.spawn())?
}

/// Spawns `cmd` contained (see [`contain`]) from the spawner thread, without blocking the
/// runtime. Must be called within a tokio runtime (the child's pipes and exit status are
/// driven by it).
pub async fn spawn_tokio(
    mut cmd: tokio::process::Command,
    isolation: Isolation,
    death_signal: Signal,
) -> io::Result<tokio::process::Child> {
    contain(cmd.as_std_mut(), isolation, death_signal);
    let handle = tokio::runtime::Handle::current();
    let (tx, rx) = tokio::sync::oneshot::channel();
    submit(Box::new(move || {
        let _runtime = handle.enter();
        let _ = tx.send(cmd.spawn());
    }))?;
    rx.await
        .map_err(|_| io::Error::other("the process spawner thread dropped a spawn"))?
}

fn own_group() -> i32 {
    nix::unistd::getpgrp().as_raw()
}

/// Sends `signal` to the group `pgid` (never to the server's own group, nor to init's).
pub fn signal_group(pgid: i32, signal: Signal) {
    if pgid > 1 && pgid != own_group() {
        // Already gone is fine.
        let _ = killpg(Pid::from_raw(pgid), signal);
    }
}

fn start_stop(pgid: i32) -> bool {
    if pgid <= 1 || pgid == own_group() || !procfs::group_alive(pgid) {
        return false;
    }
    signal_group(pgid, Signal::SIGTERM);
    // A stopped process gets SIGTERM only once it runs again.
    signal_group(pgid, Signal::SIGCONT);
    true
}

/// Closes the process group `pgid`: SIGTERM, then SIGKILL for whatever is still alive after
/// `grace`. Returns once the group is gone (or SIGKILL was sent).
pub async fn stop_group(pgid: i32, grace: Duration) {
    if !start_stop(pgid) {
        return;
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(25)).await;
        if !procfs::group_alive(pgid) {
            return;
        }
    }
    signal_group(pgid, Signal::SIGKILL);
}

/// [`stop_group`] for blocking code (drop handlers, blocking threads).
pub fn stop_group_blocking(pgid: i32, grace: Duration) {
    if !start_stop(pgid) {
        return;
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(25));
        if !procfs::group_alive(pgid) {
            return;
        }
    }
    signal_group(pgid, Signal::SIGKILL);
}

/// What [`sweep`] removed.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Swept {
    /// The processes killed.
    pub pids: Vec<i32>,
    /// The dead owners they belonged to (their markers).
    pub owners: Vec<String>,
}

/// Kills the leftovers of dead Tandem servers: every process whose [`OWNER_VAR`] names an
/// owner in this pid namespace that is no longer alive, and the members of the process groups
/// those lead. Processes of live servers (this one included) are never touched; a process
/// that belongs to another user is not readable and so never found. Blocking: reads `/proc`.
pub fn sweep() -> Swept {
    let own = owner_marker();
    let namespace = procfs::pid_namespace();
    let procs = procfs::all();
    let mut owners: Vec<String> = Vec::new();
    let mut dead_groups = Vec::new();
    let mut pids = std::collections::BTreeSet::new();
    let mut alive_cache = std::collections::HashMap::new();
    for p in &procs {
        let Some(marker) = procfs::marker_of(p.pid) else {
            continue;
        };
        if marker == own {
            continue;
        }
        let Some((ns, owner_pid, start)) = procfs::parse_marker(&marker) else {
            continue;
        };
        if ns != namespace {
            continue;
        }
        let alive = *alive_cache
            .entry((owner_pid, start))
            .or_insert_with(|| owner_alive(owner_pid, start));
        if alive {
            continue;
        }
        pids.insert(p.pid);
        if p.pgrp == p.pid {
            dead_groups.push(p.pgrp);
        }
        if !owners.contains(&marker) {
            owners.push(marker);
        }
    }
    for p in &procs {
        if dead_groups.contains(&p.pgrp) {
            pids.insert(p.pid);
        }
    }
    let me = std::process::id() as i32;
    pids.retain(|&pid| pid > 1 && pid != me);
    for &pid in &pids {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    if !pids.is_empty() {
        tracing::info!(
            count = pids.len(),
            owners = ?owners,
            "killed processes left behind by Tandem servers that are gone"
        );
    }
    Swept {
        pids: pids.into_iter().collect(),
        owners,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_names_this_process() {
        let (ns, pid, start) = procfs::parse_marker(owner_marker()).unwrap();
        assert_eq!(pid, std::process::id() as i32);
        assert_eq!(ns, procfs::pid_namespace());
        assert!(owner_alive(pid, start));
        assert!(!owner_alive(pid, start + 1));
    }

    #[test]
    fn children_lead_their_own_group_and_carry_the_marker() {
        let mut cmd = std::process::Command::new("sleep");
        cmd.arg("30");
        let mut child = spawn_std(cmd, Isolation::Group, Signal::SIGKILL).unwrap();
        let pid = child.id() as i32;
        assert_eq!(procfs::stat(pid).unwrap().pgrp, pid);
        assert_eq!(procfs::marker_of(pid).as_deref(), Some(owner_marker()));
        assert_eq!(marked_by(owner_marker()), vec![pid]);
        stop_group_blocking(pid, DEFAULT_GRACE);
        assert!(child.wait().is_ok());
    }

    fn sleeper(owner: Option<&str>) -> std::process::Child {
        let mut cmd = std::process::Command::new("sleep");
        cmd.arg("30");
        if let Some(owner) = owner {
            // A child of some other server: contained, then marked with that server's marker.
            contain(&mut cmd, Isolation::Group, Signal::SIGKILL);
            cmd.env(OWNER_VAR, owner);
            on_spawner_thread(move || cmd.spawn()).unwrap().unwrap()
        } else {
            spawn_std(cmd, Isolation::Group, Signal::SIGKILL).unwrap()
        }
    }

    fn gone(child: &mut std::process::Child) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    #[test]
    fn the_sweep_kills_only_what_dead_owners_left() {
        // A "server" that is gone: its marker names a pid whose start time no longer matches.
        let mut dead_owner = sleeper(None);
        let dead_marker = marker_for(dead_owner.id() as i32).unwrap();
        dead_owner.kill().unwrap();
        dead_owner.wait().unwrap();
        // A live "server" (another process of ours, still running).
        let mut live_owner = sleeper(None);
        let live_marker = marker_for(live_owner.id() as i32).unwrap();

        let mut orphan = sleeper(Some(&dead_marker));
        let mut of_live = sleeper(Some(&live_marker));
        let mut ours = sleeper(None);
        let swept = sweep();
        assert!(swept.pids.contains(&(orphan.id() as i32)), "{swept:?}");
        assert_eq!(swept.owners, vec![dead_marker]);
        assert!(
            gone(&mut orphan),
            "the dead owner's child survived the sweep"
        );
        for (what, child) in [("live owner's", &mut of_live), ("own", &mut ours)] {
            assert!(
                child.try_wait().unwrap().is_none(),
                "the sweep killed a {what} child"
            );
            child.kill().unwrap();
            child.wait().unwrap();
        }
        live_owner.kill().unwrap();
        live_owner.wait().unwrap();
    }

    #[test]
    fn a_group_that_ignores_sigterm_is_killed_after_the_grace() {
        let mut cmd = std::process::Command::new("bash");
        cmd.args(["-c", "trap '' TERM; sleep 30 & wait"]);
        let mut child = spawn_std(cmd, Isolation::Group, Signal::SIGKILL).unwrap();
        let pid = child.id() as i32;
        let deadline = Instant::now() + Duration::from_secs(10);
        while procfs::all().iter().filter(|p| p.pgrp == pid).count() < 2 {
            assert!(Instant::now() < deadline, "the job did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        stop_group_blocking(pid, Duration::from_millis(300));
        assert!(child.wait().is_ok());
        let deadline = Instant::now() + Duration::from_secs(10);
        while procfs::group_alive(pid) {
            assert!(Instant::now() < deadline, "the group outlived SIGKILL");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
