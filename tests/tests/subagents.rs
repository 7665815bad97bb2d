//! Sub-agents (`task_tool_set`) end to end in the engine: a parent driven by the scripted LLM
//! server asks for tasks; each runs as a child conversation in the same store (LocalSubAgents,
//! as `tandem run` uses), on the same LLM; the children's answers reach the parent's next
//! request.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tandem_llm::{Llm, OpenAiChat};
use tandem_protocol::{AgentSpec, Event, LlmConfig, Message, Observation, ToolSpec};
use tandem_sdk::subagent::{LocalSubAgents, SubAgents, ToolMaker};
use tandem_sdk::{
    Conversation, ConversationHandle, ConversationOptions, ConversationStore, FnTool, Runtime,
    Tool, ToolEnv,
};
use tandem_testkit::{Responder, ScriptedLlmServer, Step, ToolCallSpec};
use tokio::sync::watch;

/// Guards against hangs only; nothing here measures speed.
const HANG: Duration = Duration::from_secs(60);

/// The text of a chat message (string or parts).
fn text_of(message: &Value) -> String {
    match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn messages(request: &Value) -> Vec<Value> {
    request["messages"].as_array().cloned().unwrap_or_default()
}

fn role_texts(request: &Value, role: &str) -> Vec<String> {
    messages(request)
        .iter()
        .filter(|m| m["role"] == role)
        .map(text_of)
        .collect()
}

fn is_parent(request: &Value) -> bool {
    request["tools"]
        .as_array()
        .is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "task"))
}

fn task(arguments: Value) -> ToolCallSpec {
    ToolCallSpec::new("task", arguments)
}

/// A parent conversation with the task tool, children made by [`LocalSubAgents`] with
/// `child_tools`.
struct Fixture {
    server: ScriptedLlmServer,
    store: ConversationStore,
    _home: tempfile::TempDir,
    workspace: tempfile::TempDir,
    llm: Arc<dyn Llm>,
    child_tools: Vec<Arc<dyn Tool>>,
}

impl Fixture {
    fn new(responder: Responder, child_tools: Vec<Arc<dyn Tool>>) -> Self {
        let server = ScriptedLlmServer::with_responder(responder);
        let home = tempfile::tempdir().unwrap();
        let mut config = LlmConfig::new("openai/scripted");
        config.base_url = Some(server.base_url());
        config.api_key = Some("sk-test".into());
        config.num_retries = 0;
        let llm: Arc<dyn Llm> = Arc::new(OpenAiChat::new(config).unwrap());
        Self {
            server,
            store: ConversationStore::new(home.path().join("conversations")),
            _home: home,
            workspace: tempfile::tempdir().unwrap(),
            llm,
            child_tools,
        }
    }

    /// A fresh sub-agent host over the store (a restarted engine gets a new one).
    fn agents(&self) -> Arc<dyn SubAgents> {
        let tools = self.child_tools.clone();
        let make: ToolMaker = Arc::new(move |_spec, _env| {
            let tools = tools.clone();
            Box::pin(async move { Ok(tools) })
        });
        Arc::new(LocalSubAgents::new(
            self.store.clone(),
            Arc::clone(&self.llm),
            make,
        ))
    }

    async fn parent(&self) -> ConversationHandle {
        self.parent_with(tandem_protocol::ConfirmationPolicy::NeverConfirm)
            .await
    }

    async fn parent_with(&self, policy: tandem_protocol::ConfirmationPolicy) -> ConversationHandle {
        let id = uuid::Uuid::new_v4().to_string();
        let mut env = ToolEnv::new(self.workspace.path()).with(self.agents());
        env.conversation_id = id.clone();
        let tools = tandem_host::catalog()
            .make("task_tool_set", Default::default(), env)
            .await
            .unwrap()
            .unwrap();
        let mut agent = AgentSpec::default_for(LlmConfig::new("openai/scripted"));
        agent.tools = vec![ToolSpec {
            name: "task_tool_set".into(),
            params: Default::default(),
        }];
        agent.include_default_tools.clear();
        agent.condenser = None;
        let mut options = ConversationOptions::new(agent, self.workspace.path().to_path_buf());
        options.id = Some(id);
        options.autotitle = false;
        options.confirmation_policy = policy;
        let runtime = Runtime {
            llm: Arc::clone(&self.llm),
            tools,
            checkpoints: None,
            run_gate: None,
        };
        Conversation::create(&self.store, options, runtime)
            .await
            .unwrap()
    }

    /// The children of `parent` in the store: (id, meta extra, state).
    fn children(&self, parent: &str) -> Vec<(String, Value)> {
        self.store
            .list()
            .into_iter()
            .filter(|m| m.extra.get("parent_conversation_id") == Some(&json!(parent)))
            .map(|m| {
                let dir = self.store.dir_for(&m.id).unwrap();
                let state: Value = serde_json::from_str(
                    &std::fs::read_to_string(dir.join("base_state.json")).unwrap(),
                )
                .unwrap();
                (m.id.clone(), state)
            })
            .collect()
    }

    /// The last request the parent sent.
    fn last_parent_request(&self) -> Value {
        self.server
            .requests()
            .into_iter()
            .rfind(is_parent)
            .expect("the parent asked the LLM")
    }
}

async fn run(parent: &ConversationHandle, text: &str) {
    parent
        .send_message(Message::user(text), true)
        .await
        .unwrap();
    tokio::time::timeout(HANG, parent.wait_until_stopped())
        .await
        .expect("the parent's run did not end");
}

/// A tool each child calls once: it returns when `expected` children are in it at the same
/// time, else fails after the hang guard.
fn rendezvous(expected: usize) -> Arc<dyn Tool> {
    let (arrived, _) = watch::channel(0usize);
    let arrived = Arc::new(arrived);
    Arc::new(FnTool::new(
        "rendezvous",
        "Wait for the other sub-agents.",
        json!({"type": "object", "properties": {}}),
        move |_, ctx| {
            let arrived = Arc::clone(&arrived);
            async move {
                let mut rx = arrived.subscribe();
                arrived.send_modify(|n| *n += 1);
                tokio::select! {
                    r = tokio::time::timeout(HANG, rx.wait_for(|n| *n >= expected)) => match r {
                        Ok(Ok(_)) => Ok(format!("all {expected} sub-agents met")),
                        _ => Err("the other sub-agents never came".to_owned()),
                    },
                    () = ctx.cancel.cancelled() => Err("interrupted".to_owned()),
                }
            }
        },
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_tasks_run_at_once_and_their_answers_reach_the_parent() {
    let responder: Responder = Arc::new(|request: &Value, _| {
        if is_parent(request) {
            return if role_texts(request, "tool").is_empty() {
                Step::tool_calls(
                    (0..3)
                        .map(|n| {
                            task(json!({"description": format!("look {n}"), "prompt": format!("child {n}")}))
                        })
                        .collect(),
                )
            } else {
                Step::text("all three reported")
            };
        }
        let user = role_texts(request, "user").join(" ");
        let n = user
            .split("child ")
            .nth(1)
            .and_then(|s| s.chars().next())
            .unwrap_or('?');
        if role_texts(request, "tool").is_empty() {
            Step::tool_call("rendezvous", json!({}))
        } else {
            Step::text(format!("answer {n}"))
        }
    });
    let fx = Fixture::new(responder, vec![rendezvous(3)]);
    let parent = fx.parent().await;
    run(&parent, "fan out").await;

    assert_eq!(parent.status().as_str(), "finished");
    let tool_texts = role_texts(&fx.last_parent_request(), "tool");
    assert_eq!(tool_texts.len(), 3, "{tool_texts:?}");
    for (n, text) in tool_texts.iter().enumerate() {
        assert!(text.contains("Status: completed"), "{text}");
        assert!(text.contains("Subagent: general-purpose"), "{text}");
        // In call order, each with its own child's answer.
        assert!(text.ends_with(&format!("answer {n}")), "{text}");
    }
    let children = fx.children(parent.id());
    assert_eq!(children.len(), 3);
    for (id, state) in &children {
        assert_eq!(state["execution_status"], "finished", "{id}");
        let dir = fx.store.dir_for(id).unwrap();
        let events = read_event_dir(&dir);
        // Each child was in the rendezvous while the other two were: they ran at once.
        assert!(events.contains("all 3 sub-agents met"), "{id}: {events}");
    }
    // The task ids the parent read are the children's conversation ids.
    for text in &tool_texts {
        let id = text.lines().next().unwrap().trim_start_matches("Task ID: ");
        assert!(
            children
                .iter()
                .any(|(c, _)| c.replace('-', "") == id.replace('-', "")),
            "{id}"
        );
    }
}

/// Every event file's text in a conversation directory (whatever layout the log uses).
fn read_event_dir(dir: &std::path::Path) -> String {
    let mut out = String::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "json" || e == "jsonl") {
                out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_task_resumes_its_conversation() {
    let responder: Responder = Arc::new(|request: &Value, _| {
        if is_parent(request) {
            let tools = role_texts(request, "tool");
            return match tools.len() {
                0 => Step::tool_call("task", json!({"prompt": "first"})),
                1 => {
                    let id = tools[0]
                        .lines()
                        .next()
                        .unwrap()
                        .trim_start_matches("Task ID: ");
                    Step::tool_call("task", json!({"prompt": "second", "resume": id}))
                }
                _ => Step::text("done"),
            };
        }
        let users = role_texts(request, "user");
        if users.last().is_some_and(|u| u.contains("second")) {
            Step::text(format!("two, after {} user messages", users.len()))
        } else {
            Step::text("one")
        }
    });
    let fx = Fixture::new(responder, Vec::new());
    let parent = fx.parent().await;
    run(&parent, "go").await;

    let tools = role_texts(&fx.last_parent_request(), "tool");
    assert_eq!(tools.len(), 2, "{tools:?}");
    assert!(tools[0].ends_with("one"), "{}", tools[0]);
    assert!(
        tools[1].ends_with("two, after 2 user messages"),
        "{}",
        tools[1]
    );
    assert_eq!(tools[0].lines().next(), tools[1].lines().next());
    // One child, resumed from disk (the host closes a child when its run ends).
    assert_eq!(fx.children(parent.id()).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_types_and_tasks_are_errors_naming_what_exists() {
    let responder: Responder = Arc::new(|request: &Value, _| {
        if is_parent(request) {
            return if role_texts(request, "tool").is_empty() {
                Step::tool_calls(vec![
                    task(json!({"prompt": "x", "subagent_type": "nope"})),
                    task(json!({"prompt": "x", "resume": "no-such-task"})),
                ])
            } else {
                Step::text("ok")
            };
        }
        Step::text("never")
    });
    let fx = Fixture::new(responder, Vec::new());
    let parent = fx.parent().await;
    run(&parent, "go").await;

    let tools = role_texts(&fx.last_parent_request(), "tool");
    assert!(
        tools[0].contains(
            "Unknown agent 'nope'. Available types: bash-runner, code-explorer, general-purpose."
        ),
        "{}",
        tools[0]
    );
    assert!(tools[0].contains("Status: error"), "{}", tools[0]);
    assert!(
        tools[1].contains("Task 'no-such-task' not found. Available tasks: none"),
        "{}",
        tools[1]
    );
    assert!(fx.children(parent.id()).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_child_reports_its_failure() {
    let responder: Responder = Arc::new(|request: &Value, _| {
        if is_parent(request) {
            return if role_texts(request, "tool").is_empty() {
                Step::tool_call("task", json!({"prompt": "break"}))
            } else {
                Step::text("noted")
            };
        }
        Step::error(400, "the model refused this request")
    });
    let fx = Fixture::new(responder, Vec::new());
    let parent = fx.parent().await;
    run(&parent, "go").await;

    let tools = role_texts(&fx.last_parent_request(), "tool");
    assert!(tools[0].contains("Status: error"), "{}", tools[0]);
    assert!(
        tools[0].contains("[An error occurred during execution.]"),
        "{}",
        tools[0]
    );
    assert!(
        tools[0].contains("the model refused this request"),
        "{}",
        tools[0]
    );
    let children = fx.children(parent.id());
    assert_eq!(children[0].1["execution_status"], "error");
}

/// Children that wait in a tool until cancelled; `started` counts those inside.
fn blocker(started: Arc<watch::Sender<usize>>) -> Arc<dyn Tool> {
    Arc::new(FnTool::new(
        "block",
        "Wait until interrupted.",
        json!({"type": "object", "properties": {}}),
        move |_, ctx| {
            let started = Arc::clone(&started);
            async move {
                started.send_modify(|n| *n += 1);
                tokio::select! {
                    () = tokio::time::sleep(HANG) => Ok("never interrupted".to_owned()),
                    () = ctx.cancel.cancelled() => Err("interrupted".to_owned()),
                }
            }
        },
    ))
}

async fn stopping_the_parent_stops_its_children(pause: bool) {
    let responder: Responder = Arc::new(|request: &Value, _| {
        if is_parent(request) {
            return if role_texts(request, "tool").is_empty() {
                Step::tool_calls(vec![
                    task(json!({"prompt": "wait a"})),
                    task(json!({"prompt": "wait b"})),
                ])
            } else {
                Step::text("should not be asked")
            };
        }
        Step::tool_call("block", json!({}))
    });
    let (started, _) = watch::channel(0usize);
    let started = Arc::new(started);
    let fx = Fixture::new(responder, vec![blocker(Arc::clone(&started))]);
    let parent = fx.parent().await;
    parent
        .send_message(Message::user("go"), true)
        .await
        .unwrap();
    let mut rx = started.subscribe();
    tokio::time::timeout(HANG, rx.wait_for(|n| *n >= 2))
        .await
        .expect("both children started")
        .unwrap();
    if pause {
        parent.pause().await.unwrap();
    } else {
        parent.interrupt().await.unwrap();
    }
    tokio::time::timeout(HANG, parent.wait_until_stopped())
        .await
        .expect("the parent stopped");

    assert_eq!(parent.status().as_str(), "paused");
    let observations: Vec<Observation> = parent
        .events()
        .into_iter()
        .filter_map(|e| match e {
            Event::Observation(o) => Some(o.observation),
            _ => None,
        })
        .collect();
    assert_eq!(observations.len(), 2);
    for o in &observations {
        let Observation::Task(t) = o else {
            panic!("{o:?}")
        };
        assert!(t.is_error);
        let text = t.content[0].as_text().unwrap_or_default().to_owned();
        assert!(text.contains("interrupted"), "{text}");
        assert!(text.contains(&t.task_id), "{text}");
    }
    let children = fx.children(parent.id());
    assert_eq!(children.len(), 2);
    for (id, state) in children {
        assert_eq!(state["execution_status"], "paused", "{id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupting_the_parent_pauses_its_children() {
    stopping_the_parent_stops_its_children(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pausing_the_parent_pauses_its_children() {
    stopping_the_parent_stops_its_children(true).await;
}

#[tokio::test]
async fn the_description_is_upstreams() {
    let reference: Value = serde_json::from_str(
        &std::fs::read_to_string(
            tandem_e2e::repo_root().join("../shared/openhands/llm_request_all_tools.json"),
        )
        .unwrap_or_else(|_| "null".into()),
    )
    .unwrap();
    let env = ToolEnv::new(std::env::temp_dir());
    let tools = tandem_host::catalog()
        .make("task_tool_set", Default::default(), env)
        .await
        .unwrap()
        .unwrap();
    let mut registry = tandem_sdk::ToolRegistry::new();
    tools.into_iter().for_each(|t| registry.register(t));
    let ours = tandem_sdk::tool_schemas(&registry, true);
    let Some(upstream) = reference["tools"]
        .as_array()
        .and_then(|t| t.iter().find(|t| t["function"]["name"] == "task"))
    else {
        // The shared reference is not in this checkout: the description alone is checked.
        assert!(
            ours[0]["function"]["description"]
                .as_str()
                .unwrap()
                .contains("- No user-registered agents yet.")
        );
        return;
    };
    assert_eq!(
        ours[0]["function"]["description"],
        upstream["function"]["description"]
    );
    let props = |v: &Value| {
        let mut k: Vec<String> = v["function"]["parameters"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        k.sort();
        k
    };
    assert_eq!(props(&ours[0]), props(upstream));
    for p in ["description", "prompt", "subagent_type", "resume"] {
        assert_eq!(
            ours[0]["function"]["parameters"]["properties"][p],
            upstream["function"]["parameters"]["properties"][p],
            "{p}"
        );
    }
    assert_eq!(
        ours[0]["function"]["parameters"]["required"],
        upstream["function"]["parameters"]["required"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_childs_actions_that_need_confirmation_are_rejected_not_waited_for() {
    let responder: Responder = Arc::new(|request: &Value, _| {
        if is_parent(request) {
            return if role_texts(request, "tool").is_empty() {
                Step::tool_call("task", json!({"prompt": "meet"}))
            } else {
                Step::text("ok")
            };
        }
        match role_texts(request, "tool").first() {
            None => Step::tool_call("rendezvous", json!({})),
            Some(rejected) => Step::text(format!("could not: {rejected}")),
        }
    });
    let fx = Fixture::new(responder, vec![rendezvous(1)]);
    let parent = fx
        .parent_with(tandem_protocol::ConfirmationPolicy::AlwaysConfirm)
        .await;
    run(&parent, "go").await;
    // The parent's own task call waits for the person, who approves it.
    assert_eq!(parent.status().as_str(), "waiting_for_confirmation");
    parent.respond_to_confirmation(true, None).await.unwrap();
    tokio::time::timeout(HANG, parent.wait_until_stopped())
        .await
        .unwrap();
    assert_eq!(parent.status().as_str(), "finished");
    let tools = role_texts(&fx.last_parent_request(), "tool");
    assert!(tools[0].contains("Status: completed"), "{}", tools[0]);
    assert!(
        tools[0].contains("Nobody can confirm a sub-agent's actions here"),
        "{}",
        tools[0]
    );
    assert!(
        !tools[0].contains("met"),
        "the held action never ran: {}",
        tools[0]
    );
}
