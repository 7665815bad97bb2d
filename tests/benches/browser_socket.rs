//! The browser socket with a peer that never reads (issue P10): `tandem serve` (the built
//! binary) runs a conversation whose agent opened a page that repaints noise every frame (so
//! the screencast never stops), and a client authenticates on `/sockets/browser/{id}` and then
//! never reads, for `BENCH_SECS` (60) seconds. The server's RSS is sampled every 2 s and
//! printed (start, peak, end, growth), with when the server gave up on the client; a client
//! that reads alongside counts the frames it got, to show the others kept being served.
//!
//! Run: `cargo build -p tandem-cli --bin tandem && TANDEM_BIN=…/tandem cargo bench -p
//! tandem-e2e --bench browser_socket` (`BENCH_SECS=20` for a shorter window).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tandem_e2e::{KEY, TandemServer, rss_mb};
use tandem_protocol::{AgentSpec, LlmConfig};
use tandem_testkit::{ScriptedLlmServer, Step};
use tokio_tungstenite::tungstenite::Message as WsMessage;

const NOISE: &str = "data:text/html,<title>Noise</title><style>body{margin:0}canvas{width:100vw;height:100vh;image-rendering:pixelated}</style><canvas id=c width=320 height=200></canvas><script>const x=document.getElementById('c').getContext('2d');const im=x.createImageData(320,200);function f(){const d=im.data;for(let i=0;i<d.length;i+=4){const v=Math.random()*255|0;d[i]=v;d[i+1]=v^85;d[i+2]=v^170;d[i+3]=255}x.putImageData(im,0,0);requestAnimationFrame(f)}f()</script>";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let secs: u64 = std::env::var("BENCH_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let home = tempfile::tempdir().unwrap();
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let server = TandemServer::start(&home.path().join("home"), &[]).unwrap();
    let llm = ScriptedLlmServer::start(
        tandem_testkit::Script::new(vec![
            Step::tool_call("browser_navigate", json!({"url": NOISE})),
            Step::tool_call("browser_request_handoff", json!({"reason": "watch"})),
            Step::text("done"),
        ])
        .with_no_tools_text("Bench"),
    );
    let mut config = LlmConfig::new("openai/fake");
    config.base_url = Some(llm.base_url());
    config.api_key = Some("x".into());
    config.num_retries = 0;
    let mut agent = serde_json::to_value(AgentSpec::default_for(config)).unwrap();
    agent["tools"] = json!([{"name": "browser_tool_set"}, {"name": "browser_request_handoff"}]);
    let http = reqwest::Client::new();
    let created: Value = http
        .post(format!("{}/api/conversations", server.url))
        .header("X-Session-API-Key", KEY)
        .json(&json!({
            "agent": agent,
            "workspace": {"kind": "LocalWorkspace", "working_dir": work},
            "initial_message": {"role": "user", "content": [{"type": "text", "text": "watch"}], "run": true},
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let id = created["id"].as_str().unwrap().to_owned();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let s: Value = http
            .get(format!(
                "{}/api/conversations/{id}/browser/state",
                server.url
            ))
            .header("X-Session-API-Key", KEY)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap_or_default();
        if !s["handoff"].is_null() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the agent never opened the page: {s}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let ws_url = format!(
        "{}/sockets/browser/{id}",
        server.url.replacen("http://", "ws://", 1)
    );
    let auth = json!({"type": "auth", "session_api_key": KEY}).to_string();
    // The reading viewer.
    let (mut reader, _) = tokio_tungstenite::connect_async(&ws_url).await.unwrap();
    reader
        .send(WsMessage::Text(auth.clone().into()))
        .await
        .unwrap();
    let frames = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = std::sync::Arc::clone(&frames);
    let counted = tokio::spawn(async move {
        while let Some(Ok(m)) = reader.next().await {
            if let WsMessage::Text(t) = m
                && t.as_str().starts_with("{\"type\":\"frame\"")
            {
                seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    });
    tokio::time::sleep(Duration::from_secs(3)).await;
    let pid = server.child.pid();
    let start = rss_mb(pid);
    // The silent peer: a small receive buffer, authenticated, then never read.
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let addr: std::net::SocketAddr = server.url.trim_start_matches("http://").parse().unwrap();
    let stream = sock.connect(addr).await.unwrap();
    let (mut silent, _) = tokio_tungstenite::client_async(&ws_url, stream)
        .await
        .unwrap();
    silent.send(WsMessage::Text(auth.into())).await.unwrap();
    let t0 = Instant::now();
    let frames_before = frames.load(std::sync::atomic::Ordering::Relaxed);
    let mut peak = start;
    let mut samples = Vec::new();
    while t0.elapsed() < Duration::from_secs(secs) {
        tokio::time::sleep(Duration::from_secs(2)).await;
        let rss = rss_mb(pid);
        peak = peak.max(rss);
        samples.push((t0.elapsed().as_secs(), rss));
    }
    let end = rss_mb(pid);
    // What the silent peer was sent, read now: it ends if the server closed it.
    let mut read = 0u64;
    let ended = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(Ok(m)) = silent.next().await {
            if matches!(m, WsMessage::Close(_)) {
                break;
            }
            read += 1;
        }
    })
    .await
    .is_ok();
    let served = frames.load(std::sync::atomic::Ordering::Relaxed) - frames_before;
    counted.abort();
    println!();
    println!(
        "browser socket, a peer that never reads for {secs} s (tandem serve, noise page screencast)"
    );
    println!(
        "server RSS: start {start:.1} MB, peak {peak:.1} MB, end {end:.1} MB, growth {:+.1} MB",
        end - start
    );
    println!(
        "samples (s, MB): {}",
        samples
            .iter()
            .map(|(s, m)| format!("{s}:{m:.1}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    println!("the reading viewer got {served} frames during the window");
    println!(
        "the silent peer {} ({read} frames were waiting in its buffers)",
        if ended {
            "had been closed by the server"
        } else {
            "was still open"
        }
    );
}
