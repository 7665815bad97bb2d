//! Children die with their owner: `kill -9` of `tandem serve` while a conversation browses
//! (real Chromium), calls an MCP server (server-everything) and runs commands; within 5 s (an
//! "it happened at all" guard, not a speed assertion) no process of the dead server is left,
//! and a restarted server resumes the conversation. The benchmark `orphans` runs twenty rounds
//! and prints the seconds.

use std::time::Duration;

use tandem_e2e::chaos;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_the_server_leaves_nothing_and_the_conversation_resumes() {
    let Some(everything) = chaos::everything() else {
        eprintln!("skipped: server-everything is not in the npm cache (scripts/setup.sh)");
        return;
    };
    if !chaos::chromium() {
        eprintln!("skipped: no /usr/bin/chromium");
        return;
    }
    let site = tandem_testkit::site::serve().await;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    for n in 0..3 {
        let work = dir.path().join(format!("work-{n}"));
        let round = chaos::round(
            &home,
            &work,
            &everything,
            &site.url("/"),
            Duration::from_secs(5),
        )
        .await
        .unwrap_or_else(|e| panic!("round {n}: {e:#}"));
        assert!(round.children >= 4, "round {n}: {round:?}");
        assert!(round.resumed, "round {n}: not resumed: {round:?}");
    }
}
