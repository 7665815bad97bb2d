//! Checkpoint store benchmark: a checkpoint after an action that changed a few files, warm, on
//! a 10k-file and a 100k-file repository (p50/p95), against a plain `git add -A && git
//! write-tree` into a temporary index on the same tree (the approach of agents that snapshot
//! with a throwaway index); the rewind of 1,000 changed files and its undo; the store's size
//! after gc against the unique content it holds.
//!
//! `cargo bench -p tandem-checkpoint --bench checkpoint` (`BENCH_SIZES=10000,100000`)
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use tandem_checkpoint::{RecordLog, RewindTarget, Store};
use tandem_protocol::api::{CheckpointAuthor, RewindFiles};

const GOAL_10K_MS: f64 = 50.0;
const GOAL_100K_MS: f64 = 300.0;

fn main() {
    let sizes: Vec<usize> = std::env::var("BENCH_SIZES")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    for n in sizes {
        bench(n);
    }
}

fn git(dir: &Path, env: &[(&str, &Path)], args: &[&str]) -> Vec<u8> {
    let mut c = Command::new("git");
    c.args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// `n` files of ~200 bytes in folders of 100, committed in the user's repository.
fn repository(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..n {
        let sub = dir.path().join(format!("src/m{:04}", i / 100));
        if i % 100 == 0 {
            std::fs::create_dir_all(&sub).unwrap();
        }
        let body = format!("// file {i}\n{}\n", "x".repeat(180 + i % 20));
        std::fs::write(sub.join(format!("f{i}.rs")), body).unwrap();
    }
    git(dir.path(), &[], &["init", "-q", "-b", "main"]);
    git(dir.path(), &[], &["add", "-A"]);
    git(
        dir.path(),
        &[],
        &[
            "-c",
            "user.name=U",
            "-c",
            "user.email=u@example.invalid",
            "commit",
            "-q",
            "-m",
            "init",
        ],
    );
    dir
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

/// An action's effect: 3 files edited.
fn act(ws: &Path, n: usize, round: usize) {
    for k in 0..3 {
        let i = (round * 7919 + k * 104_729) % n;
        let p = ws.join(format!("src/m{:04}/f{i}.rs", i / 100));
        let mut text = std::fs::read_to_string(&p).unwrap();
        text.push_str(&format!("// edit {round}.{k}\n"));
        std::fs::write(p, text).unwrap();
    }
}

fn dir_bytes(p: &Path) -> u64 {
    let mut total = 0;
    for e in std::fs::read_dir(p).unwrap().flatten() {
        let m = e.metadata().unwrap();
        total += if m.is_dir() {
            dir_bytes(&e.path())
        } else {
            m.len()
        };
    }
    total
}

fn bench(n: usize) {
    println!("== {n} files");
    let repo = repository(n);
    let ws = repo.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let conversation = tempfile::tempdir().unwrap();
    let log = RecordLog::new(conversation.path());
    let mut events = Vec::new();

    let t = Instant::now();
    let store = Store::open(home.path(), &ws).unwrap();
    let first = store.take("first").unwrap();
    let cold_ms = t.elapsed().as_secs_f64() * 1000.0;
    events.push("e0".to_owned());
    log.append(&first, "e0", CheckpointAuthor::Person, None)
        .unwrap();
    println!("  first checkpoint (cold: every file hashed): {cold_ms:.0} ms");

    let rounds = if n > 50_000 { 30 } else { 60 };
    let mut warm = Vec::new();
    for r in 0..rounds {
        act(&ws, n, r);
        let t = Instant::now();
        let taken = store.take("action").unwrap();
        warm.push(t.elapsed().as_secs_f64() * 1000.0);
        let event = format!("e{}", events.len());
        log.append(
            &taken,
            &event,
            CheckpointAuthor::Agent,
            Some("terminal".into()),
        )
        .unwrap();
        events.push(event);
    }
    let (p50, p95) = (pct(&mut warm, 0.5), pct(&mut warm, 0.95));

    // The throwaway-index approach on the same tree: a fresh index every time.
    let shadow = tempfile::tempdir().unwrap();
    git(shadow.path(), &[], &["init", "-q", "--bare"]);
    let plain_rounds = if n > 50_000 { 5 } else { 10 };
    let mut plain = Vec::new();
    for r in 0..plain_rounds {
        act(&ws, n, rounds + r);
        let index = shadow.path().join(format!("tmp-index-{r}"));
        let env = [
            ("GIT_DIR", shadow.path()),
            ("GIT_WORK_TREE", ws.as_path()),
            ("GIT_INDEX_FILE", index.as_path()),
        ];
        let t = Instant::now();
        git(&ws, &env, &["add", "-A"]);
        git(&ws, &env, &["write-tree"]);
        plain.push(t.elapsed().as_secs_f64() * 1000.0);
        std::fs::remove_file(&index).unwrap();
    }
    let (plain50, plain95) = (pct(&mut plain, 0.5), pct(&mut plain, 0.95));
    let goal = if n > 50_000 {
        GOAL_100K_MS
    } else {
        GOAL_10K_MS
    };
    println!(
        "  checkpoint after an action (3 files changed), warm, {rounds} rounds: p50 {p50:.1} ms, p95 {p95:.1} ms (goal ≤ {goal:.0} ms warm: {})",
        if p95 <= goal { "met" } else { "NOT met" }
    );
    println!(
        "  plain `git add -A && git write-tree` into a temporary index, {plain_rounds} rounds: p50 {plain50:.1} ms, p95 {plain95:.1} ms → Tandem {:.1}× faster (p50)",
        plain50 / p50
    );

    // A rewind of 1,000 changed files, and its undo.
    let before = store.take("before the big action").unwrap();
    let event = format!("e{}", events.len());
    log.append(&before, &event, CheckpointAuthor::Person, None)
        .unwrap();
    events.push(event.clone());
    let big = 1000.min(n);
    for i in 0..big {
        let p = ws.join(format!("src/m{:04}/f{i}.rs", i / 100));
        std::fs::write(p, format!("rewritten {i}\n")).unwrap();
    }
    let after = store.take("the big action").unwrap();
    let obs = format!("e{}", events.len());
    log.append(
        &after,
        &obs,
        CheckpointAuthor::Agent,
        Some("terminal".into()),
    )
    .unwrap();
    events.push(obs);
    let t = Instant::now();
    let done = tandem_checkpoint::rewind(
        &store,
        &log,
        &events,
        &RewindTarget::Event(event),
        RewindFiles::Agent,
        false,
    )
    .unwrap();
    let rewind_ms = t.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(done.restored.len(), big);
    let undo = done.undo_checkpoint_id.unwrap();
    let t = Instant::now();
    tandem_checkpoint::rewind(
        &store,
        &log,
        &events,
        &RewindTarget::Checkpoint(undo),
        RewindFiles::All,
        false,
    )
    .unwrap();
    let undo_ms = t.elapsed().as_secs_f64() * 1000.0;
    println!("  rewind of {big} changed files: {rewind_ms:.0} ms; its undo: {undo_ms:.0} ms");

    // Size after gc against the unique content the store holds (every distinct blob once).
    store.gc().unwrap();
    let store_bytes = dir_bytes(&store.dir().join("git"));
    let listing = git(
        &ws,
        &[("GIT_DIR", &store.dir().join("git"))],
        &["rev-list", "--objects", "--all"],
    );
    let mut blobs = HashSet::new();
    let ids: Vec<String> = String::from_utf8_lossy(&listing)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_owned))
        .collect();
    let mut input = ids.join("\n");
    input.push('\n');
    let mut c = Command::new("git");
    c.args([
        "cat-file",
        "--batch-check=%(objecttype) %(objectname) %(objectsize)",
    ])
    .env("GIT_DIR", store.dir().join("git"))
    .stdin(std::process::Stdio::piped())
    .stdout(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    // A writer thread: git fills its stdout long before it has read every id.
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(input.as_bytes()).unwrap();
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let mut unique = 0u64;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [kind, id, size] = f.as_slice()
            && *kind == "blob"
            && blobs.insert(id.to_string())
        {
            unique += size.parse::<u64>().unwrap_or(0);
        }
    }
    let ratio = store_bytes as f64 / unique as f64;
    println!(
        "  store after gc: {:.1} MB for {:.1} MB of unique content ({} blobs) → {ratio:.2}× (goal ≤ 1.2×: {})",
        store_bytes as f64 / 1e6,
        unique as f64 / 1e6,
        blobs.len(),
        if ratio <= 1.2 { "met" } else { "NOT met" }
    );
}
