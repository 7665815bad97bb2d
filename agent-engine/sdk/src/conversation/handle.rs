//! The handle callers hold: commands to the actor, and read access to what it has persisted.

use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock, RwLockReadGuard};

use tandem_protocol::{
    ConfirmationPolicy, ConversationState, Event, ExecutionStatus, Message, SecurityRisk,
};
use tokio::sync::{broadcast, mpsc, oneshot, watch};

use super::Command;
use crate::error::{Result, SdkError};
use crate::persistence::ConversationMeta;
use crate::secrets::SecretSource;

/// What readers see: the state, the metadata and every persisted event, in order.
#[derive(Debug)]
pub struct ConversationView {
    /// The state (secrets redacted).
    pub state: ConversationState,
    /// The metadata (title, timestamps).
    pub meta: ConversationMeta,
    /// Every event, in log order.
    pub events: Vec<Event>,
    /// Each event's JSON as it is on disk (the file read at open, or the bytes written since),
    /// in the same order: servers send these instead of serializing every event per request.
    pub(super) json: Vec<Arc<[u8]>>,
}

impl ConversationView {
    /// The JSON of `events[index]` as persisted.
    pub fn event_json(&self, index: usize) -> Option<&[u8]> {
        self.json.get(index).map(|j| &j[..])
    }
}

/// Whether the run loop is alive, and how many runs have ended (a server sends a `full_state`
/// frame each time this count grows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunState {
    /// The loop is running.
    pub active: bool,
    /// Runs that have ended since the conversation was opened.
    pub runs_ended: u64,
}

pub(super) struct Shared {
    pub(super) id: String,
    pub(super) dir: PathBuf,
    pub(super) commands: mpsc::UnboundedSender<Command>,
    pub(super) view: RwLock<ConversationView>,
    pub(super) events_tx: broadcast::Sender<Event>,
    pub(super) runs: watch::Sender<RunState>,
    /// The masker events are masked with (the conversation's secrets and the host's known
    /// credentials), for recordings kept beside the events.
    pub(super) masker: RwLock<crate::secrets::Masker>,
}

/// A cheap, cloneable handle to a conversation's actor.
#[derive(Clone)]
pub struct ConversationHandle {
    pub(super) shared: Arc<Shared>,
}

impl std::fmt::Debug for ConversationHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConversationHandle")
            .field("id", &self.shared.id)
            .finish()
    }
}

impl ConversationHandle {
    /// The conversation id (dashed UUID).
    pub fn id(&self) -> &str {
        &self.shared.id
    }

    /// The masker the conversation's events are masked with now: anything recorded beside
    /// them (replay lanes) masks with it too.
    pub fn masker(&self) -> crate::secrets::Masker {
        self.shared
            .masker
            .read()
            .map(|m| m.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    /// The conversation's directory.
    pub fn dir(&self) -> &Path {
        &self.shared.dir
    }

    /// Read access to state, metadata and events. Hold it briefly: the actor waits for it.
    pub fn view(&self) -> RwLockReadGuard<'_, ConversationView> {
        match self.shared.view.read() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// A copy of the state.
    pub fn state(&self) -> ConversationState {
        self.view().state.clone()
    }

    /// The execution status.
    pub fn status(&self) -> ExecutionStatus {
        self.view().state.execution_status
    }

    /// A copy of every event.
    pub fn events(&self) -> Vec<Event> {
        self.view().events.clone()
    }

    /// Every event so far and a receiver of every later one, with no gap and no duplicate.
    /// The receiver also gets transient events (streaming deltas).
    pub fn subscribe(&self) -> (Vec<Event>, broadcast::Receiver<Event>) {
        let view = self.view();
        let rx = self.shared.events_tx.subscribe();
        (view.events.clone(), rx)
    }

    /// A receiver of live events only.
    pub fn subscribe_live(&self) -> broadcast::Receiver<Event> {
        self.shared.events_tx.subscribe()
    }

    /// Watches the run loop starting and ending.
    pub fn run_state(&self) -> watch::Receiver<RunState> {
        self.shared.runs.subscribe()
    }

    /// Waits until the run loop is not active.
    pub async fn wait_until_stopped(&self) {
        let mut rx = self.run_state();
        // The sender lives as long as the actor; when it is gone nothing runs.
        let _ = rx.wait_for(|s| !s.active).await;
    }

    async fn call<T>(&self, make: impl FnOnce(oneshot::Sender<Result<T>>) -> Command) -> Result<T> {
        let (tx, rx) = oneshot::channel();
        self.shared
            .commands
            .send(make(tx))
            .map_err(|_| SdkError::Closed)?;
        rx.await.map_err(|_| SdkError::Closed)?
    }

    /// Appends a user message; with `run`, starts the loop if it is not running.
    pub async fn send_message(&self, message: Message, run: bool) -> Result<()> {
        self.call(|reply| Command::SendMessage {
            message,
            run,
            reply,
        })
        .await
    }

    /// Starts the loop; approves pending actions. `AlreadyRunning` while it runs.
    pub async fn run(&self) -> Result<()> {
        self.call(|reply| Command::Run { reply }).await
    }

    /// Pauses: the in-flight step finishes, then the loop stops.
    pub async fn pause(&self) -> Result<()> {
        self.call(|reply| Command::Pause { reply }).await
    }

    /// Interrupts: cancels the in-flight LLM call or tool (killing its processes).
    pub async fn interrupt(&self) -> Result<()> {
        self.call(|reply| Command::Interrupt { reply }).await
    }

    /// Approves (and runs) or rejects the actions waiting for confirmation.
    pub async fn respond_to_confirmation(
        &self,
        accept: bool,
        reason: Option<String>,
    ) -> Result<()> {
        self.call(|reply| Command::RespondToConfirmation {
            accept,
            reason,
            reply,
        })
        .await
    }

    /// Approves one pending action with edited arguments: they are validated as a model's
    /// call is (`InvalidArguments` naming the field, and nothing changes), the edited action
    /// runs once in place of the original, whatever the policy, and its observation answers
    /// the original action with a note saying what ran. The other pending actions keep
    /// waiting. `NotPending` when no action with this id waits. Returns the edited action's
    /// risk as the rule analyzer rates it.
    pub async fn approve_edited(
        &self,
        action_id: &str,
        arguments: serde_json::Value,
    ) -> Result<SecurityRisk> {
        self.call(|reply| Command::ApproveEdited {
            action_id: action_id.to_owned(),
            arguments,
            reply,
        })
        .await
    }

    /// Changes the confirmation policy.
    pub async fn set_confirmation_policy(&self, policy: ConfirmationPolicy) -> Result<()> {
        self.call(|reply| Command::SetConfirmationPolicy { policy, reply })
            .await
    }

    /// Adds or replaces secrets.
    pub async fn update_secrets(&self, secrets: Vec<(String, SecretSource)>) -> Result<()> {
        self.call(|reply| Command::UpdateSecrets { secrets, reply })
            .await
    }

    /// Sets or clears the security analyzer configuration.
    pub async fn set_security_analyzer(&self, analyzer: Option<serde_json::Value>) -> Result<()> {
        self.call(|reply| Command::SetSecurityAnalyzer { analyzer, reply })
            .await
    }

    /// Asks for the history to be condensed.
    pub async fn condense(&self) -> Result<()> {
        self.call(|reply| Command::Condense { reply }).await
    }

    /// Records a `ConversationStateUpdateEvent` of `key` and `value` (secrets masked), for
    /// what happens beside the agent, like a person taking over the browser.
    pub async fn record_state(&self, key: &str, value: serde_json::Value) -> Result<()> {
        let key = key.to_owned();
        self.call(|reply| Command::RecordState { key, value, reply })
            .await
    }

    /// Moves the conversation's head to `event_id` (`None`: the empty tree): the agent's next
    /// run sees the branch from the root to that event; every branch stays in the log.
    pub async fn navigate(&self, event_id: Option<String>) -> Result<()> {
        self.call(|reply| Command::Navigate { event_id, reply })
            .await
    }

    /// Sets what the conversation may spend before its run pauses. `Config` naming
    /// a limit that is not a positive number, and nothing changes.
    pub async fn set_budget(&self, budget: tandem_protocol::Budget) -> Result<()> {
        self.call(|reply| Command::SetBudget { budget, reply })
            .await
    }

    /// The conversation's budget: its own limits, and upstream's `max_budget_per_task` of
    /// the agent's LLM as the cost limit when it has none.
    pub fn budget(&self) -> tandem_protocol::Budget {
        super::actor::budget_of(&self.view().state)
    }

    /// Sets the title.
    pub async fn set_title(&self, title: String) -> Result<()> {
        self.call(|reply| Command::SetTitle { title, reply }).await
    }

    /// Stops the run, releases the tools and saves the state. Later calls get `Closed`.
    pub async fn close(&self) -> Result<()> {
        match self.call(|reply| Command::Close { reply }).await {
            Err(SdkError::Closed) => Ok(()),
            other => other,
        }
    }
}
