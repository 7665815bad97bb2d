//! Running a conversation: tool calls, confirmation, interrupt, pause, limits and LLM failures.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_with_two_calls_per_turn_then_finish() {
    let s = Setup::new(vec![
        Step::tool_calls(vec![
            ToolCallSpec::new("terminal", json!({"command": "echo a", "summary": "say a"})),
            ToolCallSpec::new(
                "terminal",
                json!({"command": "echo b", "security_risk": "LOW"}),
            ),
        ]),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let h = s.start(s.options()).await;
    run_to_stop(&h, "say a and b").await;
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(*s.ran.lock().unwrap(), ["echo a", "echo b"]);
    let events = h.events();
    assert_eq!(
        kinds(&events),
        [
            "SystemPromptEvent",
            "MessageEvent",
            "state:last_user_message_id",
            "status:running",
            "state:stats",
            "ActionEvent",
            "ActionEvent",
            "ObservationEvent",
            "ObservationEvent",
            "state:stats",
            "ActionEvent",
            "ObservationEvent",
            "status:finished",
        ]
    );
    // Both calls of one response share its id and one assistant message on the next request.
    let req = &s.server.requests()[1];
    let msgs = req["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "tool", "tool"]);
    assert_eq!(msgs[2]["tool_calls"].as_array().unwrap().len(), 2);
    assert!(
        msgs[3]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("ran echo a")
    );
    // The tools offered carry `summary`, and `security_risk` where the tool asks for it.
    let tools = req["tools"].as_array().unwrap();
    let terminal = &tools[0]["function"]["parameters"]["properties"];
    assert!(terminal.get("security_risk").is_some() && terminal.get("summary").is_some());
    let finish = &tools[1]["function"]["parameters"]["properties"];
    assert!(finish.get("security_risk").is_none() && finish.get("summary").is_some());
    assert!(
        s.server.violations().is_empty(),
        "{:?}",
        s.server.violations()
    );
    // Summaries and risks are recorded on the actions.
    let Event::Action(a) = &events[5] else {
        panic!()
    };
    assert_eq!(a.summary.as_deref(), Some("say a"));
    let Event::Action(b) = &events[6] else {
        panic!()
    };
    assert_eq!(b.security_risk, SecurityRisk::Low);
    assert_eq!(a.llm_response_id, b.llm_response_id);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_reply_finishes_and_is_persisted_before_it_is_seen() {
    let s = Setup::new(vec![Step::text("Hello there.")]);
    let h = s.start(s.options()).await;
    let (_, mut rx) = h.subscribe();
    run_to_stop(&h, "hi").await;
    assert_eq!(h.status(), ExecutionStatus::Finished);
    // Every event a subscriber saw is already on disk.
    let dir = h.dir().join("events");
    let on_disk = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("event-")
        })
        .count();
    let mut seen = 0;
    while let Ok(ev) = rx.try_recv() {
        if !ev.is_transient() {
            seen += 1;
        }
    }
    assert_eq!(seen, on_disk);
    let Some(Event::Message(m)) = h
        .events()
        .into_iter()
        .rev()
        .find(|e| matches!(e, Event::Message(_)))
    else {
        panic!()
    };
    assert_eq!(m.llm_message.text(), "Hello there.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_tool_calls_become_errors_the_model_sees() {
    let s = Setup::new(vec![
        Step::tool_calls(vec![
            ToolCallSpec::new("nonexistent_tool", json!({"x": 1})),
            ToolCallSpec {
                arguments: json!("{\"command\": "),
                ..ToolCallSpec::new("terminal", json!({}))
            },
            ToolCallSpec::new("terminal", json!({"cmd": "ls"})),
        ]),
        Step::tool_call("finish", json!({"message": "ok"})),
    ]);
    let h = s.start(s.options()).await;
    run_to_stop(&h, "go").await;
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert!(s.ran.lock().unwrap().is_empty());
    let errors: Vec<String> = h
        .events()
        .iter()
        .filter_map(|e| match e {
            Event::AgentError(e) => Some(e.error.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(
        errors[0]
            .starts_with("Tool 'nonexistent_tool' not found. Available: ['terminal', 'finish']"),
        "{}",
        errors[0]
    );
    assert!(errors[1].contains("unparseable JSON"), "{}", errors[1]);
    assert!(
        errors[2].contains("missing required argument `command`"),
        "{}",
        errors[2]
    );
    // The model saw each error as the result of its call.
    let msgs = s.server.requests()[1]["messages"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(msgs.iter().filter(|m| m["role"] == "tool").count(), 3);
    assert!(
        s.server.violations().is_empty(),
        "{:?}",
        s.server.violations()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_confirm_holds_actions_and_reject_never_runs_them() {
    let s = Setup::new(vec![
        Step::tool_call("terminal", json!({"command": "rm -rf build"})),
        Step::tool_call("terminal", json!({"command": "ls"})),
        Step::tool_call("finish", json!({"message": "ok"})),
    ]);
    let mut options = s.options();
    options.confirmation_policy = ConfirmationPolicy::AlwaysConfirm;
    let h = s.start(options).await;
    run_to_stop(&h, "clean").await;
    assert_eq!(h.status(), ExecutionStatus::WaitingForConfirmation);
    assert!(
        s.ran.lock().unwrap().is_empty(),
        "nothing runs before approval"
    );

    h.respond_to_confirmation(false, Some("not that".into()))
        .await
        .unwrap();
    assert_eq!(h.status(), ExecutionStatus::Idle);
    assert!(
        s.ran.lock().unwrap().is_empty(),
        "a rejected action never runs"
    );
    let Some(Event::UserReject(r)) = h
        .events()
        .into_iter()
        .find(|e| matches!(e, Event::UserReject(_)))
    else {
        panic!()
    };
    assert_eq!(r.rejection_reason, "not that");

    // Running again: the model reads the rejection, proposes `ls`, which waits; approve it.
    h.run().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(h.status(), ExecutionStatus::WaitingForConfirmation);
    let second = s.server.requests()[1]["messages"].to_string();
    assert!(
        second.contains("Action rejected by the user: not that"),
        "{second}"
    );
    h.run().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    // `finish` is never held for confirmation.
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(*s.ran.lock().unwrap(), ["ls"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn confirm_risky_asks_only_at_the_threshold() {
    let s = Setup::new(vec![
        Step::tool_call("terminal", json!({"command": "ls", "security_risk": "LOW"})),
        Step::tool_call(
            "terminal",
            json!({"command": "make deploy", "security_risk": "HIGH"}),
        ),
    ]);
    let mut options = s.options();
    options.confirmation_policy = ConfirmationPolicy::ConfirmRisky {
        threshold: SecurityRisk::High,
        confirm_unknown: false,
    };
    let h = s.start(options).await;
    run_to_stop(&h, "deploy").await;
    assert_eq!(h.status(), ExecutionStatus::WaitingForConfirmation);
    assert_eq!(*s.ran.lock().unwrap(), ["ls"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_cancels_the_tool_and_pauses() {
    let s = Setup::with_delay(
        vec![Step::tool_call("terminal", json!({"command": "sleep 100"}))],
        Duration::from_secs(100),
    );
    let h = s.start(s.options()).await;
    h.send_message(Message::user("wait"), true).await.unwrap();
    // Wait until the tool is running.
    for _ in 0..200 {
        if !s.ran.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(*s.ran.lock().unwrap(), ["sleep 100"]);
    h.interrupt().await.unwrap();
    tokio::time::timeout(Duration::from_secs(10), h.wait_until_stopped())
        .await
        .expect("interrupt did not stop the run");
    assert_eq!(h.status(), ExecutionStatus::Paused);
    let events = h.events();
    assert!(events.iter().any(|e| matches!(e, Event::Interrupt(_))));
    let obs = events.iter().find_map(|e| match e {
        Event::Observation(o) => Some(o.observation.content()[0].as_text().unwrap().to_owned()),
        _ => None,
    });
    assert_eq!(obs.as_deref(), Some("ran sleep 100 (interrupted)"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_during_the_llm_call_records_no_reply() {
    let mut slow = tandem_testkit::Reply::text("too late");
    slow.delay_ms = 5_000;
    let s = Setup::new(vec![Step::Reply(slow)]);
    let h = s.start(s.options()).await;
    h.send_message(Message::user("hi"), true).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    h.interrupt().await.unwrap();
    tokio::time::timeout(Duration::from_secs(3), h.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(h.status(), ExecutionStatus::Paused);
    assert!(
        !h.events()
            .iter()
            .any(|e| matches!(e, Event::Message(m) if m.llm_message.text() == "too late"))
    );
    assert_eq!(
        h.run().await.err().map(|e| e.to_string()),
        None,
        "a paused conversation runs again"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_lets_the_step_finish_then_stops() {
    let s = Setup::with_delay(
        vec![
            Step::tool_call("terminal", json!({"command": "build"})),
            Step::tool_call("finish", json!({"message": "x"})),
        ],
        Duration::from_millis(500),
    );
    let h = s.start(s.options()).await;
    h.send_message(Message::user("build"), true).await.unwrap();
    for _ in 0..200 {
        if !s.ran.lock().unwrap().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    h.pause().await.unwrap();
    assert!(
        matches!(h.run().await, Err(tandem_sdk::SdkError::AlreadyRunning)),
        "run while the loop is alive is refused"
    );
    tokio::time::timeout(Duration::from_secs(10), h.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(h.status(), ExecutionStatus::Paused);
    let obs = h
        .events()
        .iter()
        .filter(|e| matches!(e, Event::Observation(_)))
        .count();
    assert_eq!(obs, 1, "the in-flight tool finished");
    assert_eq!(
        s.server.request_count(),
        1,
        "no further LLM call after the pause"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_iterations_and_stuck_detection_stop_the_run() {
    let same = || Step::tool_call("terminal", json!({"command": "ls"}));
    let s = Setup::new(vec![same(), same(), same(), same(), same()]);
    let h = s.start(s.options()).await;
    run_to_stop(&h, "loop").await;
    assert_eq!(h.status(), ExecutionStatus::Stuck);
    assert_eq!(s.ran.lock().unwrap().len(), 4);

    let s = Setup::new(vec![
        Step::tool_call("terminal", json!({"command": "echo 1"})),
        Step::tool_call("terminal", json!({"command": "echo 2"})),
    ]);
    let mut options = s.options();
    options.max_iterations = 2;
    let h = s.start(options).await;
    run_to_stop(&h, "count").await;
    assert_eq!(h.status(), ExecutionStatus::Error);
    let Some(Event::ConversationError(e)) = h
        .events()
        .into_iter()
        .rev()
        .find(|e| matches!(e, Event::ConversationError(_)))
    else {
        panic!()
    };
    assert_eq!(e.code, "MaxIterationsReached");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_failures_end_in_a_conversation_error() {
    let s = Setup::new(vec![Step::error(401, "invalid api key")]);
    let h = s.start(s.options()).await;
    run_to_stop(&h, "hi").await;
    assert_eq!(h.status(), ExecutionStatus::Error);
    let Some(Event::ConversationError(e)) = h
        .events()
        .into_iter()
        .find(|e| matches!(e, Event::ConversationError(_)))
    else {
        panic!()
    };
    assert_eq!(e.code, "LLMAuthenticationError");
    assert!(e.detail.contains("invalid api key"), "{}", e.detail);
}

/// A runtime whose LLM retries up to 5 times, waiting `wait` seconds between tries.
fn retrying_runtime(s: &Setup, wait: f64) -> Runtime {
    let mut config = LlmConfig::new("openai/scripted");
    config.base_url = Some(s.server.base_url());
    config.api_key = Some("sk-test".into());
    config.num_retries = 5;
    config.retry_min_wait = wait;
    config.retry_max_wait = wait;
    Runtime {
        llm: Arc::new(OpenAiChat::new(config).unwrap()),
        tools: vec![s.tool.clone(), Arc::new(FinishTool::new())],
        checkpoints: None,
        run_gate: None,
    }
}

fn retry_updates(events: &[Event]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::StateUpdate(u) if u.key == tandem_sdk::LLM_RETRY_KEY => Some(u.value.clone()),
            _ => None,
        })
        .collect()
}

/// Waits (with a deadline that only guards against a hang) until the run records a retry.
async fn until_retry_recorded(h: &ConversationHandle) {
    tokio::time::timeout(Duration::from_secs(30), async {
        while retry_updates(&h.events()).is_empty() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("no retry was recorded");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transient_llm_error_is_retried_and_the_retry_is_an_event() {
    let s = Setup::new(vec![Step::error(503, "overloaded"), Step::text("done")]);
    let h = Conversation::create(&s.store, s.options(), retrying_runtime(&s, 0.0))
        .await
        .unwrap();
    run_to_stop(&h, "hi").await;
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(s.server.request_count(), 2);
    let retries = retry_updates(&h.events());
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert_eq!(retries[0]["code"], "LLMServiceUnavailableError");
    assert_eq!(retries[0]["retry"], 1);
    assert_eq!(retries[0]["max_retries"], 5);
    assert_eq!(retries[0]["model"], "openai/scripted");
    assert!(
        retries[0]["message"]
            .as_str()
            .unwrap()
            .contains("overloaded"),
        "{retries:?}"
    );
    // Recorded like every event: it survives a reload.
    let on_disk = tandem_sdk::EventLog::read(&h.dir().join("events")).unwrap();
    assert_eq!(retry_updates(&on_disk.events).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permanent_llm_errors_are_not_retried() {
    for (status, code) in [
        (401, "LLMAuthenticationError"),
        (404, "LLMBadRequestError"),
        (400, "LLMBadRequestError"),
    ] {
        let s = Setup::new(vec![Step::error(status, "refused"), Step::text("never")]);
        let h = Conversation::create(&s.store, s.options(), retrying_runtime(&s, 600.0))
            .await
            .unwrap();
        run_to_stop(&h, "hi").await;
        assert_eq!(h.status(), ExecutionStatus::Error, "{status}");
        assert_eq!(s.server.request_count(), 1, "{status}");
        let events = h.events();
        assert!(retry_updates(&events).is_empty(), "{status}");
        let Some(Event::ConversationError(e)) = events
            .iter()
            .find(|e| matches!(e, Event::ConversationError(_)))
        else {
            panic!("{status}: no error")
        };
        assert_eq!(e.code, code);
        assert!(e.detail.contains("check"), "{status}: {}", e.detail);
        assert_eq!(e.classification.as_ref().map(|c| c.retryable), Some(false));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_during_a_retry_wait_stops_the_run_at_once() {
    let s = Setup::new(vec![Step::error(503, "down"), Step::text("never")]);
    let h = Conversation::create(&s.store, s.options(), retrying_runtime(&s, 600.0))
        .await
        .unwrap();
    h.send_message(Message::user("hi"), true).await.unwrap();
    until_retry_recorded(&h).await;
    h.interrupt().await.unwrap();
    // The wait is ten minutes; the run stops long before.
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .expect("the retry wait was not cancelled");
    assert_eq!(h.status(), ExecutionStatus::Paused);
    assert_eq!(s.server.request_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pause_during_a_retry_wait_stops_the_run_at_once() {
    let s = Setup::new(vec![
        Step::error(429, "slow down"),
        Step::text("after the pause"),
    ]);
    let h = Conversation::create(&s.store, s.options(), retrying_runtime(&s, 600.0))
        .await
        .unwrap();
    h.send_message(Message::user("hi"), true).await.unwrap();
    until_retry_recorded(&h).await;
    h.pause().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .expect("the retry wait was not cancelled");
    assert_eq!(h.status(), ExecutionStatus::Paused);
    assert_eq!(s.server.request_count(), 1);
    // Running again starts the step afresh.
    h.run().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .expect("run did not stop");
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(s.server.request_count(), 2);
}
