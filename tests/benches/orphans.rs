//! Seconds from `kill -9` of `tandem serve` to no process of it left, while a conversation
//! browses (real Chromium), calls server-everything over stdio and runs `sleep 1000 &` and a
//! long `sleep 1001`; each round then restarts the server and resumes the conversation.
//! `BENCH_ROUNDS` rounds (20): median and max seconds, processes per round, rounds resumed.
//!
//! Run: `cargo bench -p tandem-e2e --bench orphans`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tandem_e2e::chaos;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let Some(everything) = chaos::everything() else {
        println!("orphans: skipped (server-everything is not in the npm cache)");
        return;
    };
    if !chaos::chromium() {
        println!("orphans: skipped (no /usr/bin/chromium)");
        return;
    }
    let rounds: usize = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let site = tandem_testkit::site::serve().await;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let mut seconds = Vec::new();
    let mut children = Vec::new();
    let mut resumed = 0;
    for n in 0..rounds {
        let work = dir.path().join(format!("work-{n}"));
        match chaos::round(
            &home,
            &work,
            &everything,
            &site.url("/"),
            Duration::from_secs(60),
        )
        .await
        {
            Ok(r) => {
                println!(
                    "round {n}: {} processes, none left after {:.3} s, resumed: {}",
                    r.children, r.seconds_to_none_left, r.resumed
                );
                seconds.push(r.seconds_to_none_left);
                children.push(r.children);
                resumed += usize::from(r.resumed);
            }
            Err(e) => println!("round {n}: FAILED: {e:#}"),
        }
    }
    seconds.sort_by(f64::total_cmp);
    let median = seconds.get(seconds.len() / 2).copied().unwrap_or(f64::NAN);
    let max = seconds.last().copied().unwrap_or(f64::NAN);
    println!(
        "orphans: {} of {rounds} rounds clean; seconds from kill -9 to no leftover process: median {median:.3}, max {max:.3}; processes per round {:?}; resumed {resumed}/{rounds}",
        seconds.len(),
        children,
    );
}
