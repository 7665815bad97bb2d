//! The actor task: the single writer of a conversation's state and log, and its run loop.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

mod edit;

use std::collections::HashMap;

use futures::FutureExt;
use futures::future::BoxFuture;
use tandem_llm::{Llm, LlmError, LlmRequest, LlmResponse};
use tandem_protocol::{
    Action, ActionEvent, Condensation, CondensationRequest, ConversationErrorEvent,
    ConversationState, ErrorClassification, Event, EventBase, ExecutionStatus, Extra,
    InterruptEvent, Message, MessageEvent, Metrics, Observation, ObservationEvent, PauseEvent,
    ResponseLatency, Role, Source, StreamingDeltaEvent, SystemPromptEvent, TextContent,
    UserRejectObservation,
};
use tokio::sync::{broadcast, mpsc, watch};
use tokio_util::sync::CancellationToken;

use edit::note_edit;
pub use edit::split_edit_note;

use super::handle::{ConversationHandle, ConversationView, RunState, Shared};
use super::metered::MeteredLlm;
use super::replay::{apply_update, replay, title_from};
use super::{Command, Conversation, ConversationOptions, Runtime};
use crate::agent::{agent_error, llm_view, propose_actions, tool_definitions_json, tool_schemas};
use crate::condenser::LlmSummarizingCondenser;
use crate::context::{AgentContext, PromptVars, load_workspace_skills, render_system_prompt};
use crate::error::{Result, SdkError};
use crate::persistence::{ConversationMeta, ConversationStore, EventLog, unmatched_actions};
use crate::secrets::{Masker, SecretRegistry};
use crate::security::RuleAnalyzer;
use crate::stuck::StuckDetector;
use crate::tool::{ToolContext, ToolRegistry};

/// What the recovery writes for a tool that was running when the engine stopped.
pub const RESTART_ERROR: &str = "A restart occurred while this tool was in progress. It may have partially run: check its effects before running it again.";

/// Result of the slow part of a step.
enum Phase {
    Llm(std::result::Result<LlmResponse, LlmError>),
    Condense(Result<Condensation>),
    Tool(Box<ActionEvent>, Observation),
}

struct InFlight {
    cancel: CancellationToken,
    future: BoxFuture<'static, Phase>,
    is_llm: bool,
}

struct Actor {
    shared: Arc<Shared>,
    store: ConversationStore,
    log: EventLog,
    llm: Arc<dyn Llm>,
    tools: ToolRegistry,
    schemas: Vec<serde_json::Value>,
    context: AgentContext,
    context_warnings: Vec<String>,
    analyzer: RuleAnalyzer,
    secrets: SecretRegistry,
    masker: Masker,
    workspace: PathBuf,
    http: reqwest::Client,
    /// The loop is alive.
    active: bool,
    /// Stop when the in-flight step is done.
    pause_requested: bool,
    /// LLM calls in this run.
    iterations: u32,
    /// Approved actions still to execute, in order.
    queue: VecDeque<ActionEvent>,
    /// Actions waiting for the user's decision.
    awaiting: Vec<ActionEvent>,
    /// Actions the person edited before approving, by action id: the headline of what ran,
    /// for the note on their observation.
    edited: HashMap<String, String>,
    inflight: Option<InFlight>,
    /// Set when persisting failed: the run stops and nothing more is acknowledged.
    broken: Option<String>,
    /// Summarises old history; automatic only when the agent has a condenser configured.
    condenser: LlmSummarizingCondenser,
    condenser_llm: Arc<MeteredLlm>,
    auto_condense: bool,
    /// The event count at which condensing last failed or found nothing to forget: not
    /// retried until the history grows.
    condense_stalled_at: Option<usize>,
    /// The current step's LLM call overflowed the context once already.
    overflowed: bool,
    /// Whether to ask the LLM for a title after the first message.
    autotitle: bool,
}

impl Conversation {
    /// Creates a conversation in `store` and starts its actor.
    pub async fn create(
        store: &ConversationStore,
        options: ConversationOptions,
        runtime: Runtime,
    ) -> Result<ConversationHandle> {
        let id = match &options.id {
            Some(id) => normalise_id(id)?,
            None => uuid::Uuid::new_v4().to_string(),
        };
        let workspace = absolute(&options.workspace)?;
        let mut secrets = SecretRegistry::new();
        secrets.update(options.secrets.clone());
        let dir = store.dir_for(&id)?;
        let agent = options.agent.without_keys();
        let state = ConversationState {
            id: id.clone(),
            agent,
            workspace: tandem_protocol::WorkspaceSpec::local(workspace.to_string_lossy()),
            persistence_dir: Some(dir.to_string_lossy().into_owned()),
            max_iterations: options.max_iterations,
            stuck_detection: options.stuck_detection,
            execution_status: ExecutionStatus::Idle,
            confirmation_policy: options.confirmation_policy.clone(),
            security_analyzer: None,
            activated_knowledge_skills: Vec::new(),
            last_user_message_id: None,
            leaf_event_id: None,
            stats: Default::default(),
            secret_registry: secrets.redacted_json(),
            tags: options.tags.clone(),
            extra: Extra::new(),
        };
        let mut state = state;
        if let Some(budget) = options.max_budget_per_task {
            let mut metrics = Metrics::new(&state.agent.llm.model);
            metrics.max_budget_per_task = Some(budget);
            state
                .stats
                .usage_to_metrics
                .insert(state.agent.llm.usage_id.clone(), metrics);
        }
        let mut meta = ConversationMeta::new(&id, None, chrono::Utc::now());
        meta.extra = options.meta_extra.clone();
        meta.extra.insert(
            "autotitle".into(),
            serde_json::Value::Bool(options.autotitle),
        );
        let (dir, log) = store.create(&state, &meta)?;
        Ok(spawn(
            store.clone(),
            dir,
            log,
            state,
            meta,
            Vec::new(),
            Vec::new(),
            secrets,
            runtime,
            Vec::new(),
        ))
    }

    /// Opens a persisted conversation (upstream-written ones too) and starts its actor.
    /// A conversation that was running when the engine stopped gets an error for each tool
    /// that was in progress and status `error`; `run` resumes it. Returns the load warnings.
    pub async fn open(
        store: &ConversationStore,
        id: &str,
        runtime: Runtime,
    ) -> Result<(ConversationHandle, Vec<String>)> {
        let (mut state, meta, log, loaded) = store.load(id)?;
        let events = loaded.events;
        let json = loaded.json;
        let warnings = loaded.warnings;
        replay(&mut state, &events);
        let awaiting: Vec<ActionEvent> =
            if state.execution_status == ExecutionStatus::WaitingForConfirmation {
                unmatched_actions(&events).into_iter().cloned().collect()
            } else {
                Vec::new()
            };
        let dir = store.dir_for(&state.id)?;
        let handle = spawn(
            store.clone(),
            dir,
            log,
            state,
            meta,
            events,
            json,
            SecretRegistry::new(),
            runtime,
            awaiting,
        );
        Ok((handle, warnings))
    }
}

#[allow(clippy::too_many_arguments)]
fn spawn(
    store: ConversationStore,
    dir: PathBuf,
    log: EventLog,
    state: ConversationState,
    meta: ConversationMeta,
    events: Vec<Event>,
    json: Vec<Arc<[u8]>>,
    secrets: SecretRegistry,
    runtime: Runtime,
    awaiting: Vec<ActionEvent>,
) -> ConversationHandle {
    let (tx, rx) = mpsc::unbounded_channel();
    let (events_tx, _) = broadcast::channel(4096);
    let (runs, _) = watch::channel(RunState::default());
    let workspace = PathBuf::from(&state.workspace.working_dir);
    let recover = state.execution_status == ExecutionStatus::Running;
    let shared = Arc::new(Shared {
        id: state.id.clone(),
        dir,
        commands: tx,
        view: RwLock::new(ConversationView {
            json,
            state,
            meta,
            events,
        }),
        events_tx,
        runs,
    });
    let mut tools = ToolRegistry::new();
    for t in runtime.tools {
        tools.register(t);
    }
    let (context, context_warnings) = build_context(&shared, &workspace);
    let ask_risk = shared_view(&shared, |v| {
        v.state
            .agent
            .system_prompt_kwargs
            .get("llm_security_analyzer")
            .and_then(|b| b.as_bool())
            .unwrap_or(true)
    });
    let masker = secrets.masker();
    let condenser_spec = shared_view(&shared, |v| v.state.agent.condenser.clone());
    let autotitle = shared_view(&shared, |v| {
        v.meta
            .extra
            .get("autotitle")
            .and_then(|a| a.as_bool())
            .unwrap_or(true)
    });
    let condenser_llm = Arc::new(MeteredLlm::new(runtime.llm.clone(), "condenser"));
    let mut condenser = LlmSummarizingCondenser::new(condenser_llm.clone());
    if let Some(spec) = &condenser_spec {
        condenser = condenser.with_spec(spec);
    }
    let actor = Actor {
        schemas: tool_schemas(&tools, ask_risk),
        shared: shared.clone(),
        store,
        log,
        llm: runtime.llm,
        tools,
        context,
        context_warnings,
        analyzer: RuleAnalyzer::default(),
        secrets,
        masker,
        workspace,
        http: reqwest::Client::new(),
        active: false,
        pause_requested: false,
        iterations: 0,
        queue: VecDeque::new(),
        awaiting,
        edited: HashMap::new(),
        inflight: None,
        broken: None,
        condenser,
        condenser_llm,
        auto_condense: condenser_spec.is_some(),
        condense_stalled_at: None,
        overflowed: false,
        autotitle,
    };
    let mut actor = actor;
    if recover {
        // Before anyone can read or command it: the first thing they see is the recovered state.
        actor.recover_from_crash();
    }
    tokio::spawn(actor.run(rx));
    ConversationHandle { shared }
}

fn shared_view<T>(shared: &Shared, f: impl FnOnce(&ConversationView) -> T) -> T {
    match shared.view.read() {
        Ok(g) => f(&g),
        Err(p) => f(&p.into_inner()),
    }
}

fn build_context(shared: &Shared, workspace: &std::path::Path) -> (AgentContext, Vec<String>) {
    let mut warnings = Vec::new();
    let spec = shared_view(shared, |v| v.state.agent.agent_context.clone());
    let mut context = match spec {
        Some(json) => AgentContext::from_json(&json).unwrap_or_else(|e| {
            warnings.push(format!("agent_context: {e}"));
            AgentContext::default()
        }),
        None => AgentContext::default(),
    };
    let (skills, skill_warnings) = load_workspace_skills(workspace);
    warnings.extend(skill_warnings);
    context.add_project_skills(skills);
    (context, warnings)
}

fn normalise_id(id: &str) -> Result<String> {
    uuid::Uuid::parse_str(id)
        .map(|u| u.hyphenated().to_string())
        .map_err(|e| SdkError::Config(format!("conversation id `{id}` is not a UUID: {e}")))
}

fn absolute(p: &std::path::Path) -> Result<PathBuf> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| SdkError::io("resolve", p, e))?
            .join(p)
    };
    std::fs::create_dir_all(&abs).map_err(|e| SdkError::io("create workspace", &abs, e))?;
    abs.canonicalize()
        .map_err(|e| SdkError::io("resolve workspace", &abs, e))
}

impl Actor {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Command>) {
        for w in std::mem::take(&mut self.context_warnings) {
            tracing::warn!(conversation = %self.shared.id, "{w}");
        }
        loop {
            while self.active && self.inflight.is_none() {
                self.advance().await;
            }
            let mut inflight = self.inflight.take();
            tokio::select! {
                cmd = rx.recv() => {
                    self.inflight = inflight;
                    match cmd {
                        Some(Command::Close { reply }) => {
                            self.close();
                            // The event log (and its lock) goes before the answer, so a caller
                            // can reopen or delete the conversation as soon as `close` returns.
                            drop(self);
                            let _ = reply.send(Ok(()));
                            return;
                        }
                        Some(cmd) => self.handle(cmd).await,
                        None => {
                            self.close();
                            return;
                        }
                    }
                }
                phase = async {
                    match inflight.as_mut() {
                        Some(f) => (&mut f.future).await,
                        None => std::future::pending().await,
                    }
                } => {
                    self.on_phase_done(phase).await;
                }
            }
        }
    }

    fn close(&mut self) {
        if let Some(f) = self.inflight.take() {
            f.cancel.cancel();
        }
        self.tools.close_all();
        if self.active {
            self.end_run(None);
        }
        self.save_state();
    }

    // ----- events -----

    /// Persists, then publishes. Nothing is visible before it is on disk.
    fn emit(&mut self, event: Event) -> Option<String> {
        if let Some(reason) = &self.broken {
            tracing::error!(conversation = %self.shared.id, "not recording event: {reason}");
            return None;
        }
        let event = self.mask_event(event);
        let json: Arc<[u8]> = match self.log.append(&event) {
            Ok(bytes) => Arc::from(bytes),
            Err(e) => {
                let msg = format!("could not persist an event: {e}");
                tracing::error!(conversation = %self.shared.id, "{msg}");
                self.broken = Some(msg.clone());
                self.active = false;
                let err = Event::ConversationError(ConversationErrorEvent {
                    base: EventBase::new(Source::Environment, None),
                    code: "PersistenceError".into(),
                    detail: msg,
                    classification: Some(ErrorClassification::internal()),
                    extra: Extra::new(),
                });
                let _ = self.shared.events_tx.send(err);
                return None;
            }
        };
        let id = event.id().to_owned();
        let mut view = self.write_view();
        if let Event::StateUpdate(u) = &event {
            apply_update(&mut view.state, &u.key, &u.value);
        } else {
            view.state.leaf_event_id = Some(id.clone());
        }
        view.events.push(event.clone());
        view.json.push(json);
        let _ = self.shared.events_tx.send(event);
        Some(id)
    }

    fn mask_event(&self, event: Event) -> Event {
        if self.masker.is_empty() {
            return event;
        }
        let Ok(mut value) = serde_json::to_value(&event) else {
            return event;
        };
        let before = value.clone();
        self.masker.mask_json(&mut value);
        if value == before {
            return event;
        }
        serde_json::from_value(value).unwrap_or(event)
    }

    fn write_view(&self) -> std::sync::RwLockWriteGuard<'_, ConversationView> {
        match self.shared.view.write() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        }
    }

    fn leaf(&self) -> Option<String> {
        shared_view(&self.shared, |v| v.state.leaf_event_id.clone())
    }

    fn status(&self) -> ExecutionStatus {
        shared_view(&self.shared, |v| v.state.execution_status)
    }

    fn set_status(&mut self, status: ExecutionStatus) {
        if self.status() != status {
            let leaf = self.leaf();
            self.emit(Event::state_update(
                "execution_status",
                serde_json::json!(status.as_str()),
                leaf,
            ));
        }
    }

    fn save_state(&mut self) {
        let (state, mut meta) = shared_view(&self.shared, |v| (v.state.clone(), v.meta.clone()));
        let mut state = state;
        state.secret_registry = self.secrets.redacted_json();
        meta.updated_at = chrono::Utc::now();
        meta.metrics = serde_json::to_value(&state.stats).ok();
        if let Err(e) = self.store.save_state(&self.shared.dir, &state) {
            tracing::error!(conversation = %self.shared.id, "saving state: {e}");
        }
        if let Err(e) = self.store.save_meta(&self.shared.dir, &meta) {
            tracing::error!(conversation = %self.shared.id, "saving metadata: {e}");
        }
        self.write_view().meta = meta;
    }

    fn conversation_error(
        &mut self,
        code: &str,
        detail: String,
        classification: ErrorClassification,
    ) {
        let leaf = self.leaf();
        self.emit(Event::ConversationError(ConversationErrorEvent {
            base: EventBase::new(Source::Environment, leaf),
            code: code.to_owned(),
            detail,
            classification: Some(classification),
            extra: Extra::new(),
        }));
    }

    // ----- commands -----

    async fn handle(&mut self, cmd: Command) {
        match cmd {
            Command::SendMessage {
                message,
                run,
                reply,
            } => {
                let r = self.append_user_message(message);
                if r.is_ok() && run && !self.active {
                    let _ = self.start_run();
                }
                let _ = reply.send(r);
            }
            Command::Run { reply } => {
                let _ = reply.send(self.start_run());
            }
            Command::Pause { reply } => {
                if self.active {
                    self.pause_requested = true;
                    let leaf = self.leaf();
                    self.emit(Event::Pause(PauseEvent::new(Source::User, leaf)));
                    self.set_status(ExecutionStatus::Paused);
                } else if self.status() == ExecutionStatus::Idle {
                    self.set_status(ExecutionStatus::Paused);
                }
                let _ = reply.send(Ok(()));
            }
            Command::Interrupt { reply } => {
                self.interrupt();
                let _ = reply.send(Ok(()));
            }
            Command::RespondToConfirmation {
                accept,
                reason,
                reply,
            } => {
                let r = if accept {
                    match self.start_run() {
                        Err(SdkError::AlreadyRunning) => Ok(()),
                        other => other,
                    }
                } else {
                    self.reject_pending(
                        reason.unwrap_or_else(|| "User rejected the action.".to_owned()),
                    );
                    Ok(())
                };
                let _ = reply.send(r);
            }
            Command::ApproveEdited {
                action_id,
                arguments,
                reply,
            } => {
                let _ = reply.send(self.approve_edited(&action_id, &arguments));
            }
            Command::SetConfirmationPolicy { policy, reply } => {
                let value = serde_json::to_value(&policy).unwrap_or_default();
                let leaf = self.leaf();
                self.emit(Event::state_update("confirmation_policy", value, leaf));
                self.save_state();
                let _ = reply.send(Ok(()));
            }
            Command::UpdateSecrets { secrets, reply } => {
                self.secrets.update(secrets);
                self.masker = self.secrets.masker();
                self.write_view().state.secret_registry = self.secrets.redacted_json();
                self.save_state();
                let _ = reply.send(Ok(()));
            }
            Command::SetSecurityAnalyzer { analyzer, reply } => {
                self.write_view().state.security_analyzer = analyzer;
                self.save_state();
                let _ = reply.send(Ok(()));
            }
            Command::Condense { reply } => {
                let leaf = self.leaf();
                self.emit(Event::CondensationRequest(CondensationRequest::new(
                    Source::Environment,
                    leaf,
                )));
                self.condense_stalled_at = None;
                // A running loop condenses before its next call; an idle one does it now.
                if !self.active && self.inflight.is_none() {
                    self.start_condense();
                }
                let _ = reply.send(Ok(()));
            }
            Command::AutoTitle {
                title,
                replaces,
                replies,
            } => {
                let model = self.llm.config().model.clone();
                for reply in &replies {
                    self.record_metrics("title", &model, reply);
                }
                let current = shared_view(&self.shared, |v| v.meta.title.clone());
                if current.as_deref() == Some(replaces.as_str()) && !title.is_empty() {
                    let title = self.masker.mask(&title);
                    self.write_view().meta.title = Some(title);
                    self.save_state();
                }
            }
            Command::SetTitle { title, reply } => {
                let title = self.masker.mask(&title);
                self.write_view().meta.title = Some(title);
                self.save_state();
                let _ = reply.send(Ok(()));
            }
            Command::Close { reply } => {
                self.close();
                let _ = reply.send(Ok(()));
            }
        }
    }

    fn append_user_message(&mut self, mut message: Message) -> Result<()> {
        if message.role != Role::User {
            return Err(SdkError::InvalidState(format!(
                "messages sent to the agent must have role `user`, not `{:?}`",
                message.role
            )));
        }
        if let Some(reason) = &self.broken {
            return Err(SdkError::InvalidState(reason.clone()));
        }
        self.ensure_system_prompt()?;
        if self.status() == ExecutionStatus::Finished {
            self.set_status(ExecutionStatus::Idle);
        }
        let text = message.text();
        let decorated = self.context.decorate_user_message(&text);
        if decorated != text {
            message.content.retain(|c| c.as_text().is_none());
            message
                .content
                .insert(0, tandem_protocol::Content::text(decorated));
        }
        let activation = self.context.activate(&text);
        let leaf = self.leaf();
        let event = MessageEvent {
            base: EventBase::new(Source::User, leaf),
            llm_message: message,
            llm_response_id: None,
            activated_skills: activation.activated_skills.clone(),
            extended_content: activation
                .extended_content
                .iter()
                .map(tandem_protocol::Content::text)
                .collect(),
            sender: None,
            critic_result: None,
            extra: Extra::new(),
        };
        let Some(id) = self.emit(Event::Message(event)) else {
            return Err(SdkError::InvalidState(
                self.broken.clone().unwrap_or_default(),
            ));
        };
        if !activation.activated_skills.is_empty() {
            let mut view = self.write_view();
            for n in &activation.activated_skills {
                if !view.state.activated_knowledge_skills.contains(n) {
                    view.state.activated_knowledge_skills.push(n.clone());
                }
            }
        }
        self.emit(Event::state_update(
            "last_user_message_id",
            serde_json::json!(id),
            Some(id.clone()),
        ));
        let needs_title = shared_view(&self.shared, |v| v.meta.title.is_none());
        if needs_title && !text.trim().is_empty() {
            let masked = self.masker.mask(&text);
            let provisional = title_from(&masked);
            self.write_view().meta.title = Some(provisional.clone());
            self.save_state();
            if self.autotitle {
                self.spawn_title(masked, provisional);
            }
        }
        Ok(())
    }

    /// Asks the LLM for a short title in the background; the actor applies it.
    fn spawn_title(&self, message: String, provisional: String) {
        let llm = Arc::new(MeteredLlm::new(self.llm.clone(), "title"));
        let commands = self.shared.commands.clone();
        tokio::spawn(async move {
            let title =
                crate::title::generate_title(llm.as_ref(), &message, CancellationToken::new())
                    .await;
            let replies = llm.take_replies();
            let _ = commands.send(Command::AutoTitle {
                title,
                replaces: provisional,
                replies,
            });
        });
    }

    fn ensure_system_prompt(&mut self) -> Result<()> {
        let has = shared_view(&self.shared, |v| {
            v.events.iter().any(|e| matches!(e, Event::SystemPrompt(_)))
        });
        if has {
            return Ok(());
        }
        let kwargs = shared_view(&self.shared, |v| v.state.agent.system_prompt_kwargs.clone());
        let flag =
            |k: &str, default: bool| kwargs.get(k).and_then(|v| v.as_bool()).unwrap_or(default);
        let mut vars = PromptVars::new(&self.workspace);
        vars.cli_mode = flag("cli_mode", true);
        vars.llm_security_analyzer = flag("llm_security_analyzer", true);
        vars.tools = self.tools.names().iter().map(|s| s.to_string()).collect();
        let text = render_system_prompt(&self.context, &vars)?;
        let event = SystemPromptEvent {
            base: EventBase::new(Source::Agent, None),
            system_prompt: TextContent::new(text),
            tools: tool_definitions_json(&self.tools),
            dynamic_context: None,
            extra: Extra::new(),
        };
        self.emit(Event::SystemPrompt(event));
        Ok(())
    }

    fn start_run(&mut self) -> Result<()> {
        self.check_can_run()?;
        // Approving: what waited runs first, in order.
        self.queue.extend(self.awaiting.drain(..));
        self.begin_run();
        Ok(())
    }

    /// Why a run cannot start now, if it cannot.
    fn check_can_run(&self) -> Result<()> {
        if self.active {
            return Err(SdkError::AlreadyRunning);
        }
        if let Some(reason) = &self.broken {
            return Err(SdkError::InvalidState(reason.clone()));
        }
        let has_user_message = shared_view(&self.shared, |v| {
            v.events
                .iter()
                .any(|e| matches!(e, Event::Message(m) if m.base.source == Source::User))
        });
        if !has_user_message {
            return Err(SdkError::InvalidState(
                "nothing to run: send a message first".into(),
            ));
        }
        Ok(())
    }

    /// Starts the loop on what is queued.
    fn begin_run(&mut self) {
        self.active = true;
        self.pause_requested = false;
        self.iterations = 0;
        self.set_status(ExecutionStatus::Running);
        self.shared.runs.send_modify(|r| r.active = true);
    }

    fn interrupt(&mut self) {
        if !self.active {
            return;
        }
        if let Some(f) = &self.inflight {
            if f.is_llm {
                // The cancelled reply never becomes an event.
                self.inflight = None;
            } else {
                // The tool stops and kills what it started; its observation still arrives.
                f.cancel.cancel();
            }
        }
        let leaf = self.leaf();
        self.emit(Event::Interrupt(InterruptEvent::new(Source::User, leaf)));
        self.pause_requested = true;
        let reason = "Interrupted by the user before it ran.".to_owned();
        for action in std::mem::take(&mut self.queue) {
            self.record_reject(&action, &reason);
        }
        if self.inflight.is_none() {
            self.end_run(Some(ExecutionStatus::Paused));
        } else {
            self.set_status(ExecutionStatus::Paused);
        }
    }

    fn reject_pending(&mut self, reason: String) {
        let pending = std::mem::take(&mut self.awaiting);
        if pending.is_empty() {
            return;
        }
        for action in &pending {
            self.record_reject(action, &reason);
        }
        self.set_status(ExecutionStatus::Idle);
        self.save_state();
    }

    fn record_reject(&mut self, action: &ActionEvent, reason: &str) {
        self.emit(Event::UserReject(UserRejectObservation {
            base: EventBase::new(Source::Environment, Some(action.base.id.clone())),
            tool_name: action.tool_name.clone(),
            tool_call_id: action.tool_call_id.clone(),
            rejection_reason: reason.to_owned(),
            rejection_source: "user".into(),
            action_id: action.base.id.clone(),
            extra: Extra::new(),
        }));
    }

    // ----- the loop -----

    /// Starts the next slow part, or ends the run.
    async fn advance(&mut self) {
        if self.broken.is_some() {
            self.end_run(Some(ExecutionStatus::Error));
            return;
        }
        if let Some(action) = self.queue.pop_front() {
            self.start_tool(action).await;
            return;
        }
        if !self.awaiting.is_empty() {
            // An edited action ran alone; the others of its turn still wait for a decision,
            // also when a pause was asked for meanwhile (a later run must not start them).
            self.end_run(Some(ExecutionStatus::WaitingForConfirmation));
            return;
        }
        if self.pause_requested {
            self.end_run(Some(ExecutionStatus::Paused));
            return;
        }
        let (max, stuck_on, status) = shared_view(&self.shared, |v| {
            (
                v.state.max_iterations,
                v.state.stuck_detection,
                v.state.execution_status,
            )
        });
        if status != ExecutionStatus::Running {
            self.end_run(None);
            return;
        }
        if stuck_on {
            let reason = shared_view(&self.shared, |v| StuckDetector.check(&v.events));
            if let Some(reason) = reason {
                self.conversation_error(
                    "StuckDetected",
                    format!("Stopped: {}.", reason.0),
                    ErrorClassification {
                        kind: "agent_action".into(),
                        retryable: true,
                        user_action: "retry".into(),
                        error_id: None,
                    },
                );
                self.end_run(Some(ExecutionStatus::Stuck));
                return;
            }
        }
        if self.iterations >= max {
            self.conversation_error(
                "MaxIterationsReached",
                format!("The agent reached the maximum of {max} iterations for one run. Send a message or run again to continue."),
                ErrorClassification { kind: "agent_action".into(), retryable: true, user_action: "retry".into(), error_id: None },
            );
            self.end_run(Some(ExecutionStatus::Error));
            return;
        }
        if self.wants_condensation() {
            self.start_condense();
            return;
        }
        self.iterations += 1;
        self.start_llm_call();
    }

    /// Whether to condense before the next LLM call: the history outgrew the condenser (when
    /// the agent has one) or someone asked for it; not again until the history grows after a
    /// condensation that failed or found nothing to forget.
    fn wants_condensation(&self) -> bool {
        let (len, requested, too_long) = shared_view(&self.shared, |v| {
            let last_request = v
                .events
                .iter()
                .rposition(|e| matches!(e, Event::CondensationRequest(_)));
            let last_condensation = v
                .events
                .iter()
                .rposition(|e| matches!(e, Event::Condensation(_)));
            let requested = match (last_request, last_condensation) {
                (Some(r), Some(c)) => r > c,
                (Some(_), None) => true,
                _ => false,
            };
            let too_long = self.auto_condense && self.condenser.should_condense(&v.events);
            (v.events.len(), requested, too_long)
        });
        (requested || too_long || self.overflowed) && self.condense_stalled_at != Some(len)
    }

    fn start_condense(&mut self) {
        let events = shared_view(&self.shared, |v| v.events.clone());
        let condenser = self.condenser.clone();
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let future =
            async move { Phase::Condense(condenser.condense(&events, token).await) }.boxed();
        self.inflight = Some(InFlight {
            cancel,
            future,
            is_llm: true,
        });
    }

    fn on_condensed(&mut self, result: Result<Condensation>) {
        let model = self.condenser_llm.config().model.clone();
        for reply in self.condenser_llm.take_replies() {
            self.record_metrics("condenser", &model, &reply);
        }
        match result {
            Ok(mut condensation) => {
                condensation.base.parent_id = self.leaf();
                self.emit(Event::Condensation(condensation));
                self.condense_stalled_at = None;
            }
            Err(e) => {
                let len = shared_view(&self.shared, |v| v.events.len());
                self.condense_stalled_at = Some(len);
                tracing::warn!(conversation = %self.shared.id, "condensation failed: {e}");
                if self.overflowed && self.active {
                    self.conversation_error(
                        "LLMContextWindowExceedError",
                        format!("The conversation no longer fits the model's context window and could not be condensed: {e}"),
                        ErrorClassification { kind: "llm".into(), retryable: false, user_action: "none".into(), error_id: None },
                    );
                    self.end_run(Some(ExecutionStatus::Error));
                }
            }
        }
    }

    fn start_llm_call(&mut self) {
        let messages = shared_view(&self.shared, |v| llm_view(&v.events));
        let messages = mask_messages(messages, &self.masker);
        let on_delta = self.llm.config().stream.then(|| self.delta_forwarder());
        let request = LlmRequest {
            messages,
            tools: self.schemas.clone(),
            prompt_cache_key: Some(self.shared.id.clone()),
            on_delta,
        };
        let cancel = CancellationToken::new();
        let llm = self.llm.clone();
        let token = cancel.clone();
        let future = async move { Phase::Llm(llm.completion(request, token).await) }.boxed();
        self.inflight = Some(InFlight {
            cancel,
            future,
            is_llm: true,
        });
    }

    /// Streams deltas to subscribers as transient events.
    fn delta_forwarder(&self) -> mpsc::UnboundedSender<tandem_llm::StreamDelta> {
        let (tx, mut rx) = mpsc::unbounded_channel::<tandem_llm::StreamDelta>();
        let events = self.shared.events_tx.clone();
        let masker = self.masker.clone();
        tokio::spawn(async move {
            while let Some(d) = rx.recv().await {
                let _ = events.send(Event::StreamingDelta(StreamingDeltaEvent {
                    base: EventBase::new(Source::Agent, None),
                    content: d.content.map(|c| masker.mask(&c)),
                    reasoning_content: d.reasoning_content.map(|c| masker.mask(&c)),
                    extra: Extra::new(),
                }));
            }
        });
        tx
    }

    async fn start_tool(&mut self, action_event: ActionEvent) {
        let (Some(action), Some(tool)) = (
            action_event.action.clone(),
            self.tools.get(&action_event.tool_name).cloned(),
        ) else {
            return;
        };
        let command = match &action {
            Action::Terminal(t) => t.command.clone(),
            _ => String::new(),
        };
        let (env, errors) = if command.is_empty() || self.secrets.is_empty() {
            (Default::default(), Vec::new())
        } else {
            self.secrets.env_for(&command, &self.http).await
        };
        self.masker = self.secrets.masker();
        for e in errors {
            tracing::warn!(conversation = %self.shared.id, "{e}");
        }
        let cancel = CancellationToken::new();
        let ctx = ToolContext {
            cancel: cancel.clone(),
            working_dir: self.workspace.clone(),
            conversation_dir: Some(self.shared.dir.clone()),
            env,
            masker: self.masker.clone(),
        };
        let ev = Box::new(action_event);
        let future = async move {
            let obs = tool.execute(&action, ctx).await;
            Phase::Tool(ev, obs)
        }
        .boxed();
        self.inflight = Some(InFlight {
            cancel,
            future,
            is_llm: false,
        });
    }

    async fn on_phase_done(&mut self, phase: Phase) {
        match phase {
            Phase::Llm(Ok(response)) => {
                self.overflowed = false;
                self.on_llm_response(response)
            }
            Phase::Llm(Err(LlmError::Cancelled)) => {}
            Phase::Llm(Err(LlmError::ContextWindowExceeded(detail))) if !self.overflowed => {
                // Condense, then try the step again; a second overflow is an error.
                tracing::info!(conversation = %self.shared.id, "context window exceeded, condensing: {detail}");
                self.overflowed = true;
                self.iterations = self.iterations.saturating_sub(1);
            }
            Phase::Condense(result) => self.on_condensed(result),
            Phase::Llm(Err(e)) => {
                let classification = ErrorClassification {
                    kind: if e.is_retryable() {
                        "transient".into()
                    } else {
                        "llm".into()
                    },
                    retryable: e.is_retryable(),
                    user_action: if matches!(e, LlmError::Auth { .. } | LlmError::Config(_)) {
                        "fix_config".into()
                    } else {
                        "retry".into()
                    },
                    error_id: None,
                };
                self.conversation_error(e.code(), e.to_string(), classification);
                self.end_run(Some(ExecutionStatus::Error));
            }
            Phase::Tool(action, observation) => self.on_observation(*action, observation),
        }
    }

    fn on_llm_response(&mut self, response: LlmResponse) {
        let (usage_id, model) = (
            self.llm.config().usage_id.clone(),
            self.llm.config().model.clone(),
        );
        self.record_metrics(&usage_id, &model, &response);
        if let Some((spent, budget)) = self.over_budget() {
            // The reply was paid for but is not acted on: the budget is a hard stop.
            self.conversation_error(
                "BudgetExceeded",
                format!("Stopped: the agent's LLM has cost ${spent:.4}, over this conversation's budget of ${budget:.4}. Raise max_budget_per_task to continue."),
                ErrorClassification { kind: "budget".into(), retryable: false, user_action: "fix_config".into(), error_id: None },
            );
            self.end_run(Some(ExecutionStatus::Error));
            return;
        }
        let calls = response.message.tool_calls.as_ref().map_or(0, Vec::len);
        if calls == 0 {
            let leaf = self.leaf();
            let mut message = response.message.clone();
            message.tool_calls = None;
            self.emit(Event::Message(MessageEvent {
                base: EventBase::new(Source::Agent, leaf),
                llm_message: message,
                llm_response_id: Some(response.id.clone()),
                activated_skills: Vec::new(),
                extended_content: Vec::new(),
                sender: None,
                critic_result: None,
                extra: Extra::new(),
            }));
            self.end_run(Some(ExecutionStatus::Finished));
            return;
        }
        let proposed = propose_actions(
            &response,
            &self.tools,
            &self.analyzer,
            &self.workspace,
            self.leaf(),
        );
        let policy = shared_view(&self.shared, |v| v.state.confirmation_policy.clone());
        let mut runnable = Vec::new();
        for p in proposed {
            let event = p.event.clone();
            self.emit(Event::Action(p.event));
            match p.error {
                Some(error) => {
                    self.emit(Event::AgentError(agent_error(
                        &event,
                        error,
                        ErrorClassification::agent_action(),
                    )));
                }
                None => runnable.push(event),
            }
        }
        let needs_confirmation = runnable.iter().any(|a| {
            !matches!(a.action, Some(Action::Finish(_)) | Some(Action::Think(_)))
                && policy.should_confirm(a.security_risk)
        });
        if needs_confirmation && !self.pause_requested {
            self.awaiting = runnable;
            self.end_run(Some(ExecutionStatus::WaitingForConfirmation));
        } else if needs_confirmation {
            // Paused while the model answered: hold the actions for approval all the same.
            self.awaiting = runnable;
            self.end_run(Some(ExecutionStatus::Paused));
        } else {
            self.queue.extend(runnable);
        }
    }

    fn on_observation(&mut self, action: ActionEvent, mut observation: Observation) {
        if let Some(headline) = self.edited.remove(&action.base.id) {
            note_edit(&mut observation, &headline);
        }
        if let Some(content) = observation.content_mut() {
            self.masker.mask_content(content);
        }
        let finished = matches!(action.action, Some(Action::Finish(_)));
        self.emit(Event::Observation(ObservationEvent {
            base: EventBase::new(Source::Environment, Some(action.base.id.clone())),
            tool_name: action.tool_name.clone(),
            tool_call_id: action.tool_call_id.clone(),
            observation,
            action_id: action.base.id.clone(),
            extended_content: Vec::new(),
            extra: Extra::new(),
        }));
        if finished {
            let mut rest = std::mem::take(&mut self.queue);
            rest.extend(self.awaiting.drain(..));
            for rest in rest {
                let error = "Not run: the agent called finish before this action.".to_owned();
                self.emit(Event::AgentError(agent_error(
                    &rest,
                    error,
                    ErrorClassification::agent_action(),
                )));
            }
            self.end_run(Some(ExecutionStatus::Finished));
        } else if self.pause_requested
            && self.status() == ExecutionStatus::Paused
            && self.queue.is_empty()
        {
            self.end_run(Some(ExecutionStatus::Paused));
        }
    }

    /// `(spent, budget)` when the agent's LLM has spent more than its budget.
    fn over_budget(&self) -> Option<(f64, f64)> {
        let usage_id = &self.llm.config().usage_id;
        shared_view(&self.shared, |v| {
            let m = v.state.stats.usage_to_metrics.get(usage_id)?;
            let budget = m.max_budget_per_task?;
            (m.accumulated_cost > budget).then_some((m.accumulated_cost, budget))
        })
    }

    fn record_metrics(&mut self, usage_id: &str, model: &str, response: &LlmResponse) {
        let usage_id = usage_id.to_owned();
        let model = model.to_owned();
        let stats_value = {
            let mut view = self.write_view();
            let metrics = view
                .state
                .stats
                .usage_to_metrics
                .entry(usage_id.clone())
                .or_insert_with(|| Metrics::new(&model));
            metrics.accumulated_cost += response.cost;
            let mut usage = response.usage.clone();
            if usage.model.is_empty() {
                // A router names the model that served the call; keep that when given.
                usage.model.clone_from(&model);
            }
            usage.response_id.clone_from(&response.id);
            metrics
                .accumulated_token_usage
                .get_or_insert_with(Default::default)
                .add(&usage);
            let latency = ResponseLatency {
                model: model.clone(),
                latency: response.latency.as_secs_f64(),
                response_id: response.id.clone(),
            };
            metrics.response_latencies.push(latency.clone());
            // The event carries the totals and this call's latency, not the whole history.
            let mut stats = view.state.stats.clone();
            for (k, m) in stats.usage_to_metrics.iter_mut() {
                m.response_latencies = if *k == usage_id {
                    vec![latency.clone()]
                } else {
                    Vec::new()
                };
            }
            serde_json::to_value(&stats).unwrap_or_default()
        };
        let leaf = self.leaf();
        self.emit(Event::state_update("stats", stats_value, leaf));
    }

    fn end_run(&mut self, status: Option<ExecutionStatus>) {
        if let Some(s) = status {
            self.set_status(s);
        }
        self.active = false;
        self.pause_requested = false;
        self.inflight = None;
        if self.queue.is_empty() {
            // Edited actions rejected or dropped before they ran leave no note to write.
            self.edited.clear();
        }
        self.save_state();
        self.shared.runs.send_modify(|r| {
            r.active = false;
            r.runs_ended += 1;
        });
    }

    /// A conversation persisted as running: the engine stopped mid-run.
    fn recover_from_crash(&mut self) {
        let unmatched: Vec<ActionEvent> = shared_view(&self.shared, |v| {
            unmatched_actions(&v.events).into_iter().cloned().collect()
        });
        for action in &unmatched {
            let classification = ErrorClassification::internal();
            self.emit(Event::AgentError(agent_error(
                action,
                RESTART_ERROR.to_owned(),
                classification,
            )));
        }
        if unmatched.is_empty() {
            self.conversation_error(
                "EngineRestarted",
                "The engine stopped while this conversation was running. Run it again to continue."
                    .into(),
                ErrorClassification::internal(),
            );
        }
        self.set_status(ExecutionStatus::Error);
        self.save_state();
    }
}

/// Masks secret values in everything the LLM is sent.
fn mask_messages(mut messages: Vec<Message>, masker: &Masker) -> Vec<Message> {
    if masker.is_empty() {
        return messages;
    }
    for m in &mut messages {
        masker.mask_content(&mut m.content);
        if let Some(calls) = &mut m.tool_calls {
            for call in calls {
                if masker.contains_secret(&call.arguments) {
                    call.arguments = masker.mask(&call.arguments);
                }
            }
        }
    }
    messages
}
