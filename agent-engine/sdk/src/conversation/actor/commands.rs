//! The actor's answers to commands: messages, runs, pauses, interrupts, approvals and settings.

use std::sync::Arc;

use tandem_protocol::{
    ActionEvent, CondensationRequest, Event, EventBase, ExecutionStatus, Extra, InterruptEvent,
    Message, MessageEvent, PauseEvent, Role, Source, SystemPromptEvent, TextContent,
    UserRejectObservation,
};
use tokio_util::sync::CancellationToken;

use super::{Actor, shared_view};
use crate::agent::tool_definitions_json;
use crate::context::{PromptVars, render_system_prompt};
use crate::conversation::Command;
use crate::conversation::metered::MeteredLlm;
use crate::conversation::rebuild::title_from;
use crate::error::{Result, SdkError};

impl Actor {
    /// Moves the head; pending approvals and queued actions of the old head are dropped.
    fn navigate(&mut self, event_id: Option<String>) -> Result<()> {
        if self.active {
            return Err(SdkError::AlreadyRunning);
        }
        if let Some(id) = &event_id {
            let known = shared_view(&self.shared, |v| {
                v.events
                    .iter()
                    .any(|e| e.id() == id && !matches!(e, Event::StateUpdate(_)))
            });
            if !known {
                return Err(SdkError::NotFound(format!("event {id}")));
            }
        }
        self.queue.clear();
        self.awaiting.clear();
        let value = event_id.map_or(serde_json::Value::Null, serde_json::Value::String);
        let leaf = self.leaf();
        self.emit(Event::state_update(
            crate::conversation::branch::LEAF_KEY,
            value,
            leaf,
        ));
        self.set_status(ExecutionStatus::Idle);
        self.save_state();
        Ok(())
    }

    pub(super) async fn handle(&mut self, cmd: Command) {
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
            Command::SetBudget { budget, reply } => {
                let _ = reply.send(self.set_budget(budget));
            }
            Command::Run { reply } => {
                let _ = reply.send(self.start_run());
            }
            Command::Pause { reply } => {
                if self.active {
                    self.pause_requested = true;
                    if let Some(f) = self.inflight.as_ref().filter(|f| f.stops_on_pause) {
                        // Its observation still arrives, saying where it stopped.
                        f.cancel.cancel();
                    }
                    if self
                        .inflight
                        .as_ref()
                        .is_some_and(|f| f.is_llm && f.retrying)
                    {
                        // A failed LLM call waiting to be tried again stops now; the cancelled
                        // call never becomes an event and the next run starts the step afresh.
                        self.inflight = None;
                    }
                    let leaf = self.leaf();
                    self.emit(Event::Pause(PauseEvent::new(Source::User, leaf)));
                    self.set_status(ExecutionStatus::Paused);
                    if self.slot.is_waiting() {
                        // It never started: it leaves the queue at once.
                        self.end_run(Some(ExecutionStatus::Paused));
                    }
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
                self.refresh_masker(true);
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
            Command::RecordState { key, value, reply } => {
                let masked = serde_json::to_string(&value)
                    .map(|text| self.masker.mask(&text))
                    .ok()
                    .and_then(|text| serde_json::from_str(&text).ok())
                    .unwrap_or(value);
                let leaf = self.leaf();
                self.emit(Event::state_update(&key, masked, leaf));
                let _ = reply.send(Ok(()));
            }
            Command::Navigate { event_id, reply } => {
                let _ = reply.send(self.navigate(event_id));
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
    pub(super) fn check_can_run(&self) -> Result<()> {
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
        if let Some(why) = self.budget_refusal() {
            return Err(SdkError::InvalidState(why));
        }
        Ok(())
    }

    /// Starts the loop on what is queued.
    pub(super) fn begin_run(&mut self) {
        self.active = true;
        self.pause_requested = false;
        self.iterations = 0;
        self.set_status(ExecutionStatus::Running);
        self.shared.runs.send_modify(|r| r.active = true);
        if let Some(gate) = self.gate.clone() {
            self.take_slot(&gate);
        }
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
}
