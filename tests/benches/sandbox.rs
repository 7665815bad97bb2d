//! Sandbox benchmarks on a real Docker daemon: the image build (cold with `BENCH_COLD=1`, after
//! a code change, and with nothing changed), the image's size, container start to healthy,
//! the per-step overhead of a 20-step conversation in the sandbox against the same binary's
//! local server (zero-latency scripted LLM), and the desktop's VNC frame latency through the
//! server's authenticated proxy (a full 1280×800 frame, raw encoding, request to last byte).
//!
//! Run: `cargo bench -p tandem-e2e --bench sandbox` with a daemon (`source scripts/docker.sh`).
//! It builds its own tag, `tandem-sandbox:bench`, from the binary it measures.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tandem_e2e::{KEY, TandemServer, tandem_bin};
use tandem_protocol::{AgentSpec, LlmConfig};
use tandem_testkit::{ScriptedLlmServer, Step};
use tokio_tungstenite::tungstenite::Message as Ws;

const TAG: &str = "tandem-sandbox:bench";
const STEPS: usize = 20;
const REPS: usize = 3;
const FRAMES: usize = 20;

fn tandem(args: &[&str]) -> std::process::Output {
    Command::new(tandem_bin().unwrap())
        .args(args)
        .env_remove("LLM_MODEL")
        .env_remove("LLM_BASE_URL")
        .env_remove("LLM_API_KEY")
        .output()
        .unwrap()
}

fn ok_json(args: &[&str]) -> Value {
    let out = tandem(args);
    assert!(
        out.status.success(),
        "tandem {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(line.lines().last().unwrap_or("")).unwrap()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn p95(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[((v.len() as f64 * 0.95).ceil() as usize)
        .saturating_sub(1)
        .min(v.len() - 1)]
}

/// `terminal echo i` for i < STEPS, then finish; requests without tools get a title.
fn llm() -> ScriptedLlmServer {
    ScriptedLlmServer::with_responder(std::sync::Arc::new(|body: &Value, _| {
        if body
            .get("tools")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            return Step::text("Benchmark");
        }
        let done = body["messages"]
            .as_array()
            .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count());
        if done < STEPS {
            Step::tool_call(
                "terminal",
                json!({"command": format!("echo {done}"), "security_risk": "LOW"}),
            )
        } else {
            Step::tool_call("finish", json!({"message": "done"}))
        }
    }))
}

struct Api {
    http: reqwest::Client,
    url: String,
    key: String,
}

impl Api {
    async fn create(&self, llm: &ScriptedLlmServer, work: &str, run: bool) -> String {
        let mut config = LlmConfig::new("openai/fake");
        config.base_url = Some(llm.base_url());
        config.api_key = Some("x".into());
        config.num_retries = 0;
        let body = json!({
            "agent": AgentSpec::default_for(config),
            "workspace": {"kind": "LocalWorkspace", "working_dir": work},
            "initial_message": {"role": "user", "content": [{"type": "text", "text": "count"}], "run": run},
        });
        let r = self
            .http
            .post(format!("{}/api/conversations", self.url))
            .header("X-Session-API-Key", &self.key)
            .json(&body)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "create: {}", r.status());
        let v: Value = r.json().await.unwrap();
        v["id"].as_str().unwrap().to_owned()
    }

    async fn wait_finished(&self, id: &str) {
        loop {
            let r = self
                .http
                .get(format!("{}/api/conversations/{id}", self.url))
                .header("X-Session-API-Key", &self.key)
                .send()
                .await
                .unwrap();
            let v: Value = r.json().await.unwrap();
            match v["execution_status"].as_str() {
                Some("finished") => return,
                Some("error" | "stuck") => panic!("the run ended {v}"),
                _ => tokio::time::sleep(Duration::from_millis(2)).await,
            }
        }
    }

    /// Wall time per step of a STEPS-step run, ms.
    async fn per_step_ms(&self, llm: &ScriptedLlmServer, work: &str) -> f64 {
        let started = Instant::now();
        let id = self.create(llm, work, true).await;
        self.wait_finished(&id).await;
        started.elapsed().as_secs_f64() * 1000.0 / (STEPS + 1) as f64
    }
}

/// Reads RFB bytes from the WebSocket, whatever the framing.
struct Rfb<S> {
    ws: S,
    buf: Vec<u8>,
}

impl<S> Rfb<S>
where
    S: futures::Stream<Item = Result<Ws, tokio_tungstenite::tungstenite::Error>>
        + futures::Sink<Ws>
        + Unpin,
    <S as futures::Sink<Ws>>::Error: std::fmt::Debug,
{
    async fn read(&mut self, n: usize) -> Vec<u8> {
        while self.buf.len() < n {
            match self.ws.next().await {
                Some(Ok(Ws::Binary(b))) => self.buf.extend_from_slice(&b),
                Some(Ok(_)) => {}
                other => panic!("the VNC socket ended: {other:?}"),
            }
        }
        self.buf.drain(..n).collect()
    }

    async fn send(&mut self, bytes: Vec<u8>) {
        self.ws.send(Ws::binary(bytes)).await.unwrap();
    }
}

fn u16_at(b: &[u8], i: usize) -> usize {
    usize::from(u16::from_be_bytes([b[i], b[i + 1]]))
}

fn u32_at(b: &[u8], i: usize) -> usize {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]) as usize
}

/// Full-frame latencies (ms) of the sandbox's desktop through `/sockets/vnc`.
async fn vnc_frames(api: &Api, conversation: &str) -> (Vec<f64>, (usize, usize)) {
    let url = format!(
        "{}/sockets/vnc/{conversation}",
        api.url.replacen("http://", "ws://", 1)
    );
    let (mut ws, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    ws.send(Ws::text(
        json!({"type": "auth", "session_api_key": api.key}).to_string(),
    ))
    .await
    .unwrap();
    let mut rfb = Rfb {
        ws,
        buf: Vec::new(),
    };
    let version = rfb.read(12).await;
    assert!(version.starts_with(b"RFB 003."), "{version:?}");
    rfb.send(b"RFB 003.008\n".to_vec()).await;
    let n = rfb.read(1).await[0] as usize;
    let types = rfb.read(n).await;
    assert!(types.contains(&1), "no 'None' security type: {types:?}");
    rfb.send(vec![1]).await;
    assert_eq!(u32_at(&rfb.read(4).await, 0), 0, "security failed");
    rfb.send(vec![1]).await; // shared
    let init = rfb.read(24).await;
    let (w, h, bpp) = (u16_at(&init, 0), u16_at(&init, 2), usize::from(init[4]));
    let name_len = u32_at(&init, 20);
    rfb.read(name_len).await;
    // SetEncodings: raw only, so a frame's size is known from its rectangles.
    rfb.send(vec![2, 0, 0, 1, 0, 0, 0, 0]).await;
    let mut out = Vec::new();
    for _ in 0..FRAMES {
        let started = Instant::now();
        let mut req = vec![3, 0, 0, 0, 0, 0];
        req.extend_from_slice(&(w as u16).to_be_bytes());
        req.extend_from_slice(&(h as u16).to_be_bytes());
        rfb.send(req).await;
        loop {
            let kind = rfb.read(1).await[0];
            match kind {
                0 => {
                    let head = rfb.read(3).await;
                    let rects = u16_at(&head, 1);
                    for _ in 0..rects {
                        let r = rfb.read(12).await;
                        let (rw, rh) = (u16_at(&r, 4), u16_at(&r, 6));
                        let enc = i32::from_be_bytes([r[8], r[9], r[10], r[11]]);
                        if enc == 0 {
                            rfb.read(rw * rh * bpp / 8).await;
                        }
                    }
                    break;
                }
                2 => {}
                3 => {
                    let head = rfb.read(7).await;
                    rfb.read(u32_at(&head, 3)).await;
                }
                other => panic!("unexpected RFB message {other}"),
            }
        }
        out.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    (out, (w, h))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if !tandem(&["sandbox", "ls"]).status.success() {
        println!("skipped: no Docker daemon (source scripts/docker.sh)");
        return;
    }
    let bin = tandem_bin().unwrap();
    let bin = bin.to_string_lossy().into_owned();
    println!("Sandbox benchmarks ({bin})");

    // 1. The image.
    if std::env::var("BENCH_COLD").as_deref() == Ok("1") {
        let r = ok_json(&["sandbox", "build", "--tag", TAG, "--no-cache"]);
        println!(
            "image build, cold (no cache; base present): {:.1} s",
            r["seconds"].as_f64().unwrap()
        );
    }
    // A code change, as the image sees one: another binary (this one and a byte more).
    let scratch = tempfile::tempdir().unwrap();
    let other = scratch.path().join("tandem");
    let mut bytes = std::fs::read(&bin).unwrap();
    bytes.push(0);
    std::fs::write(&other, bytes).unwrap();
    let other = other.to_string_lossy().into_owned();
    let changed = ok_json(&["sandbox", "build", "--tag", TAG, "--binary", &other]);
    assert_eq!(changed["cached"], false, "{changed}");
    ok_json(&["sandbox", "build", "--tag", TAG]);
    let cached = ok_json(&["sandbox", "build", "--tag", TAG]);
    assert_eq!(cached["cached"], true, "{cached}");
    println!(
        "image build after a code change (packages from cache, new binary layer): {:.2} s",
        changed["seconds"].as_f64().unwrap()
    );
    println!(
        "image build, nothing changed (all cache): {:.2} s",
        cached["seconds"].as_f64().unwrap()
    );
    println!(
        "image size: {:.0} MB",
        cached["size_bytes"].as_f64().unwrap() / 1e6
    );

    // 2. Start to healthy: conversations on the host (the default) against kept inside the
    // container (`--ephemeral`), and against an earlier Tandem when BENCH_BEFORE_BIN names its
    // binary (BENCH_BEFORE_IMAGE its image, default tandem-sandbox:latest) — the start as it was
    // before conversations lived on the host (key in the environment, chown, no read-back).
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    // A person's folder: a root-owned one is refused.
    std::os::unix::fs::chown(&work, Some(1000), Some(1000)).unwrap();
    let w = work.to_string_lossy().into_owned();
    let home = dir.path().join("home").to_string_lossy().into_owned();
    let start_ms = |bin: &str, image: &str, extra: &[&str]| {
        let mut starts = Vec::new();
        for _ in 0..5 {
            let mut args = vec!["sandbox", "start", "--image", image, "--workspace", &w];
            args.extend_from_slice(extra);
            let t = Instant::now();
            let out = Command::new(bin)
                .args(&args)
                .env("TANDEM_HOME", &home)
                .env_remove("LLM_MODEL")
                .output()
                .unwrap();
            starts.push(t.elapsed().as_secs_f64() * 1000.0);
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let sb: Value = serde_json::from_slice(&out.stdout).unwrap();
            tandem(&["sandbox", "stop", sb["id"].as_str().unwrap()]);
        }
        let min = starts.iter().copied().fold(f64::MAX, f64::min);
        (median(&mut starts), min)
    };
    if let Ok(before) = std::env::var("BENCH_BEFORE_BIN") {
        let image = std::env::var("BENCH_BEFORE_IMAGE")
            .unwrap_or_else(|_| "tandem-sandbox:latest".to_owned());
        let (ms, min) = start_ms(&before, &image, &[]);
        println!(
            "container start to healthy, before ({before} with {image}, median of 5): {ms:.0} ms (min {min:.0})"
        );
    }
    let (inside, inside_min) = start_ms(&bin, TAG, &["--ephemeral"]);
    let (host, host_min) = start_ms(&bin, TAG, &[]);
    println!(
        "container start to healthy (tandem sandbox start, median of 5): conversations inside the container {inside:.0} ms (min {inside_min:.0}), on the host {host:.0} ms (min {host_min:.0}): ratio {:.2}x",
        host / inside
    );

    // 3. Per step, sandbox against local.
    let llm = llm();
    let local = TandemServer::start(&dir.path().join("local-home"), &[]).unwrap();
    let local_api = Api {
        http: reqwest::Client::new(),
        url: local.url.clone(),
        key: KEY.to_owned(),
    };
    let sb = ok_json(&[
        "sandbox",
        "start",
        "--image",
        TAG,
        "--workspace",
        &w,
        "--ephemeral",
    ]);
    let sandbox_api = Api {
        http: reqwest::Client::new(),
        url: sb["url"].as_str().unwrap().to_owned(),
        key: sb["session_key"].as_str().unwrap().to_owned(),
    };
    let (mut l, mut s) = (Vec::new(), Vec::new());
    for _ in 0..REPS {
        l.push(local_api.per_step_ms(&llm, &w).await);
        s.push(sandbox_api.per_step_ms(&llm, "/workspace").await);
    }
    let (lm, sm) = (median(&mut l), median(&mut s));
    println!(
        "per step, {STEPS}-step run, median of {REPS}: local {lm:.2} ms, sandbox {sm:.2} ms: ratio {:.2}x (overhead {:+.2} ms/step)",
        sm / lm,
        sm - lm
    );

    // 4. VNC frame latency.
    let conv = sandbox_api.create(&llm, "/workspace", false).await;
    let (mut frames, (fw, fh)) = vnc_frames(&sandbox_api, &conv).await;
    println!(
        "VNC full frame {fw}x{fh} raw through /sockets/vnc, request to last byte, {FRAMES} frames: median {:.1} ms, p95 {:.1} ms",
        median(&mut frames),
        p95(&mut frames)
    );
    tandem(&["sandbox", "stop", sb["id"].as_str().unwrap()]);
}
