//! The actor task: the single writer of a conversation's state and log, and its run loop.
//!
//! This file holds the actor's state, its command loop and how it records events; starting
//! it is in `spawn`, its answers to commands in `commands`, the run loop in `step`, cost
//! accounting in `metrics` and edited approvals in `edit`.

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;

mod commands;
mod edit;
mod metrics;
mod queue;
mod spawn;
mod step;

use futures::future::BoxFuture;
use tandem_llm::{Llm, LlmError, LlmResponse};
use tandem_protocol::{
    ActionEvent, Condensation, ConversationErrorEvent, ErrorClassification, Event, EventBase,
    ExecutionStatus, Extra, Observation, Source,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use edit::split_edit_note;
pub use metrics::budget_of;
pub use queue::QUEUE_KEY;
pub use step::LLM_RETRY_KEY;

use super::Command;
use super::handle::{ConversationView, Shared};
use super::metered::MeteredLlm;
use super::rebuild::apply_update;
use crate::condenser::LlmSummarizingCondenser;
use crate::context::AgentContext;
use crate::error::Result;
use crate::persistence::{ConversationStore, EventLog};
use crate::secrets::{Masker, SecretRegistry};
use crate::security::RuleAnalyzer;
use crate::tool::ToolRegistry;

/// What the recovery writes for a tool that was running when the engine stopped.
pub const RESTART_ERROR: &str = "A restart occurred while this tool was in progress. It may have partially run: check its effects before running it again.";

/// Result of the slow part of a step.
enum Phase {
    Llm(std::result::Result<Box<LlmResponse>, LlmError>),
    Condense(Result<Condensation>),
    /// The observations of the tool calls that ran together, in call order, and the
    /// checkpoints taken before and after them.
    Tools(Vec<(ActionEvent, Observation)>, Option<Box<step::Around>>),
}

struct InFlight {
    cancel: CancellationToken,
    future: BoxFuture<'static, Phase>,
    is_llm: bool,
    /// A pause cancels it (sub-agents pause with their parent).
    stops_on_pause: bool,
    /// The LLM call's retry announcements (recorded as `llm_retry` state updates).
    retries: Option<mpsc::UnboundedReceiver<tandem_llm::RetryNotice>>,
    /// The LLM call failed once and is being retried: a pause cancels it at once rather than
    /// waiting out the backoff.
    retrying: bool,
}

struct Actor {
    shared: Arc<Shared>,
    store: ConversationStore,
    log: EventLog,
    llm: Arc<dyn Llm>,
    /// The workspace's checkpoint store (none: actions are not checkpointed).
    checkpoints: Option<Arc<tandem_checkpoint::Store>>,
    tools: ToolRegistry,
    schemas: Vec<serde_json::Value>,
    context: AgentContext,
    context_warnings: Vec<String>,
    analyzer: RuleAnalyzer,
    secrets: SecretRegistry,
    /// The secrets' values and the host's known credentials.
    masker: Masker,
    /// The version of the host's known credentials `masker` was built with.
    credentials_seen: u64,
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
    /// The slots runs share with other conversations (none: runs never wait).
    gate: Option<Arc<crate::RunGate>>,
    /// What the current run holds of the gate.
    slot: queue::Slot,
}

fn shared_view<T>(shared: &Shared, f: impl FnOnce(&ConversationView) -> T) -> T {
    match shared.view.read() {
        Ok(g) => f(&g),
        Err(p) => f(&p.into_inner()),
    }
}

impl Actor {
    async fn run(mut self, mut rx: mpsc::UnboundedReceiver<Command>) {
        for w in std::mem::take(&mut self.context_warnings) {
            tracing::warn!(conversation = %self.shared.id, "{w}");
        }
        loop {
            while self.active && self.inflight.is_none() && !self.slot.is_waiting() {
                self.advance().await;
            }
            let mut inflight = self.inflight.take();
            let mut waiting = match std::mem::take(&mut self.slot) {
                queue::Slot::Waiting(w) => Some(w),
                other => {
                    self.slot = other;
                    None
                }
            };
            // Taken out so its branch and the step's future borrow different things.
            let mut retries = inflight.as_mut().and_then(|f| f.retries.take());
            tokio::select! {
                cmd = rx.recv() => {
                    if let Some(f) = inflight.as_mut() {
                        f.retries = retries;
                    }
                    self.inflight = inflight;
                    if let Some(w) = waiting {
                        self.slot = queue::Slot::Waiting(w);
                    }
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
                Some(notice) = async {
                    match retries.as_mut() {
                        Some(rx) => rx.recv().await,
                        None => std::future::pending().await,
                    }
                } => {
                    if let Some(f) = inflight.as_mut() {
                        f.retries = retries;
                    }
                    self.inflight = inflight;
                    if let Some(w) = waiting {
                        self.slot = queue::Slot::Waiting(w);
                    }
                    self.on_llm_retry(&notice);
                }
                change = async {
                    match waiting.as_mut() {
                        Some(w) => w.next().await,
                        None => std::future::pending().await,
                    }
                } => {
                    if let Some(f) = inflight.as_mut() {
                        f.retries = retries;
                    }
                    self.inflight = inflight;
                    if let Some(w) = waiting {
                        self.on_queue_move(w, change);
                    }
                }
                phase = async {
                    match inflight.as_mut() {
                        Some(f) => (&mut f.future).await,
                        None => std::future::pending().await,
                    }
                } => {
                    // A retry announced just before the call ended is still recorded.
                    while let Some(notice) = retries.as_mut().and_then(|rx| rx.try_recv().ok()) {
                        self.on_llm_retry(&notice);
                    }
                    if let Some(w) = waiting {
                        self.slot = queue::Slot::Waiting(w);
                    }
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
        self.refresh_masker(false);
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

    /// Rebuilds the masker from the conversation's secrets and the host's known credentials
    /// when the credentials changed, or always with `force` (the secrets changed).
    fn refresh_masker(&mut self, force: bool) {
        let known = crate::credentials::known_credentials();
        let version = known.version();
        if force || version != self.credentials_seen {
            self.credentials_seen = version;
            self.masker = self.secrets.masker_with(&known.values());
            if let Ok(mut published) = self.shared.masker.write() {
                *published = self.masker.clone();
            }
        }
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
}
