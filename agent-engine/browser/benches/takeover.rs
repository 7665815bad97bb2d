//! Takeover transition latency (issue P10): how long a person's take control and hand back
//! take on the browser's state machine, on real headless Chromium with a page open — idle, and
//! with an agent action in flight (the takeover waits for it, so that figure includes the rest
//! of the action).
//!
//! Run: `cargo bench -p tandem-browser --bench takeover` (`BENCH_REPS=500` for more rounds;
//! `TANDEM_CHROMIUM` names another Chromium).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use tandem_browser::{Browser, BrowserConfig};

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i.min(v.len() - 1)]
}

fn micros(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e6
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(run());
}

async fn run() {
    let reps: usize = std::env::var("BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().unwrap();
    let mut config =
        BrowserConfig::for_conversation(dir.path().join("conv"), dir.path().join("ws"));
    config.navigation_timeout = Duration::from_secs(10);
    let b = Browser::new(config);
    let page = "data:text/html,<title>Bench</title><p>takeover";
    assert!(!b.navigate(page, false).await.unwrap().is_error);

    let (mut take, mut back) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
    for _ in 0..reps {
        let t = Instant::now();
        let taken = b.take_control(|| true).await;
        take.push(micros(t));
        assert!(taken.is_some_and(|t| t.pause_run));
        let t = Instant::now();
        let over = b.hand_back("").await;
        back.push(micros(t));
        assert!(over.is_some_and(|o| o.resume_run));
    }

    // With the agent reading the page when the person takes control.
    let rounds = reps.min(50);
    let mut busy = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let agent = b.clone();
        let action = tokio::spawn(async move { agent.get_state(false).await });
        tokio::task::yield_now().await;
        let t = Instant::now();
        let taken = b.take_control(|| true).await;
        busy.push(micros(t));
        assert!(taken.is_some());
        drop(taken);
        // Whether the action ran before the takeover or was refused after it, it never ran
        // while the person drove.
        let _ = action.await.unwrap();
        drop(b.hand_back("").await);
    }
    b.close().await;

    println!();
    println!(
        "takeover transitions on real Chromium ({reps} rounds; {rounds} with an agent action in flight)"
    );
    for (what, v) in [
        ("take control, idle", &mut take),
        ("hand back, idle", &mut back),
        ("take control, agent action in flight", &mut busy),
    ] {
        println!(
            "{what:<40} p50 {:>9.1} µs   p95 {:>9.1} µs",
            percentile(v, 0.5),
            percentile(v, 0.95)
        );
    }
}
