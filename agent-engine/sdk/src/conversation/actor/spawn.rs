//! Starting a conversation's actor: creating or opening the conversation, and recovering one
//! the engine stopped while it ran.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, RwLock};

use tandem_protocol::{
    ActionEvent, ConversationState, ErrorClassification, Event, ExecutionStatus, Extra, Metrics,
};
use tokio::sync::{broadcast, mpsc, watch};

use super::{Actor, RESTART_ERROR, shared_view};
use crate::agent::{agent_error, tool_schemas};
use crate::condenser::LlmSummarizingCondenser;
use crate::context::{AgentContext, load_user_skills, load_workspace_skills, user_skills_dir};
use crate::conversation::handle::{ConversationHandle, ConversationView, RunState, Shared};
use crate::conversation::metered::MeteredLlm;
use crate::conversation::rebuild::rebuild;
use crate::conversation::{Conversation, ConversationOptions, Runtime};
use crate::error::{Result, SdkError};
use crate::persistence::{ConversationMeta, ConversationStore, EventLog, unmatched_actions};
use crate::secrets::SecretRegistry;
use crate::security::RuleAnalyzer;
use crate::tool::ToolRegistry;

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
        if options.budget.is_set() {
            options
                .budget
                .validate()
                .map_err(|e| SdkError::Config(e.to_string()))?;
            state.extra.insert(
                tandem_protocol::Budget::KEY.into(),
                serde_json::to_value(options.budget)?,
            );
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
        rebuild(&mut state, &events);
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
        masker: RwLock::new(crate::secrets::Masker::default()),
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
    let known = crate::credentials::known_credentials();
    let credentials_seen = known.version();
    let masker = secrets.masker_with(&known.values());
    if let Ok(mut published) = shared.masker.write() {
        *published = masker.clone();
    }
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
        checkpoints: runtime.checkpoints,
        tools,
        context,
        context_warnings,
        analyzer: RuleAnalyzer::default(),
        secrets,
        masker,
        credentials_seen,
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
        gate: runtime.run_gate,
        slot: super::queue::Slot::Free,
    };
    let mut actor = actor;
    if recover {
        // Before anyone can read or command it: the first thing they see is the recovered state.
        actor.recover_from_crash();
    }
    tokio::spawn(actor.run(rx));
    ConversationHandle { shared }
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
    if let Some(dir) = user_skills_dir() {
        let (skills, skill_warnings) = load_user_skills(&dir);
        warnings.extend(skill_warnings);
        context.add_user_skills(skills);
    }
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
        if shared_view(&self.shared, |v| {
            v.state.extra.contains_key(super::QUEUE_KEY)
        }) {
            // It was waiting for a slot: it no longer is.
            let leaf = self.leaf();
            self.emit(Event::state_update(
                super::QUEUE_KEY,
                serde_json::Value::Null,
                leaf,
            ));
        }
        self.set_status(ExecutionStatus::Error);
        self.save_state();
    }
}
