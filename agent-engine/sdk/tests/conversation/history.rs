//! Titles, condensation, streamed deltas, and LLM keys kept out of state and disk.

use super::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn titles_come_from_the_llm_and_count_in_the_metrics() {
    let s = Setup::new(vec![Step::text("Hi!")]);
    s.server
        .set_no_tools_text("\"Greeting the user politely.\"");
    let mut options = s.options();
    options.autotitle = true;
    let h = s.start(options).await;
    run_to_stop(
        &h,
        "please greet me and then explain what a monad is in many words",
    )
    .await;
    for _ in 0..200 {
        if h.view().meta.title.as_deref() == Some("Greeting the user politely") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        h.view().meta.title.as_deref(),
        Some("Greeting the user politely")
    );
    assert!(h.state().stats.usage_to_metrics.contains_key("title"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_histories_are_condensed_and_the_log_keeps_everything() {
    let steps: Vec<Step> = (0..12)
        .map(|i| Step::tool_call("terminal", json!({"command": format!("echo {i}")})))
        .chain([Step::text("done")])
        .collect();
    let s = Setup::new(steps);
    s.server
        .set_no_tools_text("Summary: the agent echoed numbers.");
    let mut options = s.options();
    options.agent.condenser =
        Some(json!({"kind": "LLMSummarizingCondenser", "max_size": 12, "keep_first": 2}));
    let h = s.start(options).await;
    run_to_stop(&h, "count").await;
    assert_eq!(h.status(), ExecutionStatus::Finished);
    let events = h.events();
    let condensations: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Condensation(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    assert!(!condensations.is_empty(), "no condensation happened");
    assert_eq!(
        condensations[0].summary.as_deref(),
        Some("Summary: the agent echoed numbers.")
    );
    // The log keeps everything; the LLM saw the summary instead of the forgotten events.
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::Observation(_)))
            .count(),
        12
    );
    let last = s
        .server
        .requests()
        .into_iter()
        .rfind(|r| r.get("tools").is_some())
        .unwrap()
        .to_string();
    assert!(
        last.contains("Summary: the agent echoed numbers."),
        "{last}"
    );
    assert!(
        !last.contains("ran echo 0\""),
        "a forgotten observation was sent"
    );
    assert!(
        s.server.violations().is_empty(),
        "{:?}",
        s.server.violations()
    );
    assert!(h.state().stats.usage_to_metrics.contains_key("condenser"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_explicit_condense_request_on_an_idle_conversation_condenses_now() {
    let steps: Vec<Step> = (0..6)
        .map(|i| Step::tool_call("terminal", json!({"command": format!("echo {i}")})))
        .chain([Step::text("done")])
        .collect();
    let s = Setup::new(steps);
    s.server.set_no_tools_text("Summary on request.");
    let h = s.start(s.options()).await;
    run_to_stop(&h, "count").await;
    h.condense().await.unwrap();
    for _ in 0..200 {
        if h.events()
            .iter()
            .any(|e| matches!(e, Event::Condensation(_)))
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let events = h.events();
    let request = events
        .iter()
        .position(|e| matches!(e, Event::CondensationRequest(_)))
        .unwrap();
    let condensation = events
        .iter()
        .position(|e| matches!(e, Event::Condensation(_)))
        .expect("condensed");
    assert!(condensation > request);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamed_text_reaches_subscribers_as_transient_deltas() {
    let s = Setup::new(vec![Step::text(
        "Streaming this reply in small pieces for the person watching.",
    )]);
    let mut config = LlmConfig::new("openai/scripted");
    config.base_url = Some(s.server.base_url());
    config.num_retries = 0;
    config.stream = true;
    let runtime = Runtime {
        llm: Arc::new(OpenAiChat::new(config).unwrap()),
        ..s.runtime()
    };
    let h = Conversation::create(&s.store, s.options(), runtime)
        .await
        .unwrap();
    let (_, mut rx) = h.subscribe();
    run_to_stop(&h, "talk").await;
    let mut streamed = String::new();
    while let Ok(e) = rx.try_recv() {
        if let Event::StreamingDelta(d) = e {
            streamed.push_str(d.content.as_deref().unwrap_or(""));
        }
    }
    assert_eq!(
        streamed,
        "Streaming this reply in small pieces for the person watching."
    );
    // Deltas are never persisted.
    assert!(
        !h.events()
            .iter()
            .any(|e| matches!(e, Event::StreamingDelta(_)))
    );
    assert_eq!(s.server.requests()[0]["stream"], json!(true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_keys_never_reach_state_disk_or_readers() {
    let s = Setup::new(vec![Step::text("ok")]);
    let mut keyed = LlmConfig::new("openai/scripted");
    keyed.api_key = Some("sk-live-abcdef123456".into());
    let mut options = s.options();
    options.agent = AgentSpec::default_for(keyed);
    let h = s.start(options).await;
    run_to_stop(&h, "hi").await;
    let state = serde_json::to_string(&h.state()).unwrap();
    assert!(!state.contains("sk-live-abcdef123456"), "{state}");
    for file in walk(h.dir()) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(!text.contains("sk-live-abcdef123456"), "{}", file.display());
    }
}
