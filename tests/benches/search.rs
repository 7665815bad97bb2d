//! `glob` and `grep` over a 100k-file tree against `rg` on the same tree.
//!
//! The tree (in a temporary folder): 1,000 nested folders of 100 files each (`.rs`, `.ts`,
//! `.md`, `.txt`, a few hundred bytes of text), a `.gitignore` excluding a `target/` folder of
//! 5,000 more files and every `*.log`, and a `.git` folder so `rg` honours the `.gitignore` as
//! our tools do everywhere. Timed, as the median of `BENCH_N` runs (5) after one warm-up each:
//!
//! - glob `**/*.rs` through the `glob` tool vs `rg --files -g '**/*.rs'` and the same sorted
//!   newest first (`--sortr=modified`, what upstream's tool runs);
//! - grep of a regex matching ~1% of the files (`needle_\d+`; the newest 100 are certain long
//!   before the end) and of one matching 12 files (every file is read) through the `grep` tool
//!   vs `rg -l -i` and `rg -l -i --sortr=modified`.
//!
//! Where the answer fits in 100 files the tool's list is checked against `rg`'s. Prints the
//! figures in ms and each ratio (ours / rg). Without `rg` on PATH only our figures are printed.
//!
//! Run: `cargo bench -p tandem-e2e --bench search`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::{Value, json};
use tandem_sdk::{Masker, Tool, ToolContext};
use tandem_tools::glob::GlobTool;
use tandem_tools::grep::GrepTool;
use tokio_util::sync::CancellationToken;

const WORDS: [&str; 12] = [
    "alpha", "parser", "token", "buffer", "render", "socket", "driver", "layout", "cursor",
    "schema", "result", "window",
];

/// Writes the tree; returns how many files it holds outside ignored places.
fn make_tree(root: &Path) -> usize {
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
    let exts = ["rs", "rs", "rs", "ts", "md", "txt", "log"];
    let mut n = 0usize;
    let mut visible = 0usize;
    for a in 0..10 {
        for b in 0..10 {
            for c in 0..10 {
                let dir = root.join(format!("mod{a}/part{b}/unit{c}"));
                std::fs::create_dir_all(&dir).unwrap();
                for f in 0..100 {
                    let ext = exts[n % exts.len()];
                    let mut text = String::with_capacity(400);
                    for line in 0..8 {
                        let w = WORDS[(n + line * 7) % WORDS.len()];
                        text.push_str(&format!("let {w}_{line} = {w}(\"{n}\");\n"));
                    }
                    if n.is_multiple_of(97) {
                        text.push_str(&format!("// needle_{n} found here\n"));
                    }
                    if n % 8311 == 5 {
                        text.push_str("// Rare_Marker_Zeta\n");
                    }
                    std::fs::write(dir.join(format!("file{f}.{ext}")), text).unwrap();
                    if ext != "log" {
                        visible += 1;
                    }
                    n += 1;
                }
            }
        }
    }
    for t in 0..5_000 {
        let dir = root.join(format!("target/debug/b{}", t / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("gen{t}.rs")),
            "// needle_0 Rare_Marker_Zeta\n",
        )
        .unwrap();
    }
    visible
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn runs() -> usize {
    std::env::var("BENCH_N")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(5)
}

/// Median ms of `runs` calls of `tool` (after a warm-up) and the last observation.
async fn time_tool(tool: &dyn Tool, root: &Path, args: Value) -> (f64, Value) {
    let action = tool.parse_action(args).unwrap();
    let mut times = Vec::new();
    let mut last = Value::Null;
    for i in 0..=runs() {
        let ctx = ToolContext {
            cancel: CancellationToken::new(),
            working_dir: root.to_path_buf(),
            conversation_dir: None,
            env: Default::default(),
            masker: Masker::default(),
        };
        let t = Instant::now();
        let obs = tool.execute(&action, ctx).await;
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        if i > 0 {
            times.push(ms);
        }
        last = serde_json::to_value(obs).unwrap();
        assert_eq!(last["is_error"], false, "{last}");
    }
    (median(times), last)
}

/// Median ms of `runs` runs of `rg args` in `root` (after a warm-up) and its output lines
/// (paths relative to `root`). It runs in the tree, as a glob with a `/` is anchored at `rg`'s
/// working directory.
fn time_rg(root: &Path, args: &[&str]) -> (f64, Vec<String>) {
    let mut times = Vec::new();
    let mut lines = Vec::new();
    for i in 0..=runs() {
        let t = Instant::now();
        let out = Command::new("rg")
            .args(args)
            .arg(".")
            .current_dir(root)
            .output()
            .unwrap();
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        if i > 0 {
            times.push(ms);
        }
        lines = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.strip_prefix("./").unwrap_or(l).to_owned())
            .collect();
    }
    (median(times), lines)
}

fn has_rg() -> bool {
    Command::new("rg")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The listed paths, relative to `root`.
fn listed(obs: &Value, field: &str, root: &Path) -> BTreeSet<String> {
    obs[field]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            Path::new(p.as_str().unwrap())
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

fn report(what: &str, ours: f64, rg: Option<(f64, f64)>) {
    match rg {
        Some((plain, sorted)) => println!(
            "{what:<34} ours {ours:>8.1} ms | rg {plain:>8.1} ms (ours/rg {:.2}) | rg --sortr=modified {sorted:>8.1} ms (ours/rg {:.2})",
            ours / plain,
            ours / sorted
        ),
        None => println!("{what:<34} ours {ours:>8.1} ms"),
    }
}

#[tokio::main]
async fn main() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let t = Instant::now();
    let visible = make_tree(&root);
    println!(
        "tree: {visible} files searched (+{} ignored) in {}, written in {:.1} s; {} runs each, median",
        100_000 - visible + 5_000,
        root.display(),
        t.elapsed().as_secs_f64(),
        runs()
    );
    let rg = has_rg();
    if !rg {
        println!("note: `rg` is not on PATH (apt-get install ripgrep): only our figures follow");
    }
    let glob = GlobTool::new(&root);
    let grep = GrepTool::new(&root);

    // glob **/*.rs: many matches, cut at 100.
    let (ours, obs) = time_tool(&glob, &root, json!({"pattern": "**/*.rs"})).await;
    assert_eq!(obs["truncated"], true);
    let vs = rg.then(|| {
        let (plain, all) = time_rg(&root, &["--files", "-g", "**/*.rs"]);
        let (sorted, _) = time_rg(&root, &["--files", "-g", "**/*.rs", "--sortr=modified"]);
        println!("  rg lists {} .rs files", all.len());
        (plain, sorted)
    });
    report("glob **/*.rs", ours, vs);

    // glob of a narrow pattern: the lists must agree.
    let pattern = "mod3/part4/**/file7*.{ts,md}";
    let (ours, obs) = time_tool(&glob, &root, json!({"pattern": pattern})).await;
    assert_eq!(obs["truncated"], false);
    let vs = rg.then(|| {
        let (plain, all) = time_rg(&root, &["--files", "-g", pattern]);
        let (sorted, _) = time_rg(&root, &["--files", "-g", pattern, "--sortr=modified"]);
        assert_eq!(
            listed(&obs, "files", &root),
            all.into_iter().collect(),
            "glob vs rg"
        );
        (plain, sorted)
    });
    report(&format!("glob {pattern}"), ours, vs);

    // grep of a regex in ~1% of the files: the newest 100 decide it.
    let regex = r"needle_\d+";
    let (ours, obs) = time_tool(&grep, &root, json!({"pattern": regex})).await;
    assert_eq!(obs["truncated"], true);
    let vs = rg.then(|| {
        let (plain, all) = time_rg(&root, &["-l", "-i", regex]);
        let (sorted, _) = time_rg(&root, &["-l", "-i", regex, "--sortr=modified"]);
        println!("  rg finds it in {} files", all.len());
        (plain, sorted)
    });
    report(&format!("grep {regex}"), ours, vs);

    // grep of a rare regex: every file is read; the lists must agree.
    let regex = "rare_marker_zeta";
    let (ours, obs) = time_tool(&grep, &root, json!({"pattern": regex})).await;
    assert_eq!(obs["truncated"], false);
    let vs = rg.then(|| {
        let (plain, all) = time_rg(&root, &["-l", "-i", regex]);
        let (sorted, _) = time_rg(&root, &["-l", "-i", regex, "--sortr=modified"]);
        assert_eq!(
            listed(&obs, "matches", &root),
            all.into_iter().collect(),
            "grep vs rg"
        );
        (plain, sorted)
    });
    report(&format!("grep {regex}"), ours, vs);

    // grep with an include filter.
    let (ours, _) = time_tool(
        &grep,
        &root,
        json!({"pattern": "rare_marker_zeta", "include": "*.{ts,md}"}),
    )
    .await;
    let vs = rg.then(|| {
        let args = ["-l", "-i", "rare_marker_zeta", "-g", "*.{ts,md}"];
        let (plain, _) = time_rg(&root, &args);
        let (sorted, _) = time_rg(&root, &[&args[..], &["--sortr=modified"]].concat());
        (plain, sorted)
    });
    report("grep rare_marker_zeta in *.{ts,md}", ours, vs);
}
