//! `kill -9` of `tandem serve` at random moments during 30 rewinds of a 1,500-file workspace:
//! after the restart, each rewind has happened entirely or not at all — every file has the
//! version before or every file the version after — and no temp file is left behind.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_e2e::{KEY, TandemServer};

async fn api(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    body: Option<Value>,
) -> (u16, Value) {
    tandem_e2e::api(http, method, url, KEY, body).await
}
use tandem_testkit::{ScriptedLlmServer, Step};

const FILES: usize = 1500;

/// The versions the workspace's files hold, and any leftover temp file.
fn versions(ws: &Path) -> (BTreeSet<String>, usize, Vec<String>) {
    let mut seen = BTreeSet::new();
    let mut count = 0;
    let mut temps = Vec::new();
    for entry in std::fs::read_dir(ws.join("f")).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.contains("tandem-restore") {
            temps.push(name);
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        seen.insert(text.lines().next().unwrap_or("").to_owned());
        count += 1;
    }
    (seen, count, temps)
}

/// A small deterministic generator for the kill delays (no extra crate for one test).
struct Lcg(u64);
impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n.max(1)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_during_rewinds_ends_each_before_or_after() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let write = |v: &str| {
        format!(
            "mkdir -p f && for i in $(seq 1 {FILES}); do printf '{v}\\n%04096d\\n' $i > f/$i.txt; done"
        )
    };
    let llm = ScriptedLlmServer::start(
        tandem_testkit::Script::new([
            Step::tool_call("terminal", json!({"command": write("v1")})),
            Step::tool_call("terminal", json!({"command": write("v2")})),
            Step::tool_call("finish", json!({"message": "written"})),
        ])
        .with_no_tools_text("A title"),
    );
    let http = reqwest::Client::new();
    let mut server = TandemServer::start(&home, &[]).unwrap();
    let agent = json!({
        "llm": {"model": "openai/scripted", "api_key": "sk-x", "base_url": llm.base_url(), "num_retries": 0},
        "tools": [{"name": "terminal"}],
    });
    let (s, info) = api(
        &http,
        reqwest::Method::POST,
        &format!("{}/api/conversations", server.url),
        Some(json!({"agent": agent, "workspace": {"working_dir": ws.to_string_lossy()}})),
    )
    .await;
    assert_eq!(s, 201, "{info}");
    let id = info["id"].as_str().unwrap().to_owned();
    let (s, b) = api(
        &http,
        reqwest::Method::POST,
        &format!("{}/api/conversations/{id}/events", server.url),
        Some(json!({"role": "user", "content": [{"type": "text", "text": "write"}], "run": true})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let start = Instant::now();
    loop {
        let (_, info) = api(
            &http,
            reqwest::Method::GET,
            &format!("{}/api/conversations/{id}", server.url),
            None,
        )
        .await;
        if info["execution_status"] == "finished" {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the agent never finished: {info}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (_, list) = api(
        &http,
        reqwest::Method::GET,
        &format!("{}/api/conversations/{id}/checkpoints", server.url),
        None,
    )
    .await;
    let agent_events: Vec<String> = list["checkpoints"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["author"] == "agent")
        .map(|c| c["event_id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(agent_events.len(), 2, "{list}");
    assert_eq!(versions(&ws).0, BTreeSet::from(["v2".to_owned()]));

    // One uninterrupted rewind, timed, to aim the kills inside the restore.
    let timed = Instant::now();
    let (s, r) = api(
        &http,
        reqwest::Method::POST,
        &format!("{}/api/conversations/{id}/rewind", server.url),
        Some(json!({"event_id": agent_events[0]})),
    )
    .await;
    assert_eq!(s, 200, "{r}");
    let full = timed.elapsed().as_millis() as u64;
    assert_eq!(versions(&ws).0, BTreeSet::from(["v1".to_owned()]));

    let mut rng = Lcg(u64::from(std::process::id()) ^ 0x5eed);
    let mut outcomes = (0, 0);
    for round in 0..30 {
        let before = versions(&ws).0;
        let to = if before.contains("v1") {
            &agent_events[1]
        } else {
            &agent_events[0]
        };
        let after = if before.contains("v1") { "v2" } else { "v1" };
        let url = format!("{}/api/conversations/{id}/rewind", server.url);
        let request = {
            let http = http.clone();
            let to = to.clone();
            tokio::spawn(async move {
                api(
                    &http,
                    reqwest::Method::POST,
                    &url,
                    Some(json!({"event_id": to})),
                )
                .await
            })
        };
        tokio::time::sleep(Duration::from_millis(rng.below(full + 50))).await;
        server.child.kill9();
        let _ = request.await;
        server = TandemServer::start(&home, &[]).unwrap();
        let (seen, count, temps) = versions(&ws);
        assert_eq!(count, FILES, "round {round}: every file is there");
        assert!(
            temps.is_empty(),
            "round {round}: temp files left: {temps:?}"
        );
        assert_eq!(seen.len(), 1, "round {round}: a mix of versions {seen:?}");
        if seen.contains(after) {
            outcomes.1 += 1;
        } else {
            assert_eq!(seen, before, "round {round}");
            outcomes.0 += 1;
        }
    }
    eprintln!(
        "30 killed rewinds of {FILES} files (uninterrupted: {full} ms): {} ended before, {} after",
        outcomes.0, outcomes.1
    );
}
