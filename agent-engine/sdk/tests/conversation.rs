//! Agent-loop tests: a conversation driven by the scripted LLM server through the real
//! OpenAI client, with small recording tools, asserting the events produced, the requests
//! sent, and that nothing runs before approval.

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
    SecretSource, Tool, ToolAnnotations, ToolContext, ToolDefinition, ToolInputError,
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

    fn parse_action(&self, arguments: Value) -> Result<Action, ToolInputError> {
        let command = arguments
            .get("command")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolInputError::Missing("command".into()))?;
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
    fn parse_action(&self, arguments: Value) -> Result<Action, ToolInputError> {
        let message = arguments
            .get("message")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolInputError::Missing("message".into()))?;
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
            checkpoints: None,
            run_gate: None,
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

mod edit;
mod history;
mod queue;
mod run;
mod state;
