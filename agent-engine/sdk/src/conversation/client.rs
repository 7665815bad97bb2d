//! One interface for a conversation wherever it runs, modelled on upstream's
//! `BaseConversation`: [`ConversationHandle`] drives one in this process,
//! [`RemoteConversation`](crate::remote::RemoteConversation) one on an agent server. Code written
//! against [`ConversationClient`] (the CLI's follow loop) works with both, so a new control is
//! written once.

use std::future::Future;

use serde_json::Value;
use tandem_protocol::{ConfirmationPolicy, Event, ExecutionStatus, Message, SecurityRisk};
use tokio::sync::broadcast;

use super::handle::{ConversationHandle, RunState};
use crate::error::{Result, SdkError};
use crate::secrets::SecretSource;

/// What a local and a remote conversation both offer. Errors are [`SdkError`]s: a remote
/// conversation's arrive as [`SdkError::Remote`], except why a run does not start, which reads
/// the same for both: [`SdkError::AlreadyRunning`] while one is in progress,
/// [`SdkError::InvalidState`] when there is nothing to run or the conversation is broken.
pub trait ConversationClient: Send + Sync {
    /// Where the conversation's run history stands (see [`run_mark`](Self::run_mark)).
    type RunMark: Send + Sync;

    /// The conversation id (dashed UUID).
    fn id(&self) -> &str;

    /// The execution status as last seen.
    fn status(&self) -> ExecutionStatus;

    /// A copy of every persisted event seen, in log order.
    fn events(&self) -> Vec<Event>;

    /// Every event so far and a receiver of every later one (transient events included), with
    /// no gap and no duplicate.
    fn subscribe(&self) -> (Vec<Event>, broadcast::Receiver<Event>);

    /// The run history now: take it before starting a run, then
    /// [`wait_for_run_end`](Self::wait_for_run_end) waits for that run.
    fn run_mark(&self) -> Self::RunMark;

    /// Waits for a run that ends after `since` and returns the status it stopped in
    /// (`finished`, `paused`, `waiting_for_confirmation`, `error`, `stuck`, ...).
    fn wait_for_run_end(
        &self,
        since: &Self::RunMark,
    ) -> impl Future<Output = Result<ExecutionStatus>> + Send;

    /// Appends a user message; with `run`, starts the loop if it is not running.
    fn send_message(&self, message: Message, run: bool) -> impl Future<Output = Result<()>> + Send;

    /// Starts the loop without waiting for it, approving the actions that wait for
    /// confirmation. `AlreadyRunning` while a run is in progress.
    fn run(&self) -> impl Future<Output = Result<()>> + Send;

    /// Pauses: the in-flight step finishes, then the loop stops.
    fn pause(&self) -> impl Future<Output = Result<()>> + Send;

    /// Interrupts: cancels the in-flight LLM call or tool now.
    fn interrupt(&self) -> impl Future<Output = Result<()>> + Send;

    /// Approves (the pending actions run) or rejects them with a reason the model reads.
    fn respond_to_confirmation(
        &self,
        accept: bool,
        reason: Option<String>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Runs the pending action `action_id` with the person's `arguments` in place of the
    /// agent's, which starts a run; returns the edited action's risk as the rule analyzer rates
    /// it. Nothing runs when the arguments do not fit the tool (`InvalidArguments` locally).
    fn approve_edited(
        &self,
        action_id: &str,
        arguments: Value,
    ) -> impl Future<Output = Result<SecurityRisk>> + Send;

    /// Changes the confirmation policy.
    fn set_confirmation_policy(
        &self,
        policy: ConfirmationPolicy,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Sets (or clears) the security analyzer (upstream's JSON, `{"kind": "LLMSecurityAnalyzer"}`).
    fn set_security_analyzer(
        &self,
        analyzer: Option<Value>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Adds or replaces secrets.
    fn update_secrets(
        &self,
        secrets: Vec<(String, SecretSource)>,
    ) -> impl Future<Output = Result<()>> + Send;

    /// Asks for the history to be condensed.
    fn condense(&self) -> impl Future<Output = Result<()>> + Send;

    /// Sets the title.
    fn set_title(&self, title: String) -> impl Future<Output = Result<()>> + Send;

    /// Lets the conversation go: a local one stops its run and saves its state; a remote one
    /// stops its live stream (it stays on the server).
    fn close(&self) -> impl Future<Output = Result<()>> + Send;

    /// Starts a run (or joins the one in progress) and waits for it to end, as upstream's
    /// blocking `run()` does; returns the status it stopped in.
    fn run_to_end(&self) -> impl Future<Output = Result<ExecutionStatus>> + Send {
        async move {
            let mark = self.run_mark();
            match self.run().await {
                Ok(()) | Err(SdkError::AlreadyRunning) => {}
                Err(e) => return Err(e),
            }
            self.wait_for_run_end(&mark).await
        }
    }
}

impl ConversationClient for ConversationHandle {
    type RunMark = RunState;

    fn id(&self) -> &str {
        ConversationHandle::id(self)
    }

    fn status(&self) -> ExecutionStatus {
        ConversationHandle::status(self)
    }

    fn events(&self) -> Vec<Event> {
        ConversationHandle::events(self)
    }

    fn subscribe(&self) -> (Vec<Event>, broadcast::Receiver<Event>) {
        ConversationHandle::subscribe(self)
    }

    fn run_mark(&self) -> RunState {
        *self.run_state().borrow()
    }

    async fn wait_for_run_end(&self, since: &RunState) -> Result<ExecutionStatus> {
        let since = since.runs_ended;
        let mut runs = self.run_state();
        runs.wait_for(|r| !r.active && r.runs_ended > since)
            .await
            .map_err(|_| SdkError::Closed)?;
        Ok(ConversationHandle::status(self))
    }

    async fn send_message(&self, message: Message, run: bool) -> Result<()> {
        ConversationHandle::send_message(self, message, run).await
    }

    async fn run(&self) -> Result<()> {
        ConversationHandle::run(self).await
    }

    async fn pause(&self) -> Result<()> {
        ConversationHandle::pause(self).await
    }

    async fn interrupt(&self) -> Result<()> {
        ConversationHandle::interrupt(self).await
    }

    async fn respond_to_confirmation(&self, accept: bool, reason: Option<String>) -> Result<()> {
        ConversationHandle::respond_to_confirmation(self, accept, reason).await
    }

    async fn approve_edited(&self, action_id: &str, arguments: Value) -> Result<SecurityRisk> {
        ConversationHandle::approve_edited(self, action_id, arguments).await
    }

    async fn set_confirmation_policy(&self, policy: ConfirmationPolicy) -> Result<()> {
        ConversationHandle::set_confirmation_policy(self, policy).await
    }

    async fn set_security_analyzer(&self, analyzer: Option<Value>) -> Result<()> {
        ConversationHandle::set_security_analyzer(self, analyzer).await
    }

    async fn update_secrets(&self, secrets: Vec<(String, SecretSource)>) -> Result<()> {
        ConversationHandle::update_secrets(self, secrets).await
    }

    async fn condense(&self) -> Result<()> {
        ConversationHandle::condense(self).await
    }

    async fn set_title(&self, title: String) -> Result<()> {
        ConversationHandle::set_title(self, title).await
    }

    async fn close(&self) -> Result<()> {
        ConversationHandle::close(self).await
    }
}
