//! Browser benchmarks (issue P7): the agent's browser on real headless Chromium against a
//! small site served on 127.0.0.1 —
//! per browser step (navigate + get_state with a screenshot) cold (Chromium's start included)
//! and warm, the same step through the tools the model calls, screencast frames per second on
//! an animating page, input-to-frame latency (a person's click → the first changed frame) and
//! the memory of one browser with one tab, and the replay lane's frame (capture time and size).
//! Each step figure is printed with the upstream
//! OpenHands 1.58.2 anchor (about 0.7 s per browser step, including the browser's start) and
//! the ratio.
//!
//! Run: `cargo bench -p tandem-browser --bench browser` (`BENCH_REPS=50` for 50 warm steps;
//! `TANDEM_CHROMIUM` names another Chromium).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_browser::{Browser, BrowserConfig, browser_tool_set};
use tandem_protocol::{BrowserClientFrame, Observation};
use tandem_sdk::{Masker, Tool, ToolContext};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Upstream 1.58.2 per browser step (navigate + get_state on a local page, browser start
/// included), scripted model.
const ANCHOR_STEP_MS: f64 = 700.0;
const FPS_WINDOW: Duration = Duration::from_secs(5);
const CLICKS: usize = 30;

const HOME: &str = r#"<!doctype html><html><head><title>Tandem Shop</title></head>
<body><h1>Welcome</h1><p>A shop for benchmarks.</p><a href="/about.html">About us</a>
<form action="/search"><input name="q" placeholder="Search"><button>Go</button></form>
<ul><li><a href="/p1">Tea</a></li><li><a href="/p2">Coffee</a></li><li><a href="/p3">Cocoa</a></li></ul>
</body></html>"#;

const ABOUT: &str = r#"<!doctype html><html><head><title>About</title></head>
<body><h1>About us</h1><p>We sell hot drinks.</p><a href="/">Home</a>
<button onclick="this.textContent='thanks'">Like</button></body></html>"#;

/// Changes its whole background every animation frame, so every composited frame differs.
const ANIM: &str = r#"<!doctype html><html><head><title>Animating</title>
<style>html,body{margin:0;height:100%}#box{position:fixed;inset:0}</style></head>
<body><div id="box"></div><script>
let n = 0;
function tick() {
  n = (n + 7) % 360;
  document.getElementById('box').style.background = 'hsl(' + n + ',80%,50%)';
  requestAnimationFrame(tick);
}
requestAnimationFrame(tick);
</script></body></html>"#;

/// A full-page div whose colour toggles on each click; nothing else moves.
const TOGGLE: &str = r#"<!doctype html><html><head><title>Toggle</title>
<style>html,body{margin:0;height:100%}#pad{position:fixed;inset:0;background:#1040c0;user-select:none}</style></head>
<body><div id="pad"></div><script>
const pad = document.getElementById('pad');
let on = false;
pad.addEventListener('click', () => {
  on = !on;
  pad.style.background = on ? '#e0a010' : '#1040c0';
});
</script></body></html>"#;

/// Serves the pages above until the process ends.
async fn serve() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let n = stream.read(&mut buf).await.unwrap_or(0);
                let req = String::from_utf8_lossy(&buf[..n]);
                let path = req.split_whitespace().nth(1).unwrap_or("/");
                let body = match path.split('?').next().unwrap_or("/") {
                    "/" => HOME,
                    "/about.html" => ABOUT,
                    "/anim.html" => ANIM,
                    "/toggle.html" => TOGGLE,
                    _ => "<title>Not found</title>nothing here",
                };
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(resp.as_bytes()).await;
            });
        }
    });
    addr
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i.min(v.len() - 1)]
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// A figure with the upstream anchor and how many times better it is.
fn line(metric: &str, value: f64, unit: &str, anchor: &str, anchor_value: f64) {
    let ratio = if value > 0.0 && anchor_value > 0.0 {
        anchor_value / value
    } else {
        f64::NAN
    };
    let verdict = if ratio < 1.0 {
        format!("{:>9.1}× slower", 1.0 / ratio)
    } else {
        format!("{ratio:>9.1}× better")
    };
    println!("{metric:<52} {value:>10.2} {unit:<5} anchor {anchor:<22} {verdict}");
}

/// A figure upstream has no anchor for.
fn plain(metric: &str, value: f64, unit: &str, note: &str) {
    println!(
        "{}",
        format!("{metric:<52} {value:>10.2} {unit:<5} {note}").trim_end()
    );
}

/// One browser step as the agent's loop runs it: navigate, then read the state with a
/// screenshot. Answers its time in ms.
async fn step(b: &Browser, url: &str, screenshot: bool) -> f64 {
    let t = Instant::now();
    let nav = b.navigate(url, false).await.unwrap();
    assert!(!nav.is_error, "{}", nav.text);
    let state = b.get_state(screenshot).await.unwrap();
    assert!(!state.is_error, "{}", state.text);
    assert_eq!(state.screenshot.is_some(), screenshot);
    ms(t)
}

fn ctx(workspace: &std::path::Path) -> ToolContext {
    ToolContext {
        cancel: CancellationToken::new(),
        working_dir: workspace.to_path_buf(),
        conversation_dir: None,
        env: Default::default(),
        masker: Masker::default(),
    }
}

/// The same step through the tools: the model's arguments parsed, then executed.
async fn tool_step(
    navigate: &Arc<dyn Tool>,
    get_state: &Arc<dyn Tool>,
    url: &str,
    workspace: &std::path::Path,
) -> f64 {
    let t = Instant::now();
    let action = navigate
        .parse_action(json!({"url": url, "new_tab": false}))
        .unwrap();
    let obs = navigate.execute(&action, ctx(workspace)).await;
    let Observation::Browser(b) = obs else {
        panic!("not a browser observation: {}", obs.kind());
    };
    assert!(!b.is_error, "{:?}", b.content);
    let action = get_state
        .parse_action(json!({"include_screenshot": true}))
        .unwrap();
    let obs = get_state.execute(&action, ctx(workspace)).await;
    let Observation::Browser(b) = obs else {
        panic!("not a browser observation: {}", obs.kind());
    };
    assert!(
        !b.is_error && b.screenshot_data.is_some(),
        "{:?}",
        b.content
    );
    ms(t)
}

/// Parent pid of every process, from /proc/*/stat (the field after the command's `)`).
fn parents() -> HashMap<u32, u32> {
    let mut map = HashMap::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        if let Some(ppid) = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            map.insert(pid, ppid);
        }
    }
    map
}

/// `root` and all its descendants.
fn tree(root: u32) -> Vec<u32> {
    let parents = parents();
    let mut all = vec![root];
    let mut i = 0;
    while i < all.len() {
        let p = all[i];
        all.extend(parents.iter().filter(|&(_, &pp)| pp == p).map(|(&c, _)| c));
        i += 1;
    }
    all
}

/// A `kB` field of a /proc file, in MB (0 when the process is gone).
fn kb_field(path: String, field: &str) -> f64 {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse::<f64>().ok())
        })
        .unwrap_or(0.0)
        / 1024.0
}

struct Memory {
    processes: usize,
    rss_mb: f64,
    pss_mb: f64,
}

fn memory(pid: u32) -> Memory {
    let pids = tree(pid);
    Memory {
        processes: pids.len(),
        rss_mb: pids
            .iter()
            .map(|p| kb_field(format!("/proc/{p}/status"), "VmRSS:"))
            .sum(),
        // Summed RSS counts the pages Chromium's processes share once per process; PSS splits them.
        pss_mb: pids
            .iter()
            .map(|p| kb_field(format!("/proc/{p}/smaps_rollup"), "Pss:"))
            .sum(),
    }
}

fn click(x: f64, y: f64) -> BrowserClientFrame {
    BrowserClientFrame::Mouse {
        action: "click".into(),
        x,
        y,
        button: None,
        delta_x: 0.0,
        delta_y: 0.0,
        modifiers: 0,
    }
}

async fn run(reps: usize) {
    let addr = serve().await;
    let url = |p: &str| format!("http://{addr}{p}");
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace).unwrap();
    let config = BrowserConfig::for_conversation(dir.path().join("conv"), workspace.clone());
    println!("Chromium: {}", config.executable.display());
    let b = Browser::new(config);

    // 1. The first step starts Chromium; then warm steps alternate between two pages.
    let first_ms = step(&b, &url("/"), true).await;
    let pages = [url("/about.html"), url("/")];
    let mut warm = Vec::with_capacity(reps);
    for i in 0..reps {
        warm.push(step(&b, &pages[i % 2], true).await);
    }
    let mut warm_plain = Vec::with_capacity(reps);
    for i in 0..reps {
        warm_plain.push(step(&b, &pages[i % 2], false).await);
    }

    // 5. Memory with one tab on the site (no screencast running).
    b.navigate(&url("/"), false).await.unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pid = b.pid().await.expect("Chromium runs");
    let mem = memory(pid);

    // 2. The step through the tools the model calls.
    let tools = browser_tool_set(&b);
    let find = |name: &str| {
        tools
            .iter()
            .find(|t| t.definition().name == name)
            .cloned()
            .unwrap()
    };
    let (navigate, get_state) = (find("browser_navigate"), find("browser_get_state"));
    let mut tool_steps = Vec::with_capacity(reps);
    for i in 0..reps {
        tool_steps.push(tool_step(&navigate, &get_state, &pages[i % 2], &workspace).await);
    }

    // 3. Screencast frames on the animating page, counted by a watcher over 5 s.
    b.navigate(&url("/anim.html"), false).await.unwrap();
    let (seen, published) = {
        let mut frames = b.watch_frames();
        tokio::time::timeout(Duration::from_secs(20), frames.rx.wait_for(Option::is_some))
            .await
            .expect("a first screencast frame")
            .unwrap();
        let first_seq = frames.rx.borrow_and_update().as_ref().map_or(0, |f| f.seq);
        let mut seqs = HashSet::new();
        let mut last_seq = first_seq;
        let end = tokio::time::Instant::now() + FPS_WINDOW;
        while let Ok(Ok(())) = tokio::time::timeout_at(end, frames.rx.changed()).await {
            if let Some(f) = frames.rx.borrow_and_update().as_ref() {
                seqs.insert(f.seq);
                last_seq = f.seq;
            }
        }
        let secs = FPS_WINDOW.as_secs_f64();
        (
            seqs.len() as f64 / secs,
            (last_seq - first_seq) as f64 / secs,
        )
    };

    // 4. A person's click → the first frame that differs from the one shown before it.
    b.navigate(&url("/toggle.html"), false).await.unwrap();
    let mut frames = b.watch_frames();
    assert!(b.take_control(|| false).await.is_some());
    tokio::time::timeout(Duration::from_secs(20), frames.rx.wait_for(Option::is_some))
        .await
        .expect("a first screencast frame")
        .unwrap();
    let mut latency = Vec::with_capacity(CLICKS);
    for i in 0..CLICKS {
        // Let the previous click's frames arrive, so the frame before this click is final.
        tokio::time::sleep(Duration::from_millis(150)).await;
        let before = frames.rx.borrow_and_update().as_ref().unwrap().data.clone();
        let (x, y) = (200.0 + (i % 10) as f64 * 80.0, 300.0);
        let t = Instant::now();
        let changed = async {
            tokio::time::timeout(
                Duration::from_secs(10),
                frames
                    .rx
                    .wait_for(|f| f.as_ref().is_some_and(|f| f.data != before)),
            )
            .await
            .expect("a changed frame after the click")
            .unwrap();
            ms(t)
        };
        let (sent, took) = tokio::join!(b.person_input(click(x, y)), changed);
        sent.unwrap();
        latency.push(took);
    }
    drop(frames);
    drop(b.hand_back("benchmark done").await);

    // 6. Replay frames: the capture the replay lane records after each browser action.
    let mut capture_ms = Vec::new();
    let mut capture_kb = Vec::new();
    for i in 0..reps.max(10) {
        let page = [url("/"), url("/about.html"), url("/anim.html")][i % 3].clone();
        b.navigate(&page, false).await.unwrap();
        let t = Instant::now();
        let (data, _) = b.capture().await.expect("a replay frame");
        capture_ms.push(ms(t));
        capture_kb.push(data.len() as f64 * 3.0 / 4.0 / 1024.0);
    }
    b.close().await;

    let warm_med = percentile(&mut warm, 0.5);
    let warm_p95 = percentile(&mut warm, 0.95);
    let plain_med = percentile(&mut warm_plain, 0.5);
    let tool_med = percentile(&mut tool_steps, 0.5);
    let tool_p95 = percentile(&mut tool_steps, 0.95);
    let lat_med = percentile(&mut latency, 0.5);
    let lat_p95 = percentile(&mut latency, 0.95);
    let cap_med = percentile(&mut capture_ms, 0.5);
    let cap_p95 = percentile(&mut capture_ms, 0.95);
    let kb_med = percentile(&mut capture_kb, 0.5);
    let kb_max = percentile(&mut capture_kb, 1.0);

    println!();
    println!(
        "{:<52} {:>10} {:<5} {:<29} {:>9}",
        "metric", "value", "", "anchor (upstream 1.58.2)", "ratio"
    );
    line(
        "first step incl. Chromium start (nav + state+shot)",
        first_ms,
        "ms",
        "~0.7 s",
        ANCHOR_STEP_MS,
    );
    line(
        &format!("warm step, nav + state+shot, median of {reps}"),
        warm_med,
        "ms",
        "~0.7 s",
        ANCHOR_STEP_MS,
    );
    line(
        &format!("warm step, nav + state+shot, p95 of {reps}"),
        warm_p95,
        "ms",
        "~0.7 s",
        ANCHOR_STEP_MS,
    );
    line(
        "warm step, nav + state (no screenshot), median",
        plain_med,
        "ms",
        "~0.7 s",
        ANCHOR_STEP_MS,
    );
    line(
        "tool step: parse+execute nav, state+shot, median",
        tool_med,
        "ms",
        "~0.7 s",
        ANCHOR_STEP_MS,
    );
    line(
        "tool step: parse+execute nav, state+shot, p95",
        tool_p95,
        "ms",
        "~0.7 s",
        ANCHOR_STEP_MS,
    );
    plain(
        "screencast on an animating page, frames seen",
        seen,
        "fps",
        &format!(
            "({published:.1} fps published; over {} s; no upstream live view)",
            FPS_WINDOW.as_secs()
        ),
    );
    plain(
        &format!("click -> first changed frame, median of {CLICKS}"),
        lat_med,
        "ms",
        "(no upstream takeover)",
    );
    plain(
        &format!("click -> first changed frame, p95 of {CLICKS}"),
        lat_p95,
        "ms",
        "",
    );
    plain(
        "memory per browser, one tab: summed RSS",
        mem.rss_mb,
        "MB",
        &format!("({} processes: Chromium and its children)", mem.processes),
    );
    plain(
        "memory per browser, one tab: summed PSS",
        mem.pss_mb,
        "MB",
        "(shared pages split between the processes)",
    );
    plain(
        "replay frame (JPEG q40 of the viewport), capture median",
        cap_med,
        "ms",
        &format!("(p95 {cap_p95:.1} ms)"),
    );
    plain(
        "replay frame size, median",
        kb_med,
        "KB",
        &format!(
            "(largest {kb_max:.1} KB; 2,500 frames an hour: {:.0} MB/h)",
            kb_med * 2500.0 / 1024.0
        ),
    );
    println!();
    println!(
        "ratio upstream/tandem (above 1: tandem faster) vs ~0.7 s/step: first step {:.2}×, warm step median {:.1}×, tool step median {:.1}×",
        ANCHOR_STEP_MS / first_ms,
        ANCHOR_STEP_MS / warm_med,
        ANCHOR_STEP_MS / tool_med
    );
}

fn main() {
    let reps: usize = std::env::var("BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(20);
    println!(
        "tandem-browser benchmark: {reps} warm steps, {CLICKS} clicks, against upstream OpenHands 1.58.2"
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run(reps));
}
