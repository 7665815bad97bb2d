//! Replay through REST: the agent's terminal screen and the workspace's checkpoint as of each
//! event of a real run, a secret never recorded, and bad input (a missing or unknown event, a
//! damaged recording).

use crate::harness;

use harness::TestServer;
use serde_json::{Value, json};
use tandem_testkit::Step;

const CANARY: &str = "replay-canary-9d2b61";

async fn replay(t: &TestServer, id: &str, event: &str) -> Value {
    let (s, v) = t
        .get(&format!("/api/conversations/{id}/replay?event_id={event}"))
        .await;
    assert_eq!(s, 200, "{v}");
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_event_replays_the_terminal_screen_and_the_files_as_they_were() {
    let t = TestServer::start().await;
    let mut steps = Vec::new();
    for n in 0..6 {
        let command = if n == 3 {
            format!("echo step-{n} > f{n}.txt; cat f{n}.txt; echo {CANARY}")
        } else {
            format!("echo step-{n} > f{n}.txt; cat f{n}.txt")
        };
        steps.push(Step::tool_call("terminal", json!({ "command": command })));
    }
    steps.push(Step::tool_call("finish", json!({"message": "done"})));
    let llm = harness::llm(steps);
    let id = t
        .create(&llm, json!({"secrets": {"REPLAY_CANARY": CANARY}}))
        .await;
    t.message(&id, "go", true).await;
    t.wait_status(&id, &["finished"]).await;

    let events = t.events(&id).await;
    let (_, list) = t.get(&format!("/api/conversations/{id}/checkpoints")).await;
    let checkpoints = list["checkpoints"].as_array().unwrap().clone();

    // Before the first command the terminal had not started.
    let first_action = events.iter().find(|e| e["kind"] == "ActionEvent").unwrap();
    let before = replay(&t, &id, first_action["id"].as_str().unwrap()).await;
    assert!(before["terminal"].is_null(), "{before}");

    let observations: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "terminal")
        .collect();
    assert_eq!(observations.len(), 6);
    for (n, o) in observations.iter().enumerate() {
        let event = o["id"].as_str().unwrap();
        let state = replay(&t, &id, event).await;
        assert_eq!(state["event_id"], event);
        let terminal = &state["terminal"];
        assert_eq!(terminal["at_event_id"], event, "{state}");
        let screen = terminal["screen"].as_str().unwrap();
        assert!(
            screen.contains(&format!("\nstep-{n}")),
            "the command's output is on the screen at its observation:\n{screen}"
        );
        assert!(
            !screen.contains(&format!("step-{}", n + 1)),
            "nothing after the event is:\n{screen}"
        );
        assert!(!screen.contains(CANARY), "{screen}");
        assert_eq!(
            (terminal["cols"].as_u64(), terminal["rows"].as_u64()),
            (Some(160), Some(48))
        );
        // The files: the checkpoint taken at this observation.
        let checkpoint = checkpoints
            .iter()
            .rev()
            .find(|c| c["event_id"] == event)
            .expect("each observation is checkpointed");
        assert_eq!(state["workspace"]["tree"], checkpoint["tree"], "{state}");
        // What it changed since the checkpoint before: this step's file, and no other.
        let diff = state["workspace"]["diff"].as_str().unwrap();
        assert!(diff.contains(&format!("b/f{n}.txt")), "{diff}");
        assert!(diff.contains(&format!("+step-{n}")), "{diff}");
        if n > 0 {
            assert!(!diff.contains(&format!("f{}.txt", n - 1)), "{diff}");
        }
        assert_eq!(state["workspace"]["diff_truncated"], false);
        assert!(state["browser"].is_null());
    }

    // The secret is in no recording.
    let home = t.home.path().to_path_buf();
    let dir = home
        .join("conversations")
        .join(id.replace('-', ""))
        .join("replay");
    let mut casts = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(CANARY),
            "{} holds the secret",
            path.display()
        );
        if path.extension().is_some_and(|e| e == "cast") {
            casts.push(path);
        }
    }
    assert_eq!(casts.len(), 1, "{casts:?}");

    // The trace: one file, the secret nowhere in it, every checkpoint's tree in its bundle.
    let res = t
        .http
        .get(t.url(&format!("/api/conversations/{id}/trace")))
        .header("X-Session-API-Key", harness::KEY)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), 200);
    assert_eq!(res.headers()["content-type"], "application/x-tandem-trace");
    let bytes = res.bytes().await.unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains(CANARY));
    let scratch = tempfile::tempdir().unwrap();
    let file = scratch.path().join("t.tandem-trace");
    std::fs::write(&file, &bytes).unwrap();
    let opened = tandem_replay::trace::open(&file, &scratch.path().join("open")).unwrap();
    assert!(opened.notes.is_empty(), "{:?}", opened.notes);
    assert_eq!(
        opened.manifest.conversation_id.replace('-', ""),
        id.replace('-', "")
    );
    assert_eq!(
        std::fs::read_dir(opened.conversation_dir.join("events"))
            .unwrap()
            .count(),
        events.len()
    );
    let bundle = opened.bundle.expect("the checkpoints' trees");
    let repo = scratch.path().join("trees.git");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    git(&["init", "--quiet", "--bare", &repo.to_string_lossy()]);
    git(&[
        "-C",
        &repo.to_string_lossy(),
        "fetch",
        "--quiet",
        &bundle.to_string_lossy(),
        "refs/tandem-trace/*:refs/tandem-trace/*",
    ]);
    for c in &checkpoints {
        let tree = c["tree"].as_str().unwrap();
        assert_eq!(
            git(&["-C", &repo.to_string_lossy(), "cat-file", "-t", tree]).trim(),
            "tree"
        );
    }

    // Bad input: no event, an unknown one.
    let (s, v) = t.get(&format!("/api/conversations/{id}/replay")).await;
    assert_eq!(s, 422, "{v}");
    assert!(v.to_string().contains("event_id"), "{v}");
    let (s, v) = t
        .get(&format!(
            "/api/conversations/{id}/replay?event_id=no-such-event"
        ))
        .await;
    assert_eq!(s, 422, "{v}");
    assert!(v.to_string().contains("no-such-event"), "{v}");

    // A lost index: the screen is rebuilt from the start of the recording, and said so.
    let index = {
        let mut name = casts[0].clone().into_os_string();
        name.push(".idx");
        std::path::PathBuf::from(name)
    };
    std::fs::remove_file(&index).unwrap();
    let last = observations[5]["id"].as_str().unwrap();
    let state = replay(&t, &id, last).await;
    assert!(
        state["terminal"]["screen"]
            .as_str()
            .unwrap()
            .contains("step-5"),
        "{state}"
    );
    assert!(state["notes"].to_string().contains("no index"), "{state}");

    // A recording that is not one: the terminal lane is empty and named, the rest answers.
    std::fs::write(&casts[0], b"not a recording\n").unwrap();
    let state = replay(&t, &id, last).await;
    assert!(state["terminal"].is_null(), "{state}");
    assert!(!state["notes"].as_array().unwrap().is_empty(), "{state}");
    assert!(state["workspace"]["tree"].is_string(), "{state}");
}

/// The browser lane on real Chromium: a frame after each browser action, the newest one at or
/// before each event, its image served, its address as the page's.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_browser_action_leaves_a_frame_that_replays_at_its_event() {
    let site = tandem_testkit::site::serve().await;
    let t = TestServer::start().await;
    let llm = harness::llm(vec![
        Step::tool_call("browser_navigate", json!({"url": site.url("/")})),
        Step::tool_call("browser_navigate", json!({"url": site.url("/login.html")})),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let mut agent = TestServer::agent(&llm);
    agent["tools"] = json!([{"name": "browser_tool_set"}]);
    let id = t.create(&llm, json!({"agent": agent})).await;
    t.message(&id, "go", true).await;
    t.wait_status(&id, &["finished"]).await;

    let events = t.events(&id).await;
    let navigations: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "browser_navigate")
        .collect();
    assert_eq!(navigations.len(), 2);
    // The frame is recorded just after its observation: wait until both are listed.
    let last = navigations[1]["id"].as_str().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut state = replay(&t, &id, last).await;
    while !state["browser"]["url"]
        .as_str()
        .is_some_and(|u| u.ends_with("/login.html"))
    {
        assert!(
            std::time::Instant::now() < deadline,
            "no frame of the second page: {state}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        state = replay(&t, &id, last).await;
    }
    let second = state["browser"]["frame_id"].as_str().unwrap().to_owned();

    let first = replay(&t, &id, navigations[0]["id"].as_str().unwrap()).await;
    assert_eq!(first["browser"]["url"], site.url("/"), "{first}");
    let first_frame = first["browser"]["frame_id"].as_str().unwrap().to_owned();
    assert_ne!(first_frame, second);
    // Before the first action there is no frame.
    let start = events.iter().find(|e| e["kind"] == "ActionEvent").unwrap();
    let before = replay(&t, &id, start["id"].as_str().unwrap()).await;
    assert!(before["browser"].is_null(), "{before}");

    for frame in [&first_frame, &second] {
        let res = reqwest::Client::new()
            .get(t.url(&format!("/api/conversations/{id}/replay/frames/{frame}")))
            .header("X-Session-API-Key", harness::KEY)
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()["content-type"], "image/jpeg");
        let bytes = res.bytes().await.unwrap();
        assert_eq!(&bytes[..3], &[0xFF, 0xD8, 0xFF], "a JPEG");
    }
    let (s, v) = t
        .get(&format!("/api/conversations/{id}/replay/frames/f9999999"))
        .await;
    assert_eq!(s, 422, "{v}");
    assert!(v.to_string().contains("frame_id"), "{v}");
}
