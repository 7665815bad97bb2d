//! Agent-loop tests: a conversation driven by the scripted LLM server through the real
//! OpenAI client, with small recording tools, asserting the events produced, the requests
//! sent, and that nothing runs before approval.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tandem_llm::{Llm, OpenAiChat};
use tandem_protocol::{
    Action, AgentSpec, ConfirmationPolicy, Content, Event, ExecutionStatus, FinishAction,
    FinishObservation, LlmConfig, Message, Observation, SecurityRisk, TerminalAction,
    TerminalObservation,
};
use tandem_sdk::{
    Conversation, ConversationHandle, ConversationOptions, ConversationStore, Runtime, SdkError,
    SecretSource, Tool, ToolAnnotations, ToolContext, ToolDefinition,
};
use tandem_testkit::{ScriptedLlmServer, Step, ToolCallSpec};

/// A `terminal` stand-in that records what it ran (and the env it got) instead of running it;
/// with `shell`, it also runs it with `sh -c` in the workspace, for effects on disk.
struct RecordingTool {
    def: ToolDefinition,
    ran: Arc<Mutex<Vec<String>>>,
    env_seen: Arc<Mutex<Vec<(String, String)>>>,
    delay: Duration,
    shell: bool,
}

impl RecordingTool {
    fn new(delay: Duration) -> Self {
        Self {
            def: ToolDefinition {
                name: "terminal".into(),
                description: "Runs a command.".into(),
                parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}),
                asks_security_risk: true,
                annotations: ToolAnnotations::default(),
                action_type: "TerminalAction".into(),
                observation_type: "TerminalObservation".into(),
            },
            ran: Arc::default(),
            env_seen: Arc::default(),
            delay,
            shell: false,
        }
    }
}

impl Tool for RecordingTool {
    fn definition(&self) -> &ToolDefinition {
        &self.def
    }

    fn parse_action(&self, arguments: Value) -> Result<Action, String> {
        let command = arguments
            .get("command")
            .and_then(Value::as_str)
            .ok_or("missing `command` (a string)")?;
        Ok(Action::Terminal(TerminalAction {
            command: command.into(),
            ..Default::default()
        }))
    }

    fn execute<'a>(&'a self, action: &'a Action, ctx: ToolContext) -> BoxFuture<'a, Observation> {
        Box::pin(async move {
            let Action::Terminal(t) = action else {
                unreachable!()
            };
            self.ran.lock().unwrap().push(t.command.clone());
            if self.shell {
                let status = std::process::Command::new("sh")
                    .arg("-c")
                    .arg(&t.command)
                    .current_dir(&ctx.working_dir)
                    .status()
                    .unwrap();
                assert!(status.success(), "{}", t.command);
            }
            let mut env: Vec<_> = ctx
                .env
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            env.sort();
            self.env_seen.lock().unwrap().extend(env.clone());
            let interrupted = tokio::select! {
                _ = tokio::time::sleep(self.delay) => false,
                _ = ctx.cancel.cancelled() => true,
            };
            // Echo the env values back, as a careless command would: they must come out masked.
            let mut text = format!("ran {}", t.command);
            for (_, v) in &env {
                text.push_str(&format!(" {v}"));
            }
            if interrupted {
                text.push_str(" (interrupted)");
            }
            Observation::Terminal(TerminalObservation {
                content: vec![Content::text(text)],
                command: Some(t.command.clone()),
                exit_code: Some(if interrupted { 130 } else { 0 }),
                ..Default::default()
            })
        })
    }
}

struct FinishTool(ToolDefinition);

impl FinishTool {
    fn new() -> Self {
        Self(ToolDefinition {
            name: "finish".into(),
            description: "Finish.".into(),
            parameters: json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
            asks_security_risk: false,
            annotations: ToolAnnotations {
                read_only: true,
                ..Default::default()
            },
            action_type: "FinishAction".into(),
            observation_type: "FinishObservation".into(),
        })
    }
}

impl Tool for FinishTool {
    fn definition(&self) -> &ToolDefinition {
        &self.0
    }
    fn parse_action(&self, arguments: Value) -> Result<Action, String> {
        let message = arguments
            .get("message")
            .and_then(Value::as_str)
            .ok_or("missing `message`")?;
        Ok(Action::Finish(FinishAction {
            message: message.into(),
            ..Default::default()
        }))
    }
    fn execute<'a>(&'a self, action: &'a Action, _ctx: ToolContext) -> BoxFuture<'a, Observation> {
        Box::pin(async move {
            let Action::Finish(f) = action else {
                unreachable!()
            };
            Observation::Finish(FinishObservation {
                content: vec![Content::text(&f.message)],
                ..Default::default()
            })
        })
    }
}

struct Setup {
    server: ScriptedLlmServer,
    store: ConversationStore,
    _home: tempfile::TempDir,
    workspace: tempfile::TempDir,
    tool: Arc<RecordingTool>,
    ran: Arc<Mutex<Vec<String>>>,
    env_seen: Arc<Mutex<Vec<(String, String)>>>,
}

fn llm(server: &ScriptedLlmServer) -> Arc<dyn Llm> {
    let mut config = LlmConfig::new("openai/scripted");
    config.base_url = Some(server.base_url());
    config.api_key = Some("sk-test".into());
    config.num_retries = 0;
    Arc::new(OpenAiChat::new(config).unwrap())
}

impl Setup {
    fn new(steps: Vec<Step>) -> Self {
        Self::with_delay(steps, Duration::ZERO)
    }

    fn with_delay(steps: Vec<Step>, delay: Duration) -> Self {
        Self::build(steps, RecordingTool::new(delay))
    }

    /// The terminal stand-in really runs commands (`sh -c`, in the workspace).
    fn with_shell(steps: Vec<Step>) -> Self {
        let mut tool = RecordingTool::new(Duration::ZERO);
        tool.shell = true;
        Self::build(steps, tool)
    }

    fn build(steps: Vec<Step>, tool: RecordingTool) -> Self {
        let server = ScriptedLlmServer::start(steps);
        let home = tempfile::tempdir().unwrap();
        let store = ConversationStore::new(home.path().join("conversations"));
        let ran = tool.ran.clone();
        let env_seen = tool.env_seen.clone();
        Self {
            server,
            store,
            _home: home,
            workspace: tempfile::tempdir().unwrap(),
            tool: Arc::new(tool),
            ran,
            env_seen,
        }
    }

    fn runtime(&self) -> Runtime {
        Runtime {
            llm: llm(&self.server),
            tools: vec![self.tool.clone(), Arc::new(FinishTool::new())],
        }
    }

    fn options(&self) -> ConversationOptions {
        let mut agent = AgentSpec::default_for(LlmConfig::new("openai/scripted"));
        agent.tools.clear();
        let mut options = ConversationOptions::new(agent, self.workspace.path().to_path_buf());
        // Scripts here answer the agent only; the title call has its own test.
        options.autotitle = false;
        options
    }

    async fn start(&self, options: ConversationOptions) -> ConversationHandle {
        Conversation::create(&self.store, options, self.runtime())
            .await
            .unwrap()
    }
}

async fn run_to_stop(handle: &ConversationHandle, text: &str) {
    handle
        .send_message(Message::user(text), true)
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), handle.wait_until_stopped())
        .await
        .expect("run did not stop");
}

fn kinds(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .map(|e| match e {
            Event::StateUpdate(u) if u.key == "execution_status" => {
                format!("status:{}", u.value.as_str().unwrap())
            }
            Event::StateUpdate(u) => format!("state:{}", u.key),
            other => other.kind().to_owned(),
        })
        .collect()
}

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
    assert!(errors[2].contains("missing `command`"), "{}", errors[2]);
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

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_budget_stops_the_run() {
    let s = Setup::new(vec![
        Step::tool_call("terminal", json!({"command": "echo 1"})),
        Step::tool_call("terminal", json!({"command": "echo 2"})),
    ]);
    let mut config = LlmConfig::new("openai/scripted");
    config.base_url = Some(s.server.base_url());
    config.num_retries = 0;
    config.input_cost_per_token = Some(0.001);
    config.output_cost_per_token = Some(0.001);
    let runtime = Runtime {
        llm: Arc::new(OpenAiChat::new(config).unwrap()),
        ..s.runtime()
    };
    let mut options = s.options();
    options.max_budget_per_task = Some(0.01);
    let h = Conversation::create(&s.store, options, runtime)
        .await
        .unwrap();
    run_to_stop(&h, "spend").await;
    assert_eq!(h.status(), ExecutionStatus::Error);
    let Some(Event::ConversationError(e)) = h
        .events()
        .into_iter()
        .rev()
        .find(|e| matches!(e, Event::ConversationError(_)))
    else {
        panic!()
    };
    assert_eq!(e.code, "BudgetExceeded");
    assert!(
        s.ran.lock().unwrap().is_empty(),
        "nothing runs once the budget is spent"
    );
    assert!(h.state().stats.total_cost() > 0.01);
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

/// The pending actions' ids, in order: actions with no observation, rejection or error yet.
fn pending_ids(events: &[Event]) -> Vec<String> {
    let answered: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Observation(o) => Some(o.action_id.clone()),
            Event::UserReject(r) => Some(r.action_id.clone()),
            Event::AgentError(a) => Some(a.tool_call_id.clone()),
            _ => None,
        })
        .collect();
    events
        .iter()
        .filter_map(|e| match e {
            Event::Action(a)
                if !answered.contains(&a.base.id) && !answered.contains(&a.tool_call_id) =>
            {
                Some(a.base.id.clone())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_and_approve_runs_the_edited_action_in_place_of_the_original() {
    let s = Setup::with_shell(vec![
        Step::tool_call(
            "terminal",
            json!({"command": "touch original.txt", "security_risk": "LOW"}),
        ),
        Step::tool_call("finish", json!({"message": "ok"})),
    ]);
    let mut options = s.options();
    options.confirmation_policy = ConfirmationPolicy::AlwaysConfirm;
    let h = s.start(options).await;
    run_to_stop(&h, "make a file").await;
    assert_eq!(h.status(), ExecutionStatus::WaitingForConfirmation);
    let pending = pending_ids(&h.events());
    assert_eq!(pending.len(), 1);
    let id = &pending[0];

    // Arguments the tool rejects: the error names the field, and nothing runs or changes.
    let bad = h.approve_edited(id, json!({"command": 5})).await;
    let Err(SdkError::InvalidArguments(message)) = bad else {
        panic!("{bad:?}")
    };
    assert!(message.contains("`command`"), "{message}");
    let bad = h.approve_edited(id, json!(["touch edited.txt"])).await;
    assert!(
        matches!(&bad, Err(SdkError::InvalidArguments(m)) if m.contains("JSON object")),
        "{bad:?}"
    );
    assert_eq!(h.status(), ExecutionStatus::WaitingForConfirmation);
    assert_eq!(pending_ids(&h.events()), pending);
    // An id that does not wait.
    let unknown = h
        .approve_edited("no-such-action", json!({"command": "true"}))
        .await;
    assert!(
        matches!(unknown, Err(SdkError::NotPending(_))),
        "{unknown:?}"
    );
    assert!(s.ran.lock().unwrap().is_empty());

    let risk = h
        .approve_edited(id, json!({"command": "touch edited.txt"}))
        .await
        .unwrap();
    // Re-rated by the rule analyzer (it writes a file); the model's LOW was about the original.
    assert_eq!(risk, SecurityRisk::Medium);
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(*s.ran.lock().unwrap(), ["touch edited.txt"]);
    assert!(s.workspace.path().join("edited.txt").exists());
    assert!(
        !s.workspace.path().join("original.txt").exists(),
        "the original command never ran"
    );

    // The observation answers the original action, with the note in front of the output.
    let events = h.events();
    let Some(Event::Action(original)) = events
        .iter()
        .find(|e| matches!(e, Event::Action(a) if &a.base.id == id))
    else {
        panic!()
    };
    let observation = events
        .iter()
        .find_map(|e| match e {
            Event::Observation(o) if o.tool_name == "terminal" => Some(o),
            _ => None,
        })
        .unwrap();
    assert_eq!(&observation.action_id, id);
    assert_eq!(observation.tool_call_id, original.tool_call_id);
    let content = observation.observation.content();
    let text = content[0].as_text().unwrap();
    assert!(
        text.starts_with(
            "[The person edited this action before it ran; it ran as: $ touch edited.txt]\nran touch edited.txt"
        ),
        "{text}"
    );
    // The action event still holds what the model asked for; only its result says otherwise.
    assert_eq!(
        original.tool_call.arguments,
        json!({"command": "touch original.txt", "security_risk": "LOW"}).to_string()
    );

    // The model's next request carries that result as the answer to its call.
    let requests = s.server.requests();
    assert_eq!(requests.len(), 2);
    let tool_message = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert_eq!(tool_message["tool_call_id"], original.tool_call_id.as_str());
    assert!(
        tool_message["content"]
            .to_string()
            .contains("it ran as: $ touch edited.txt"),
        "{tool_message}"
    );
    assert!(
        s.server.violations().is_empty(),
        "{:?}",
        s.server.violations()
    );
    // Once run, it is not pending any more.
    let again = h.approve_edited(id, json!({"command": "true"})).await;
    assert!(matches!(again, Err(SdkError::NotPending(_))), "{again:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_one_of_several_pending_actions_leaves_the_others_waiting() {
    let s = Setup::with_shell(vec![
        Step::tool_calls(vec![
            ToolCallSpec::new("terminal", json!({"command": "touch first.txt"})),
            ToolCallSpec::new("terminal", json!({"command": "touch second.txt"})),
        ]),
        Step::tool_call("finish", json!({"message": "ok"})),
    ]);
    let mut options = s.options();
    options.confirmation_policy = ConfirmationPolicy::AlwaysConfirm;
    let h = s.start(options).await;
    run_to_stop(&h, "two files").await;
    let pending = pending_ids(&h.events());
    assert_eq!(pending.len(), 2);

    h.approve_edited(&pending[1], json!({"command": "touch second-edited.txt"}))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    // Only the edited one ran; the first still waits, and the model was not asked yet.
    assert_eq!(h.status(), ExecutionStatus::WaitingForConfirmation);
    assert_eq!(*s.ran.lock().unwrap(), ["touch second-edited.txt"]);
    assert_eq!(pending_ids(&h.events()), [pending[0].clone()]);
    assert_eq!(s.server.requests().len(), 1);

    // The first keeps its own approval: approving it runs it, then the loop goes on.
    h.respond_to_confirmation(true, None).await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(
        *s.ran.lock().unwrap(),
        ["touch second-edited.txt", "touch first.txt"]
    );
    assert!(!s.workspace.path().join("second.txt").exists());
    assert!(
        s.server.violations().is_empty(),
        "{:?}",
        s.server.violations()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_command_gets_its_secrets_and_they_are_masked_in_its_result() {
    let s = Setup::new(vec![
        Step::tool_call("terminal", json!({"command": "deploy"})),
        Step::tool_call("finish", json!({"message": "done"})),
    ]);
    let mut options = s.options();
    options.confirmation_policy = ConfirmationPolicy::AlwaysConfirm;
    options.secrets = vec![(
        "DEPLOY_TOKEN".into(),
        SecretSource::Static {
            value: "tok-789-secret".into(),
            description: None,
        },
    )];
    let h = s.start(options).await;
    run_to_stop(&h, "deploy").await;
    let id = pending_ids(&h.events()).remove(0);
    // The person's command names the secret (the agent's did not) and spells its value out.
    h.approve_edited(
        &id,
        json!({"command": "deploy --token $DEPLOY_TOKEN --check tok-789-secret"}),
    )
    .await
    .unwrap();
    tokio::time::timeout(Duration::from_secs(30), h.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(
        *s.env_seen.lock().unwrap(),
        [("DEPLOY_TOKEN".to_owned(), "tok-789-secret".to_owned())]
    );
    let events = h.events();
    let observation = events
        .iter()
        .find_map(|e| match e {
            Event::Observation(o) if o.action_id == id => Some(o),
            _ => None,
        })
        .unwrap();
    let text = observation.observation.content()[0]
        .as_text()
        .unwrap()
        .to_owned();
    assert!(
        text.starts_with("[The person edited this action before it ran; it ran as: $ deploy --token $DEPLOY_TOKEN --check "),
        "{text}"
    );
    for e in &events {
        let j = serde_json::to_string(e).unwrap();
        assert!(!j.contains("tok-789-secret"), "{j}");
    }
    let all_requests = serde_json::to_string(&s.server.requests()).unwrap();
    assert!(!all_requests.contains("tok-789-secret"));
    assert!(all_requests.contains("it ran as: $ deploy --token $DEPLOY_TOKEN"));
}

/// The Responses reasoning items sent back in a request's `input`, as `(position, id,
/// encrypted_content)`.
fn reasoning_items(request: &Value) -> Vec<(usize, String, String)> {
    request["input"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|(_, item)| item["type"] == "reasoning")
        .map(|(i, item)| {
            (
                i,
                item["id"].as_str().unwrap().to_owned(),
                item["encrypted_content"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_reasoning_items_go_back_on_later_turns_and_survive_a_reopen() {
    use tandem_testkit::Reply;
    let reasoned = |summary: &str, encrypted: &str, reply: Reply| {
        Step::Reply(Reply {
            reasoning: Some(summary.into()),
            encrypted_reasoning: Some(encrypted.into()),
            ..reply
        })
    };
    // Turn 1: reasoning, then two calls in one response; then a text reply with its own
    // reasoning; later turns are plain text.
    let s = Setup::new(vec![
        reasoned(
            "List, then print.",
            "ENC-one",
            Reply::tool_calls(vec![
                ToolCallSpec::new("terminal", json!({"command": "ls"})),
                ToolCallSpec::new("terminal", json!({"command": "pwd"})),
            ]),
        ),
        reasoned("Report.", "ENC-two", Reply::text("All done.")),
        Step::text("Still here."),
        Step::text("After the reopen."),
    ]);
    // A reasoning model whose configuration sets no reasoning effort.
    let runtime = || {
        let mut config = LlmConfig::new("openai/gpt-5");
        config.base_url = Some(s.server.base_url());
        config.api_key = Some("sk-test".into());
        config.num_retries = 0;
        assert_eq!(config.reasoning_effort, None);
        Runtime {
            llm: Arc::new(tandem_llm::OpenAiResponses::new(config).unwrap()),
            tools: vec![s.tool.clone(), Arc::new(FinishTool::new())],
        }
    };
    let h = Conversation::create(&s.store, s.options(), runtime())
        .await
        .unwrap();
    run_to_stop(&h, "where am I?").await;
    assert_eq!(h.status(), ExecutionStatus::Finished);
    assert_eq!(*s.ran.lock().unwrap(), ["ls", "pwd"]);

    // The first action of the response carries its reasoning item (as upstream records it);
    // the agent's text reply carries its own.
    let events = h.events();
    let actions: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Action(a) => Some(a),
            _ => None,
        })
        .collect();
    assert_eq!(actions.len(), 2);
    let first_item = actions[0].responses_reasoning_item.clone().unwrap();
    assert_eq!(first_item["id"], "rs_scripted_0000");
    assert_eq!(first_item["encrypted_content"], "ENC-one");
    assert_eq!(first_item["summary"], json!(["List, then print."]));
    assert_eq!(actions[1].responses_reasoning_item, None);
    let reply = events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::Message(m) if m.llm_message.role == tandem_protocol::Role::Assistant => Some(m),
            _ => None,
        })
        .unwrap();
    let reply_item = reply.llm_message.responses_reasoning_item.clone().unwrap();
    assert_eq!(reply_item["encrypted_content"], "ENC-two");

    // Turn 2's request: the item, with its encrypted content, right before the calls it led to.
    let requests = s.server.requests();
    for request in &requests {
        assert_eq!(request["reasoning"], json!({"effort": "high"}));
        assert_eq!(request["include"], json!(["reasoning.encrypted_content"]));
        assert_eq!(request["store"], false);
    }
    let second = &requests[1];
    assert_eq!(
        reasoning_items(second),
        [(1, "rs_scripted_0000".into(), "ENC-one".into())]
    );
    let input = second["input"].as_array().unwrap();
    let kinds: Vec<&str> = input.iter().map(|i| i["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "message",
            "reasoning",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output"
        ]
    );
    assert_eq!(input[2]["id"], "fc_scripted_0000_0");
    assert_eq!(input[3]["id"], "fc_scripted_0000_1");

    // The next user turn sends both items back: one before the calls, one before the text.
    run_to_stop(&h, "and now?").await;
    let third = &s.server.requests()[2];
    let items = reasoning_items(third);
    assert_eq!(
        items
            .iter()
            .map(|(_, id, enc)| (id.as_str(), enc.as_str()))
            .collect::<Vec<_>>(),
        [
            ("rs_scripted_0000", "ENC-one"),
            ("rs_scripted_0001", "ENC-two")
        ]
    );
    let after = &third["input"][items[1].0 + 1];
    assert_eq!(after["role"], "assistant");
    assert_eq!(after["content"][0]["text"], "All done.");

    // Persisted: the items are in the event files, and a reopened conversation sends them back.
    let dir = h.dir().to_path_buf();
    let id = h.id().to_owned();
    h.close().await.unwrap();
    let on_disk: String = walk(&dir)
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(on_disk.contains("ENC-one") && on_disk.contains("ENC-two"));
    let mut attempt = 0;
    let h = loop {
        match Conversation::open(&s.store, &id, runtime()).await {
            Ok((h, _)) => break h,
            // The closed actor releases the log's lock just after answering `close`.
            Err(e) if attempt < 100 => {
                attempt += 1;
                let _ = e;
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => panic!("{e}"),
        }
    };
    run_to_stop(&h, "once more").await;
    let fourth = &s.server.requests()[3];
    assert_eq!(
        reasoning_items(fourth)
            .iter()
            .map(|(_, id, enc)| (id.as_str(), enc.as_str()))
            .collect::<Vec<_>>(),
        [
            ("rs_scripted_0000", "ENC-one"),
            ("rs_scripted_0001", "ENC-two")
        ]
    );
    assert!(
        s.server.violations().is_empty(),
        "{:?}",
        s.server.violations()
    );
}
