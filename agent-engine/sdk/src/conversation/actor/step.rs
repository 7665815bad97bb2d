//! The run loop: each step starts one slow part (condensing, an LLM call or a tool) and
//! handles its result when it is done.

use std::sync::Arc;

use futures::FutureExt;
use tandem_llm::{Llm, LlmError, LlmRequest, LlmResponse};
use tandem_protocol::api::CheckpointAuthor;
use tandem_protocol::{
    Action, ActionEvent, Condensation, ErrorClassification, Event, EventBase, ExecutionStatus,
    Extra, Message, MessageEvent, Observation, ObservationEvent, Source, StreamingDeltaEvent,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::edit::note_edit;
use super::{Actor, InFlight, Phase, shared_view};
use crate::agent::{agent_error, llm_view, propose_actions};
use crate::conversation::branch::active_branch;
use crate::error::Result;
use crate::secrets::Masker;
use crate::stuck::StuckDetector;
use crate::tool::ToolContext;

/// The checkpoints taken around a batch of actions (`None` where taking one failed: the
/// failure is logged and the agent goes on).
pub(super) struct Around {
    before: Option<tandem_checkpoint::Taken>,
    after: Option<tandem_checkpoint::Taken>,
}

/// Takes a checkpoint off the actor's thread: before an action, or after it when `before` is
/// the checkpoint before it (its changes, in the workspace and outside, are then the action's).
async fn take_checkpoint(
    store: &Arc<tandem_checkpoint::Store>,
    before: Option<tandem_checkpoint::Taken>,
) -> Option<tandem_checkpoint::Taken> {
    let store = Arc::clone(store);
    let take = move || match &before {
        Some(before) => store.take_after(before, "after an action"),
        None => store.take("before an action"),
    };
    match tokio::task::spawn_blocking(take).await {
        Ok(Ok(taken)) => Some(taken),
        Ok(Err(e)) => {
            tracing::warn!("checkpoint not taken: {e}");
            None
        }
        Err(e) => {
            tracing::warn!("checkpoint not taken: {e}");
            None
        }
    }
}

/// The state-update key of an LLM call's retry announcement.
pub const LLM_RETRY_KEY: &str = "llm_retry";

impl Actor {
    /// Starts the next slow part, or ends the run.
    pub(super) async fn advance(&mut self) {
        if self.broken.is_some() {
            self.end_run(Some(ExecutionStatus::Error));
            return;
        }
        if let Some(action) = self.queue.pop_front() {
            self.start_tools(action).await;
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
            let reason = shared_view(&self.shared, |v| {
                StuckDetector.check(&active_branch(&v.events))
            });
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
        if let Some(reached) = self.budget_reached() {
            // Not an error: the run pauses, saying what was spent; raising the budget lets it
            // run again.
            let leaf = self.leaf();
            self.emit(Event::state_update(
                tandem_protocol::Budget::REACHED_KEY,
                reached,
                leaf,
            ));
            self.end_run(Some(ExecutionStatus::Paused));
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
            let too_long =
                self.auto_condense && self.condenser.should_condense(&active_branch(&v.events));
            (v.events.len(), requested, too_long)
        });
        (requested || too_long || self.overflowed) && self.condense_stalled_at != Some(len)
    }

    pub(super) fn start_condense(&mut self) {
        let events = shared_view(&self.shared, |v| active_branch(&v.events).into_owned());
        let condenser = self.condenser.clone();
        let cancel = CancellationToken::new();
        let token = cancel.clone();
        let future =
            async move { Phase::Condense(condenser.condense(&events, token).await) }.boxed();
        self.inflight = Some(InFlight {
            cancel,
            future,
            is_llm: true,
            stops_on_pause: false,
            retries: None,
            retrying: false,
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
        let messages = shared_view(&self.shared, |v| llm_view(&active_branch(&v.events)));
        self.refresh_masker(false);
        let messages = mask_messages(messages, &self.masker);
        let on_delta = self.llm.config().stream.then(|| self.delta_forwarder());
        let (on_retry, retries) = mpsc::unbounded_channel();
        let request = LlmRequest {
            messages,
            tools: self.schemas.clone(),
            prompt_cache_key: Some(self.shared.id.clone()),
            on_delta,
            on_retry: Some(on_retry),
        };
        let cancel = CancellationToken::new();
        let llm = self.llm.clone();
        let token = cancel.clone();
        let future =
            async move { Phase::Llm(llm.completion(request, token).await.map(Box::new)) }.boxed();
        self.inflight = Some(InFlight {
            cancel,
            future,
            is_llm: true,
            stops_on_pause: false,
            retries: Some(retries),
            retrying: false,
        });
    }

    /// Records a retry of the step's LLM call as an `llm_retry` state update (a
    /// `ConversationStateUpdateEvent`, which upstream clients take as a state field they do not
    /// use): what failed, which retry of how many, and the wait before it. A pause from now on
    /// cancels the call at once.
    pub(super) fn on_llm_retry(&mut self, notice: &tandem_llm::RetryNotice) {
        if let Some(f) = self.inflight.as_mut().filter(|f| f.is_llm) {
            f.retrying = true;
        }
        let value = serde_json::json!({
            "model": self.llm.config().model,
            "code": notice.error.code(),
            "message": notice.error.to_string(),
            "retry": notice.retry,
            "max_retries": notice.max_retries,
            "wait_seconds": notice.wait.as_secs_f64(),
        });
        let leaf = self.leaf();
        self.emit(Event::state_update(LLM_RETRY_KEY, value, leaf));
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

    /// Starts the next queued action. A parallel-safe one (a sub-agent task) takes the
    /// parallel-safe actions queued right after it along: they run together, and their
    /// observations are recorded in call order once all are done.
    async fn start_tools(&mut self, first: ActionEvent) {
        let parallel = |tools: &crate::tool::ToolRegistry, a: &ActionEvent| {
            tools.get(&a.tool_name).is_some_and(|t| t.parallel_safe())
        };
        let mut batch = vec![first];
        if parallel(&self.tools, &batch[0]) {
            while self.queue.front().is_some_and(|a| parallel(&self.tools, a)) {
                batch.extend(self.queue.pop_front());
            }
        }
        let cancel = CancellationToken::new();
        let mut stops_on_pause = false;
        // Checkpoint around the batch unless every tool in it is read-only.
        let checkpoints = self.checkpoints.clone().filter(|_| {
            batch.iter().any(|a| {
                self.tools
                    .get(&a.tool_name)
                    .is_some_and(|t| !t.definition().annotations.read_only)
            })
        });
        let mut calls = Vec::with_capacity(batch.len());
        for action_event in batch {
            let (Some(action), Some(tool)) = (
                action_event.action.clone(),
                self.tools.get(&action_event.tool_name).cloned(),
            ) else {
                continue;
            };
            stops_on_pause |= tool.stops_on_pause();
            let command = match &action {
                Action::Terminal(t) => t.command.clone(),
                _ => String::new(),
            };
            let (env, errors) = if command.is_empty() || self.secrets.is_empty() {
                (Default::default(), Vec::new())
            } else {
                self.secrets.env_for(&command, &self.http).await
            };
            self.refresh_masker(true);
            for e in errors {
                tracing::warn!(conversation = %self.shared.id, "{e}");
            }
            let ctx = ToolContext {
                cancel: cancel.clone(),
                working_dir: self.workspace.clone(),
                conversation_dir: Some(self.shared.dir.clone()),
                env,
                masker: self.masker.clone(),
            };
            calls.push(async move {
                let obs = tool.execute(&action, ctx).await;
                (action_event, obs)
            });
        }
        if calls.is_empty() {
            return;
        }
        let future = async move {
            let Some(store) = checkpoints else {
                return Phase::Tools(futures::future::join_all(calls).await, None);
            };
            let before = take_checkpoint(&store, None).await;
            let results = futures::future::join_all(calls).await;
            let after = take_checkpoint(&store, before.clone()).await;
            Phase::Tools(results, Some(Box::new(Around { before, after })))
        }
        .boxed();
        self.inflight = Some(InFlight {
            cancel,
            future,
            is_llm: false,
            stops_on_pause,
            retries: None,
            retrying: false,
        });
    }

    pub(super) async fn on_phase_done(&mut self, phase: Phase) {
        match phase {
            Phase::Llm(Ok(response)) => {
                self.overflowed = false;
                self.on_llm_response(*response)
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
                    user_action: if matches!(
                        e,
                        LlmError::Auth { .. }
                            | LlmError::Config(_)
                            | LlmError::Unreachable { .. }
                            | LlmError::BadRequest { status: 404, .. }
                    ) {
                        "fix_config".into()
                    } else {
                        "retry".into()
                    },
                    error_id: None,
                };
                self.conversation_error(e.code(), e.to_string(), classification);
                self.end_run(Some(ExecutionStatus::Error));
            }
            Phase::Tools(results, around) => {
                let mut finished = false;
                let first_action = results.first().map(|(a, _)| a.clone());
                let mut first_observation = None;
                for (action, observation) in results {
                    let (done, id) = self.record_observation(action, observation);
                    finished |= done;
                    first_observation = first_observation.or(id);
                }
                if let (Some(around), Some(action)) = (around, first_action) {
                    self.record_checkpoints(*around, &action, first_observation);
                }
                self.after_observations(finished);
            }
        }
    }

    fn on_llm_response(&mut self, response: LlmResponse) {
        let (usage_id, model) = (
            self.llm.config().usage_id.clone(),
            self.llm.config().model.clone(),
        );
        self.record_metrics(&usage_id, &model, &response);
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
                        error.to_string(),
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

    /// Records the checkpoints taken around an action: the one before at the action (the
    /// changes in it since the last checkpoint are someone else's), the one after at its
    /// observation (the changes are the action's).
    fn record_checkpoints(
        &self,
        around: Around,
        action: &ActionEvent,
        observation: Option<String>,
    ) {
        let log = tandem_checkpoint::RecordLog::new(&self.shared.dir);
        let record = |taken: &tandem_checkpoint::Taken, event: &str, author, tool| {
            if let Err(e) = log.append(taken, event, author, tool) {
                tracing::warn!(conversation = %self.shared.id, "checkpoint not recorded: {e}");
            }
        };
        if let Some(before) = &around.before {
            record(before, &action.base.id, CheckpointAuthor::Person, None);
        }
        if let (Some(after), Some(observation)) = (&around.after, observation) {
            record(
                after,
                &observation,
                CheckpointAuthor::Agent,
                Some(action.tool_name.clone()),
            );
        }
    }

    /// Records a tool's observation; true when the tool was `finish`, and the observation's id.
    fn record_observation(
        &mut self,
        action: ActionEvent,
        mut observation: Observation,
    ) -> (bool, Option<String>) {
        if let Some(headline) = self.edited.remove(&action.base.id) {
            note_edit(&mut observation, &headline);
        }
        if let Some(content) = observation.content_mut() {
            self.masker.mask_content(content);
        } else if let Observation::Unknown(raw) = &mut observation {
            // A custom tool's observation: every string in it may carry a secret.
            self.masker.mask_json(raw);
        }
        let finished = matches!(action.action, Some(Action::Finish(_)));
        let id = self.emit(Event::Observation(ObservationEvent {
            base: EventBase::new(Source::Environment, Some(action.base.id.clone())),
            tool_name: action.tool_name.clone(),
            tool_call_id: action.tool_call_id.clone(),
            observation,
            action_id: action.base.id.clone(),
            extended_content: Vec::new(),
            extra: Extra::new(),
        }));
        (finished, id)
    }

    /// Ends the run after `finish` (what is still queued is not run), or after a pause.
    fn after_observations(&mut self, finished: bool) {
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

    pub(super) fn end_run(&mut self, status: Option<ExecutionStatus>) {
        if let Some(s) = status {
            self.set_status(s);
        }
        self.active = false;
        self.pause_requested = false;
        self.inflight = None;
        self.release_slot();
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
