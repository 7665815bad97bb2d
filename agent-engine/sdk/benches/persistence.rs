//! Persistence benchmark: per-event persist latency, full replay and crash recovery, printed
//! against the upstream (Python) anchors from the OpenHands SDK paper.
//!
//! `cargo bench -p tandem-sdk --bench persistence`. Works in a temp directory on the disk of
//! `$TANDEM_BENCH_DIR` (default: the system temp dir; it must not be a tmpfs, or fsync is free).
//! Events are the upstream fixture conversations' events with fresh ids, so sizes and shapes
//! are real (a 27 KB system prompt, terminal actions and observations, stats updates).
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_protocol::Event;
use tandem_sdk::{EventLog, unmatched_actions};

const PERSIST_APPENDS: usize = 2000;
const REPLAY_RUNS: usize = 30;

/// Anchors (upstream Python agent server, OpenHands SDK paper), milliseconds.
const ANCHOR_PERSIST_MEDIAN: f64 = 0.20;
const ANCHOR_REPLAY_MEDIAN: f64 = 4.1;
const ANCHOR_REPLAY_358: f64 = 18.9;
const ANCHOR_RECOVERY_MEDIAN: f64 = 7.4;
const ANCHOR_RECOVERY_MAX: f64 = 32.1;

/// Our targets, milliseconds.
const TARGET_PERSIST_MEDIAN: f64 = 0.1;
const TARGET_REPLAY_358: f64 = 2.0;
const TARGET_RECOVERY: f64 = 5.0;

fn fixture_events() -> Vec<Event> {
    let root =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/upstream/conversations");
    let mut events = Vec::new();
    // The 100-step conversation first (the realistic mix), then the 40-event one.
    for id in [
        "9054567dddaf4a868cf6e9002d036bea",
        "53b0201b238848c28c0912bd065f719e",
    ] {
        let loaded = EventLog::read(&root.join(id).join("events")).unwrap();
        assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
        events.extend(loaded.events);
    }
    events
}

/// `template` with a fresh id.
fn with_fresh_id(template: &Event) -> Event {
    let mut v: Value = serde_json::to_value(template).unwrap();
    v["id"] = json!(uuid::Uuid::new_v4().to_string());
    serde_json::from_value(v).unwrap()
}

/// `n` events cycling through `templates`, fresh ids.
fn events(templates: &[Event], n: usize) -> Vec<Event> {
    (0..n)
        .map(|i| with_fresh_id(&templates[i % templates.len()]))
        .collect()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[rank]
}

struct Stats {
    median: f64,
    p95: f64,
    max: f64,
    mean: f64,
}

fn stats(mut samples: Vec<f64>) -> Stats {
    samples.sort_by(f64::total_cmp);
    Stats {
        median: percentile(&samples, 0.5),
        p95: percentile(&samples, 0.95),
        max: *samples.last().unwrap(),
        mean: samples.iter().sum::<f64>() / samples.len() as f64,
    }
}

fn report(label: &str, value: f64, anchor: Option<f64>, target: Option<f64>) {
    let anchor = anchor
        .map(|a| {
            format!(
                "  anchor {a:>6.2} ms  ratio {:>5.2}x ({:.1}x faster)",
                value / a,
                a / value
            )
        })
        .unwrap_or_default();
    let target = target
        .map(|t| {
            format!(
                "  target <= {t} ms: {}",
                if value <= t { "met" } else { "MISSED" }
            )
        })
        .unwrap_or_default();
    println!("  {label:<44} {value:>8.3} ms{anchor}{target}");
}

fn bench_dir() -> tempfile::TempDir {
    match std::env::var_os("TANDEM_BENCH_DIR") {
        Some(dir) => tempfile::tempdir_in(dir).unwrap(),
        None => tempfile::tempdir().unwrap(),
    }
}

/// The cost of durability alone on this disk: create + write ~900 B + fdatasync (+ rename),
/// and the same with a full fsync.
fn fsync_floor(dir: &Path) {
    let payload = vec![b'x'; 900];
    for (label, full) in [
        ("fdatasync floor (create+write+sync+rename)", false),
        ("fsync floor (create+write+sync+rename)", true),
    ] {
        let mut samples = Vec::new();
        for i in 0..500 {
            let temp = dir.join(format!(".floor-{i}.tmp"));
            let start = Instant::now();
            let mut f = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(&temp)
                .unwrap();
            f.write_all(&payload).unwrap();
            if full {
                f.sync_all().unwrap()
            } else {
                f.sync_data().unwrap()
            }
            std::fs::rename(&temp, dir.join(format!("floor-{i}"))).unwrap();
            samples.push(ms(start.elapsed()));
        }
        let s = stats(samples);
        println!(
            "  {label:<44} {:>8.3} ms median, p95 {:.3} ms",
            s.median, s.p95
        );
    }
}

fn bench_persist(dir: &Path, templates: &[Event]) {
    let to_write = events(templates, PERSIST_APPENDS);
    let mean_size = to_write
        .iter()
        .map(|e| serde_json::to_vec(e).unwrap().len())
        .sum::<usize>()
        / to_write.len();
    let mut log = EventLog::create(dir.join("events")).unwrap();
    let mut samples = Vec::with_capacity(to_write.len());
    for e in &to_write {
        let start = Instant::now();
        log.append(e).unwrap();
        samples.push(ms(start.elapsed()));
    }
    let s = stats(samples);
    println!(
        "persist: {PERSIST_APPENDS} appends, mean event {mean_size} B, fdatasync before rename"
    );
    report(
        "persist median",
        s.median,
        Some(ANCHOR_PERSIST_MEDIAN),
        Some(TARGET_PERSIST_MEDIAN),
    );
    report("persist p95", s.p95, None, None);
    report("persist mean", s.mean, None, None);
}

/// A log of `n` events built from the templates; the last event is an action that never got
/// its observation (a crash mid-tool), so recovery has something to find.
fn build_log(root: &Path, templates: &[Event], n: usize) -> PathBuf {
    let dir = root.join(format!("log-{n}"));
    let mut log = EventLog::create(&dir).unwrap();
    let mut evs = events(templates, n - 1);
    let action = templates
        .iter()
        .find(|e| matches!(e, Event::Action(a) if a.action.is_some()))
        .unwrap();
    evs.push(with_fresh_id(action));
    for e in &evs {
        log.append(e).unwrap();
    }
    dir
}

/// CPU time this process has used (all threads, live and exited), from `/proc/self/stat`;
/// 10 ms resolution, so only meaningful summed over many runs.
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the `(comm)`: state is field 3, utime 14, stime 15.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<u64> = rest
        .split_whitespace()
        .skip(1)
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    let ticks = fields.get(10).copied().unwrap_or(0) + fields.get(11).copied().unwrap_or(0);
    Duration::from_millis(ticks * 10) // USER_HZ is 100 on Linux
}

/// Times `runs` calls of `f` after one warm-up call (page cache, allocator). What `f` returns
/// is dropped outside the timing: freeing 10,000 events is not part of replaying them.
fn timed_runs<T>(runs: usize, mut f: impl FnMut() -> T) -> Vec<f64> {
    drop(f());
    (0..runs)
        .map(|_| {
            let start = Instant::now();
            let out = f();
            let elapsed = start.elapsed();
            drop(out);
            ms(elapsed)
        })
        .collect()
}

fn bench_replay(root: &Path, templates: &[Event]) {
    for (n, anchor, target) in [
        (358, Some(ANCHOR_REPLAY_358), Some(TARGET_REPLAY_358)),
        (10_000, None, None),
    ] {
        let dir = build_log(root, templates, n);
        let bytes: u64 = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        let cpu_before = process_cpu();
        let replay = stats(timed_runs(REPLAY_RUNS, || {
            let (log, loaded) = EventLog::open(&dir).unwrap();
            assert_eq!(loaded.events.len(), n);
            (log, loaded)
        }));
        let replay_cpu = ms(process_cpu() - cpu_before) / (REPLAY_RUNS + 1) as f64;
        let recovery = stats(timed_runs(REPLAY_RUNS, || {
            let (log, loaded) = EventLog::open(&dir).unwrap();
            assert_eq!(unmatched_actions(&loaded.events).len(), 1);
            (log, loaded)
        }));
        println!(
            "replay of {n} events ({} KB), open + parse all, {REPLAY_RUNS} runs, warm cache",
            bytes / 1024
        );
        if n == 358 {
            report(
                "replay median (358) vs anchor median",
                replay.median,
                Some(ANCHOR_REPLAY_MEDIAN),
                None,
            );
        }
        report(
            &format!("replay median ({n} events)"),
            replay.median,
            anchor,
            target,
        );
        report(&format!("replay max ({n} events)"), replay.max, None, None);
        report(
            &format!("replay CPU, all threads, mean ({n} events)"),
            replay_cpu,
            None,
            None,
        );
        println!("recovery of {n} events = replay + unmatched-action scan");
        let (anchor_median, anchor_max, target) = if n == 358 {
            (
                Some(ANCHOR_RECOVERY_MEDIAN),
                Some(ANCHOR_RECOVERY_MAX),
                Some(TARGET_RECOVERY),
            )
        } else {
            (None, None, None)
        };
        report(
            &format!("recovery median ({n} events)"),
            recovery.median,
            anchor_median,
            target,
        );
        report(
            &format!("recovery max ({n} events)"),
            recovery.max,
            anchor_max,
            target,
        );
    }
}

/// Where replay time goes for the 358-event log, single thread: listing, reading, parsing.
fn breakdown(root: &Path, templates: &[Event]) {
    let dir = root.join("log-358");
    if !dir.exists() {
        build_log(root, templates, 358);
    }
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.retain(|p| p.extension().is_some_and(|x| x == "json"));
    names.sort();
    let list = stats(timed_runs(REPLAY_RUNS, || {
        assert!(std::fs::read_dir(&dir).unwrap().count() > 358);
    }));
    let read = stats(timed_runs(REPLAY_RUNS, || {
        for p in &names {
            drop(std::hint::black_box(std::fs::read(p).unwrap()));
        }
    }));
    let blobs: Vec<Vec<u8>> = names.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let value = stats(timed_runs(REPLAY_RUNS, || {
        for b in &blobs {
            drop(std::hint::black_box(
                serde_json::from_slice::<Value>(b).unwrap(),
            ));
        }
    }));
    let event = stats(timed_runs(REPLAY_RUNS, || {
        for b in &blobs {
            drop(std::hint::black_box(
                serde_json::from_slice::<Event>(b).unwrap(),
            ));
        }
    }));
    let fast = stats(timed_runs(REPLAY_RUNS, || {
        for b in &blobs {
            drop(std::hint::black_box(Event::from_json_slice(b).unwrap()));
        }
    }));
    println!("replay breakdown, 358 events, one thread (medians)");
    report("list dir", list.median, None, None);
    report("read files", read.median, None, None);
    report("parse as serde_json::Value", value.median, None, None);
    report(
        "parse as Event (serde_json::from_slice)",
        event.median,
        None,
        None,
    );
    report(
        "parse as Event (Event::from_json_slice)",
        fast.median,
        None,
        None,
    );
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is accepted and ignored.
    let templates = fixture_events();
    let tmp = bench_dir();
    println!(
        "tandem-sdk persistence benchmark (dir {})",
        tmp.path().display()
    );
    // TANDEM_BENCH_ONLY=persist|replay runs one part (for profiling).
    let only = std::env::var("TANDEM_BENCH_ONLY").unwrap_or_default();
    if only.is_empty() || only == "persist" {
        fsync_floor(tmp.path());
        bench_persist(&tmp.path().join("persist"), &templates);
    }
    if only.is_empty() || only == "replay" {
        bench_replay(tmp.path(), &templates);
    }
    if only.is_empty() || only == "breakdown" {
        breakdown(tmp.path(), &templates);
    }
}
