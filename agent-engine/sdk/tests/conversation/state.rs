//! Secrets, reopening and crash recovery, the budget, and conversations written upstream.

use super::*;
use tandem_protocol::Budget;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_reach_the_command_and_are_masked_everywhere() {
    let s = Setup::new(vec![
        Step::tool_call(
            "terminal",
            json!({"command": "deploy --token $DEPLOY_TOKEN"}),
        ),
        Step::tool_call("terminal", json!({"command": "echo $NEW_ONE"})),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let mut options = s.options();
    options.secrets = vec![(
        "DEPLOY_TOKEN".into(),
        SecretSource::Static {
            value: "tok-123-secret".into(),
            description: None,
        },
    )];
    let h = s.start(options).await;
    h.send_message(Message::user("deploy with tok-123-secret please"), false)
        .await
        .unwrap();
    h.update_secrets(vec![(
        "NEW_ONE".into(),
        SecretSource::Static {
            value: "fresh-456-secret".into(),
            description: None,
        },
    )])
    .await
    .unwrap();
    h.run().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(h.status(), ExecutionStatus::Finished);
    let env = s.env_seen.lock().unwrap().clone();
    assert_eq!(
        env,
        [
            ("DEPLOY_TOKEN".into(), "tok-123-secret".into()),
            ("NEW_ONE".into(), "fresh-456-secret".into())
        ]
    );
    // Not in any event, on disk, or in any LLM request.
    for e in h.events() {
        let j = serde_json::to_string(&e).unwrap();
        assert!(
            !j.contains("tok-123-secret") && !j.contains("fresh-456-secret"),
            "{j}"
        );
    }
    for entry in walk(h.dir()) {
        let text = std::fs::read_to_string(&entry).unwrap_or_default();
        assert!(
            !text.contains("tok-123-secret") && !text.contains("fresh-456-secret"),
            "{}",
            entry.display()
        );
    }
    let all_requests = serde_json::to_string(&s.server.requests()).unwrap();
    assert!(!all_requests.contains("tok-123-secret") && !all_requests.contains("fresh-456-secret"));
    assert!(all_requests.contains("<secret-hidden>"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reopening_replays_state_and_recovers_a_crash() {
    let s = Setup::new(vec![
        Step::tool_call("terminal", json!({"command": "make"})),
        Step::text("all good"),
    ]);
    let h = s.start(s.options()).await;
    h.send_message(Message::user("build"), false).await.unwrap();
    let id = h.id().to_owned();
    h.close().await.unwrap();

    // Simulate a crash mid-tool: the log has an action without an observation and says running.
    {
        // The actor releases the log's lock as it ends, just after answering `close`.
        let mut attempt = 0;
        let (_, _, mut log, loaded) = loop {
            match s.store.load(&id) {
                Ok(l) => break l,
                Err(e) if attempt < 100 => {
                    attempt += 1;
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(e) => panic!("{e}"),
            }
        };
        let leaf = loaded.events.last().map(|e| e.id().to_owned());
        log.append(&Event::state_update(
            "execution_status",
            json!("running"),
            leaf.clone(),
        ))
        .unwrap();
        let action: Event = serde_json::from_value(json!({
            "id": "5b8f1c3e-0000-4000-8000-000000000001", "timestamp": "2026-11-22T12:00:00.000000",
            "source": "agent", "thought": [], "thinking_blocks": [],
            "action": {"command": "make", "is_input": false, "reset": false, "kind": "TerminalAction"},
            "tool_name": "terminal", "tool_call_id": "call_crash",
            "tool_call": {"id": "call_crash", "name": "terminal", "arguments": "{\"command\": \"make\"}", "origin": "completion"},
            "llm_response_id": "r1", "security_risk": "UNKNOWN", "kind": "ActionEvent"
        }))
        .unwrap();
        log.append(&action).unwrap();
    }
    let (h, warnings) = Conversation::open(&s.store, &id, s.runtime())
        .await
        .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    // Wait for the recovery to be recorded.
    for _ in 0..100 {
        if h.status() == ExecutionStatus::Error {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(h.status(), ExecutionStatus::Error);
    let Some(Event::AgentError(e)) = h
        .events()
        .into_iter()
        .rev()
        .find(|e| matches!(e, Event::AgentError(_)))
    else {
        panic!()
    };
    assert!(
        e.error
            .starts_with("A restart occurred while this tool was in progress")
    );
    assert_eq!(
        e.base.parent_id.as_deref(),
        Some("5b8f1c3e-0000-4000-8000-000000000001")
    );
    // And it resumes: the next request answers the crashed call, then the model replies.
    h.run().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    assert!(
        s.server.violations().is_empty(),
        "{:?}",
        s.server.violations()
    );
    assert_eq!(h.status(), ExecutionStatus::Finished);
}

/// A conversation whose LLM costs `per_token` US dollars a token.
fn priced_runtime(s: &Setup, per_token: f64) -> Runtime {
    let mut config = LlmConfig::new("openai/scripted");
    config.base_url = Some(s.server.base_url());
    config.num_retries = 0;
    config.input_cost_per_token = Some(per_token);
    config.output_cost_per_token = Some(per_token);
    Runtime {
        llm: Arc::new(OpenAiChat::new(config).unwrap()),
        ..s.runtime()
    }
}

fn reached(h: &ConversationHandle) -> Option<Value> {
    h.state().extra.get(Budget::REACHED_KEY).cloned()
}

/// Reaching the budget pauses the run, not an error: the state says what was spent, a run
/// is refused naming it until the budget is raised, and then the conversation goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_budget_pauses_the_run_and_raising_it_lets_it_go_on() {
    let s = Setup::new(vec![
        Step::tool_call("terminal", json!({"command": "echo 1"})),
        Step::tool_call("terminal", json!({"command": "echo 2"})),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let mut options = s.options();
    options.max_budget_per_task = Some(0.01);
    let h = Conversation::create(&s.store, options, priced_runtime(&s, 0.001))
        .await
        .unwrap();
    run_to_stop(&h, "spend").await;
    assert_eq!(h.status(), ExecutionStatus::Paused);
    assert!(
        !h.events()
            .iter()
            .any(|e| matches!(e, Event::ConversationError(_))),
        "a budget is no error"
    );
    assert_eq!(
        *s.ran.lock().unwrap(),
        ["echo 1"],
        "the step paid for runs; the next call is not made"
    );
    let spent = reached(&h).expect("the state says the budget was reached");
    assert_eq!(spent["limit"], "max_cost");
    assert_eq!(spent["max_cost"], 0.01);
    assert!(spent["spent_cost"].as_f64().unwrap() > 0.01, "{spent}");
    assert!(spent["spent_tokens"].as_u64().unwrap() > 0, "{spent}");

    let r = h.run().await;
    let Err(SdkError::InvalidState(why)) = r else {
        panic!("a run on a reached budget is refused: {r:?}")
    };
    assert!(why.contains("max_cost") && why.contains("$0.01"), "{why}");

    for (bad, field) in [
        (
            Budget {
                max_cost: Some(0.0),
                max_tokens: None,
            },
            "max_cost",
        ),
        (
            Budget {
                max_cost: Some(-1.0),
                max_tokens: None,
            },
            "max_cost",
        ),
        (
            Budget {
                max_cost: None,
                max_tokens: Some(0),
            },
            "max_tokens",
        ),
    ] {
        let Err(SdkError::Config(why)) = h.set_budget(bad).await else {
            panic!("{bad:?} is refused")
        };
        assert!(why.contains(field), "{why}");
    }
    assert!(reached(&h).is_some(), "nothing changed");

    h.set_budget(Budget {
        max_cost: Some(100.0),
        max_tokens: None,
    })
    .await
    .unwrap();
    assert_eq!(reached(&h), None, "raised: no longer reached");
    assert_eq!(h.budget().max_cost, Some(100.0));
    h.run().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(*s.ran.lock().unwrap(), ["echo 1", "echo 2"]);

    // The budget and the pause come back with the conversation.
    let id = h.id().to_owned();
    h.close().await.unwrap();
    let (h, _) = Conversation::open(&s.store, &id, s.runtime())
        .await
        .unwrap();
    assert_eq!(h.budget().max_cost, Some(100.0));
    assert_eq!(reached(&h), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_budget_pauses_too_and_a_bad_one_is_refused_at_creation() {
    let s = Setup::new(vec![
        Step::tool_call("terminal", json!({"command": "echo 1"})),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let mut bad = s.options();
    bad.budget = Budget {
        max_cost: None,
        max_tokens: Some(0),
    };
    let Err(SdkError::Config(why)) = Conversation::create(&s.store, bad, s.runtime()).await else {
        panic!("a budget of 0 tokens is refused")
    };
    assert!(why.contains("max_tokens"), "{why}");

    let mut options = s.options();
    options.budget = Budget {
        max_cost: None,
        max_tokens: Some(1),
    };
    let h = s.start(options).await;
    run_to_stop(&h, "go").await;
    assert_eq!(h.status(), ExecutionStatus::Paused);
    let spent = reached(&h).unwrap();
    assert_eq!(spent["limit"], "max_tokens");
    assert_eq!(spent["max_tokens"], 1);
    let r = h.run().await;
    let Err(SdkError::InvalidState(why)) = r else {
        panic!("refused: {r:?}")
    };
    assert!(
        why.contains("tokens") && why.contains("max_tokens"),
        "{why}"
    );
}

/// A one-route HTTP server on loopback answering `body` to requests carrying `header`.
fn secret_server(
    header: &'static str,
    body: &'static str,
) -> (String, std::thread::JoinHandle<usize>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/secret", listener.local_addr().unwrap());
    let handle = std::thread::spawn(move || {
        let mut served = 0;
        listener.set_nonblocking(false).unwrap();
        for stream in listener.incoming().take(1) {
            let mut stream = stream.unwrap();
            let mut buf = [0u8; 4096];
            let n = stream.read(&mut buf).unwrap();
            let request = String::from_utf8_lossy(&buf[..n]).to_ascii_lowercase();
            let (status, reply) = if request.contains(&header.to_ascii_lowercase()) {
                ("200 OK", body)
            } else {
                ("401 Unauthorized", "")
            };
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                reply.len()
            );
            stream.write_all(response.as_bytes()).unwrap();
            served += 1;
        }
        served
    });
    (url, handle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lookup_secrets_are_fetched_once_and_masked() {
    let (url, server) = secret_server("authorization: bearer lookup-auth", "remote-value-789");
    let s = Setup::new(vec![
        Step::tool_call("terminal", json!({"command": "use $REMOTE_TOKEN"})),
        Step::tool_call("terminal", json!({"command": "again $REMOTE_TOKEN"})),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let mut options = s.options();
    options.secrets = vec![(
        "REMOTE_TOKEN".into(),
        SecretSource::Lookup {
            url,
            headers: [("Authorization".to_owned(), "Bearer lookup-auth".to_owned())].into(),
            description: None,
        },
    )];
    let h = s.start(options).await;
    run_to_stop(&h, "go").await;
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(server.join().unwrap(), 1, "looked up once, then cached");
    let env = s.env_seen.lock().unwrap().clone();
    assert_eq!(
        env,
        [
            ("REMOTE_TOKEN".into(), "remote-value-789".into()),
            ("REMOTE_TOKEN".into(), "remote-value-789".into())
        ]
    );
    for e in h.events() {
        let j = serde_json::to_string(&e).unwrap();
        assert!(
            !j.contains("remote-value-789") && !j.contains("lookup-auth"),
            "{j}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_written_by_the_upstream_server_opens_and_continues() {
    let s = Setup::new(vec![Step::text("Continuing from the upstream history.")]);
    let id = "53b0201b238848c28c0912bd065f719e";
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures/upstream/conversations")
        .join(id);
    copy_dir(&fixture, &s.store.root().join(id));
    let (h, warnings) = Conversation::open(&s.store, id, s.runtime()).await.unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(h.events().len(), 40);
    assert_eq!(h.status(), ExecutionStatus::Finished);
    run_to_stop(&h, "one more thing").await;
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(
        h.events().len(),
        40 + 7,
        "finished→idle, message, last_user_message_id, running, stats, reply, finished"
    );
    // The upstream history reached the model, condensation applied.
    let request = s.server.requests()[0].to_string();
    assert!(
        request.contains("Summary: the user asked for a series of echo commands"),
        "{request}"
    );
    assert!(
        s.server.violations().is_empty(),
        "{:?}",
        s.server.violations()
    );
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}
