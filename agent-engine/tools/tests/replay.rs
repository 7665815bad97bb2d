//! The terminal recorded for replay: the agent's commands and a person's typing on a real
//! bash, every event marked after the output that came before it, the screen as of each marker
//! rebuilt from the recording, secrets never written.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;
use tandem_protocol::Observation;
use tandem_sdk::{Masker, Tool, ToolContext};
use tandem_tools::terminal::{Lane, Recorder, TerminalTool};
use tokio_util::sync::CancellationToken;

const CANARY: &str = "replay-canary-5f1e0c";

fn casts(dir: &std::path::Path, lane: &str) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            name.starts_with(lane) && name.ends_with(".cast")
        })
        .collect();
    found.sort();
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_event_marks_the_screen_as_it_was_and_secrets_are_never_written() {
    let work = tempfile::tempdir().unwrap();
    let recordings = tempfile::tempdir().unwrap();
    let recorder = Recorder::new(recordings.path().join("replay"));
    let tool = TerminalTool::new();
    tool.record_to(Arc::clone(&recorder), Lane::Agent);
    let ctx = ToolContext {
        cancel: CancellationToken::new(),
        working_dir: work.path().to_path_buf(),
        conversation_dir: None,
        env: HashMap::new(),
        masker: Masker::new([CANARY]),
    };
    let mut marked = Vec::new();
    for n in 0..12 {
        let command = if n == 5 {
            format!("echo step-{n} {CANARY}")
        } else {
            format!("echo step-{n}")
        };
        let action = tool.parse_action(json!({ "command": command })).unwrap();
        let Observation::Terminal(o) = tool.execute(&action, ctx.clone()).await else {
            panic!("not a terminal observation");
        };
        assert_eq!(o.exit_code, Some(0));
        // The observation's event, recorded once the command has returned.
        let id = format!("event-{n}");
        let r = Arc::clone(&recorder);
        let marker = id.clone();
        tokio::task::spawn_blocking(move || r.mark(&marker))
            .await
            .unwrap();
        marked.push((n, id));
    }
    // A person resizes and types; the next event marks both.
    let session = tool.session().unwrap();
    session.resize(20, 70).unwrap();
    session
        .write_input(format!("echo typed-$((6*7)) {CANARY}\r").as_bytes())
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let (_, mut rx) = session.attach();
    let mut seen = String::new();
    while !seen.contains("typed-42") {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let chunk = tokio::time::timeout(left, rx.recv())
            .await
            .expect("the typed command's output")
            .unwrap();
        seen.push_str(&String::from_utf8_lossy(&chunk));
    }
    let r = Arc::clone(&recorder);
    tokio::task::spawn_blocking(move || r.mark("event-typed"))
        .await
        .unwrap();
    drop(session);
    drop(tool);

    let agent = casts(recorder.dir(), "agent");
    assert_eq!(agent.len(), 1, "one session, one recording: {agent:?}");
    let cast = &agent[0];
    for (n, id) in &marked {
        let seek = tandem_replay::screen_at(cast, id).unwrap();
        let screen = seek.screen.text();
        assert!(
            screen.contains(&format!("step-{n}")),
            "event {id} shows its own output:\n{screen}"
        );
        assert!(
            !screen.contains(&format!("step-{}", n + 1)),
            "event {id} shows nothing after it:\n{screen}"
        );
        assert_eq!(seek.screen.size(), (160, 48));
    }
    let typed = tandem_replay::screen_at(cast, "event-typed").unwrap();
    assert!(
        typed.screen.text().contains("typed-42"),
        "{:?}",
        typed.screen
    );
    assert_eq!(typed.screen.size(), (70, 20), "the resize is recorded");

    let bytes = std::fs::read(cast).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    assert!(
        !text.contains(CANARY),
        "the canary is masked in output and input"
    );
    assert!(text.contains(tandem_sdk::SECRET_MASK));
    assert!(text.contains("\"i\""), "the person's input is recorded");
}
