//! The conversation: an actor that owns the state and the event log of one conversation.
//!
//! Commands arrive on a channel ([`ConversationHandle`] sends them); the actor is the only
//! writer of state. Every event is persisted before it is broadcast or becomes visible to
//! readers. The run loop's slow parts (the LLM call, a tool) run as owned futures the actor
//! polls alongside its command channel, so pause, interrupt and new messages are handled while
//! a step is in flight.

mod actor;
pub mod branch;
mod client;
mod handle;
mod metered;
mod rebuild;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use tandem_llm::Llm;
use tandem_protocol::{AgentSpec, ConfirmationPolicy, Extra, Message, SecurityRisk};
use tokio::sync::oneshot;

pub use actor::{LLM_RETRY_KEY, QUEUE_KEY, split_edit_note};
pub use client::ConversationClient;
pub use handle::{ConversationHandle, ConversationView, RunState};

use crate::error::Result;
use crate::secrets::SecretSource;
use crate::tool::Tool;

/// How to create a conversation.
#[derive(Debug, Clone)]
pub struct ConversationOptions {
    /// Id (dashed UUID); a new one when `None`.
    pub id: Option<String>,
    /// The agent: LLM config (its key is never persisted), tools, prompt settings.
    pub agent: AgentSpec,
    /// The workspace directory (absolute).
    pub workspace: PathBuf,
    /// When actions wait for approval.
    pub confirmation_policy: ConfirmationPolicy,
    /// Steps per run before it stops.
    pub max_iterations: u32,
    /// Whether stuck loops are stopped.
    pub stuck_detection: bool,
    /// USD the agent's LLM may spend in this conversation before its run pauses (upstream's
    /// field, kept in the agent's metrics).
    pub max_budget_per_task: Option<f64>,
    /// What the conversation may spend (cost and tokens, every LLM) before its run pauses.
    pub budget: tandem_protocol::Budget,
    /// Initial secrets.
    pub secrets: Vec<(String, SecretSource)>,
    /// Free-form tags.
    pub tags: BTreeMap<String, String>,
    /// Fields kept in `meta.json` as given (e.g. the server's start request).
    pub meta_extra: Extra,
    /// Ask the LLM for a short title after the first message (else the message is cut short).
    pub autotitle: bool,
}

impl ConversationOptions {
    /// Options with upstream's defaults: never confirm, 500 iterations, stuck detection on.
    pub fn new(agent: AgentSpec, workspace: PathBuf) -> Self {
        Self {
            id: None,
            agent,
            workspace,
            confirmation_policy: ConfirmationPolicy::NeverConfirm,
            max_iterations: 500,
            stuck_detection: true,
            max_budget_per_task: None,
            budget: tandem_protocol::Budget::default(),
            autotitle: true,
            secrets: Vec::new(),
            tags: BTreeMap::new(),
            meta_extra: Extra::new(),
        }
    }
}

/// The live parts an agent runs with: what cannot be persisted.
#[derive(Clone)]
pub struct Runtime {
    /// The agent's LLM (built by the caller from the config plus a key from flags, env or
    /// the keyring).
    pub llm: Arc<dyn Llm>,
    /// The tools, fresh for this conversation (the terminal holds a shell).
    pub tools: Vec<Arc<dyn Tool>>,
    /// The workspace's checkpoint store: when set, a checkpoint is taken before and after
    /// every action of a tool that is not read-only, and recorded in the conversation's
    /// `checkpoints.jsonl` (who changed which paths, at which event).
    pub checkpoints: Option<Arc<tandem_checkpoint::Store>>,
    /// The slots runs share with other conversations (none: this one never waits). A run that
    /// finds every slot taken waits its turn, `running` but with `queued_ahead` in its state.
    pub run_gate: Option<Arc<crate::RunGate>>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("model", &self.llm.config().model)
            .finish_non_exhaustive()
    }
}

/// Entry points: create or open a conversation and get its handle.
#[derive(Debug)]
pub struct Conversation;

/// What the actor is asked to do. Each carries a reply channel.
#[derive(Debug)]
pub enum Command {
    /// Append a user message; start the loop if `run` and it is not running.
    SendMessage {
        /// The message.
        message: Message,
        /// Start running after appending.
        run: bool,
        /// Done.
        reply: oneshot::Sender<Result<()>>,
    },
    /// Start the loop (approves pending actions when waiting for confirmation).
    Run {
        /// Done, or `AlreadyRunning`.
        reply: oneshot::Sender<Result<()>>,
    },
    /// Stop after the in-flight step.
    Pause {
        /// Done.
        reply: oneshot::Sender<Result<()>>,
    },
    /// Cancel the in-flight LLM call or tool now.
    Interrupt {
        /// Done.
        reply: oneshot::Sender<Result<()>>,
    },
    /// Approve (and run) or reject the pending actions.
    RespondToConfirmation {
        /// Approve?
        accept: bool,
        /// Why not, for the model.
        reason: Option<String>,
        /// Done.
        reply: oneshot::Sender<Result<()>>,
    },
    /// Run one pending action with arguments the person edited, in its place; the other
    /// pending actions keep waiting for their own decision.
    ApproveEdited {
        /// The pending action's event id.
        action_id: String,
        /// The tool's arguments, as a model would give them.
        arguments: serde_json::Value,
        /// The edited action's risk as the rule analyzer rates it, or why nothing runs.
        reply: oneshot::Sender<Result<SecurityRisk>>,
    },
    /// Change the confirmation policy.
    SetConfirmationPolicy {
        /// The new policy.
        policy: ConfirmationPolicy,
        /// Done.
        reply: oneshot::Sender<Result<()>>,
    },
    /// Add or replace secrets.
    UpdateSecrets {
        /// Name and source of each.
        secrets: Vec<(String, SecretSource)>,
        /// Done.
        reply: oneshot::Sender<Result<()>>,
    },
    /// Set (or clear) the security analyzer configuration.
    SetSecurityAnalyzer {
        /// Upstream's analyzer JSON (`{"kind": "LLMSecurityAnalyzer"}`, ...), or `None`.
        analyzer: Option<serde_json::Value>,
        /// Done.
        reply: oneshot::Sender<Result<()>>,
    },
    /// Ask for the history to be condensed (records a `CondensationRequest`).
    Condense {
        /// Done.
        reply: oneshot::Sender<Result<()>>,
    },
    /// A generated title, applied only while the title is still `replaces` (the user may have
    /// renamed the conversation meanwhile). Sent by the conversation's own title task.
    #[doc(hidden)]
    AutoTitle {
        /// The generated title.
        title: String,
        /// The provisional title it replaces.
        replaces: String,
        /// The title calls, for the metrics.
        replies: Vec<tandem_llm::LlmResponse>,
    },
    /// Record a `ConversationStateUpdateEvent` (`key`, `value`) in the log, e.g. who drives
    /// the browser.
    RecordState {
        /// The key.
        key: String,
        /// The value (masked before it is recorded).
        value: serde_json::Value,
        /// Done.
        reply: oneshot::Sender<Result<()>>,
    },
    /// Set the budget (each limit validated); a run paused on the old one may run again.
    SetBudget {
        /// The new limits (unset: none).
        budget: tandem_protocol::Budget,
        /// Done, or which limit is not a positive number.
        reply: oneshot::Sender<Result<()>>,
    },
    /// Move the head to an event (`None`: the empty tree): the agent continues from there.
    Navigate {
        /// The event.
        event_id: Option<String>,
        /// Done; `NotFound` for an unknown event, `AlreadyRunning` while the agent runs.
        reply: oneshot::Sender<Result<()>>,
    },
    /// Set the title.
    SetTitle {
        /// The title.
        title: String,
        /// Done.
        reply: oneshot::Sender<Result<()>>,
    },
    /// Stop everything, release tools, save state; the actor ends.
    Close {
        /// Done.
        reply: oneshot::Sender<Result<()>>,
    },
}
