//! A person's `yes` in the agent's shell while the agent idles: `tandem serve`, a conversation
//! that has not run, `/sockets/pty/{id}` attached to the agent's shell (a viewer that reads
//! everything), `yes` typed into it for `BENCH_SECS` (60) seconds. Prints the server's RSS
//! before, the highest seen, after, and the growth (target: at most 20 MB).
//!
//! Run: `cargo bench -p tandem-e2e --bench pty_flood`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::json;
use tandem_e2e::{KEY, TandemServer, rss_mb};
use tandem_protocol::{AgentSpec, LlmConfig};
use tandem_sdk::remote::{RemoteConversationOptions, RemoteWorkspace};
use tokio_tungstenite::tungstenite::Message;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let secs: u64 = std::env::var("BENCH_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let server = tokio::task::spawn_blocking(move || TandemServer::start(&home, &[]))
        .await
        .unwrap()
        .unwrap();
    let pid = server.child.pid();
    let mut config = LlmConfig::new("openai/fake");
    config.base_url = Some("http://127.0.0.1:9".into());
    config.api_key = Some("x".into());
    let ws = RemoteWorkspace::connect(&server.url, Some(KEY.into()), work.to_string_lossy())
        .await
        .unwrap();
    let conv = ws
        .create_conversation(&RemoteConversationOptions::new(AgentSpec::default_for(
            config,
        )))
        .await
        .unwrap();
    let url = format!(
        "{}/sockets/pty/{}",
        server.url.replacen("http", "ws", 1),
        conv.id()
    );
    let (mut socket, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    socket
        .send(Message::text(
            json!({"type": "auth", "session_api_key": KEY}).to_string(),
        ))
        .await
        .unwrap();
    // Let the shell start and the server settle.
    let settle = Instant::now() + Duration::from_secs(3);
    while Instant::now() < settle {
        let _ = tokio::time::timeout(Duration::from_millis(200), socket.next()).await;
    }
    let before = rss_mb(pid);
    socket
        .send(Message::text(
            json!({"type": "input", "data": "yes\r"}).to_string(),
        ))
        .await
        .unwrap();
    let end = Instant::now() + Duration::from_secs(secs);
    let mut bytes: u64 = 0;
    let mut highest = before;
    let mut sampled = Instant::now();
    while Instant::now() < end {
        if let Ok(Some(Ok(msg))) =
            tokio::time::timeout(Duration::from_millis(200), socket.next()).await
        {
            bytes += msg.len() as u64;
        }
        if sampled.elapsed() > Duration::from_millis(500) {
            highest = highest.max(rss_mb(pid));
            sampled = Instant::now();
        }
    }
    let during = rss_mb(pid);
    socket
        .send(Message::text(
            json!({"type": "input", "data": "\u{3}"}).to_string(),
        ))
        .await
        .unwrap();
    let calm = Instant::now() + Duration::from_secs(2);
    while Instant::now() < calm {
        let _ = tokio::time::timeout(Duration::from_millis(200), socket.next()).await;
    }
    let after = rss_mb(pid);
    println!(
        "pty_flood: yes for {secs} s in the idle agent's shell ({:.0} MB to the viewer): server RSS before {before:.1} MB, highest {highest:.1} MB, at the end {during:.1} MB, after C-c {after:.1} MB; growth {:.1} MB (target <= 20 MB)",
        bytes as f64 / 1e6,
        highest - before,
    );
}
