//! One gateway turn: start a conversation (or continue one) with the user's message, wait for
//! the run, and read the final answer and the tokens the turn used.

use std::sync::Arc;

use axum::http::StatusCode;
use serde_json::json;
use tandem_protocol::{
    AgentSpec, ConversationErrorEvent, ConversationState, Event, ExecutionStatus, LlmConfig,
    Message, Role, Source, StartConversationRequest,
};

use super::GatewayError;
use super::input::Ask;
use super::retention::{InUse, Retained, TAG};
use crate::AppState;
use crate::info::final_response;
use crate::registry::Live;

/// Token counts summed over the conversation's LLMs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Prompt tokens.
    pub prompt: u64,
    /// Completion tokens.
    pub completion: u64,
    /// Prompt tokens read from the cache.
    pub cached: u64,
    /// Reasoning tokens.
    pub reasoning: u64,
}

impl Tokens {
    fn of(state: &ConversationState) -> Self {
        let mut t = Self::default();
        for m in state.stats.usage_to_metrics.values() {
            if let Some(u) = &m.accumulated_token_usage {
                t.prompt += u.prompt_tokens;
                t.completion += u.completion_tokens;
                t.cached += u.cache_read_tokens;
                t.reasoning += u.reasoning_tokens;
            }
        }
        t
    }

    fn since(self, before: Self) -> Self {
        Self {
            prompt: self.prompt.saturating_sub(before.prompt),
            completion: self.completion.saturating_sub(before.completion),
            cached: self.cached.saturating_sub(before.cached),
            reasoning: self.reasoning.saturating_sub(before.reasoning),
        }
    }
}

/// The agent's answer to a turn.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The final text.
    pub text: String,
    /// Tokens this turn used.
    pub usage: Tokens,
}

/// A turn whose run has started. The wait for its run (bounded by `gateway_timeout`) is
/// already a task of its own, so nothing the client does can leave the run unbounded.
pub struct Turn {
    /// The conversation.
    pub live: Arc<Live>,
    /// Its dashed id.
    pub id: String,
    from: usize,
    waiter: tokio::task::JoinHandle<Result<Answer, GatewayError>>,
}

impl std::fmt::Debug for Turn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Turn")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Turn {
    /// The turn's events so far (from its message on) and a receiver of the later ones.
    pub fn subscribe(&self) -> (Vec<Event>, tokio::sync::broadcast::Receiver<Event>) {
        let (events, rx) = self.live.handle.subscribe();
        (events.into_iter().skip(self.from).collect(), rx)
    }
}

/// A turn being waited for.
struct Running {
    live: Arc<Live>,
    id: String,
    from: usize,
    before: Tokens,
    _in_use: InUse,
}

/// Where a turn runs.
#[derive(Debug)]
pub enum Target {
    /// This existing conversation.
    Existing(String),
    /// A new conversation (with this id when given).
    New(Option<String>),
}

/// A conversation id from a header or response id; 400 naming `param` otherwise.
pub fn parse_id(raw: &str, param: &str) -> Result<String, GatewayError> {
    uuid::Uuid::parse_str(raw.trim())
        .map(|u| u.hyphenated().to_string())
        .map_err(|_| {
            GatewayError::invalid(
                format!("`{raw}` is not a conversation id (a UUID)."),
                Some(param),
            )
        })
}

/// Starts the turn: the message is sent, the agent runs, and the wait for the run begins. All
/// of it is a task of its own: a client that goes away while the turn starts (its request
/// dropped) cannot leave a run that the gateway's timeout never stops.
pub async fn start(
    state: &AppState,
    llm: LlmConfig,
    ask: Ask,
    target: Target,
) -> Result<Turn, GatewayError> {
    let st = state.clone();
    tokio::spawn(async move {
        let running = begin(&st, llm, ask, target).await?;
        let (live, id, from) = (Arc::clone(&running.live), running.id.clone(), running.from);
        let waiter = tokio::spawn(async move { wait(&st, running).await });
        Ok(Turn {
            live,
            id,
            from,
            waiter,
        })
    })
    .await
    .unwrap_or_else(|e| Err(internal(&e)))
}

/// The error of a gateway task that failed.
fn internal(e: &tokio::task::JoinError) -> GatewayError {
    GatewayError::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("The gateway's task for the run failed: {e}"),
        "server_error",
        "internal_error",
    )
}

async fn begin(
    state: &AppState,
    llm: LlmConfig,
    ask: Ask,
    target: Target,
) -> Result<Running, GatewayError> {
    let (live, made) = match target {
        Target::Existing(id) => {
            let live = state.registry.get(&id).await?;
            crate::move_routes::check_dir(live.handle.dir())?;
            (live, false)
        }
        Target::New(id) => {
            let mut agent = AgentSpec::default_for(llm);
            if let Some(system) = &ask.system {
                agent.agent_context = Some(json!({"system_message_suffix": system}));
            }
            let start = StartConversationRequest {
                agent,
                workspace: None,
                conversation_id: id,
                confirmation_policy: None,
                security_analyzer: None,
                initial_message: None,
                max_iterations: None,
                stuck_detection: None,
                secrets: None,
                tags: Some([(TAG.0.to_owned(), TAG.1.to_owned())].into_iter().collect()),
                // A title costs an LLM call the client never sees: only when asked.
                extra: [("autotitle".to_owned(), json!(ask.autotitle))]
                    .into_iter()
                    .collect(),
            };
            let (live, _) = state.registry.create(start).await?;
            (live, true)
        }
    };
    let id = crate::info_id(live.handle.id());
    let Some(in_use) = Retained::use_conversation(state, &id, made) else {
        return Err(GatewayError::new(
            StatusCode::NOT_FOUND,
            format!(
                "The conversation {id} is being deleted (unused past the gateway's retention)."
            ),
            "invalid_request_error",
            "conversation_not_found",
        ));
    };
    let (from, before) = {
        let view = live.handle.view();
        (view.events.len(), Tokens::of(&view.state))
    };
    let message = Message::new(Role::User, ask.content);
    if let Err(e) = crate::conversations::send(&live, message, true).await {
        drop(in_use);
        if made {
            Retained::forget(state, &id);
            if let Err(d) = state.registry.delete(&id).await {
                tracing::warn!(conversation = %id, "deleting a failed gateway conversation: {d}");
            }
            return Err(e.into());
        }
        return Err(GatewayError::from(e).in_conversation(&id));
    }
    if made {
        // Over the count limit, the least recently used idle ones go now.
        let st = state.clone();
        tokio::spawn(async move { Retained::sweep(&st).await });
    }
    Ok(Running {
        live,
        id,
        from,
        before,
        _in_use: in_use,
    })
}

/// Waits for the turn's run and reads its answer; a run past `gateway_timeout` is
/// interrupted (504). The wait is a task of its own, so a client that goes away does not
/// cancel it: the run still ends within the timeout and the conversation is released after.
pub async fn finish(turn: Turn) -> Result<Answer, GatewayError> {
    turn.waiter.await.unwrap_or_else(|e| Err(internal(&e)))
}

async fn wait(state: &AppState, turn: Running) -> Result<Answer, GatewayError> {
    let waited = tokio::time::timeout(
        state.config.gateway_timeout,
        turn.live.handle.wait_until_stopped(),
    )
    .await;
    if waited.is_err() {
        let _ = turn.live.handle.interrupt().await;
        return Err(GatewayError::new(
            StatusCode::GATEWAY_TIMEOUT,
            format!(
                "The agent did not finish within {} seconds.",
                state.config.gateway_timeout.as_secs()
            ),
            "server_error",
            "timeout",
        )
        .in_conversation(&turn.id));
    }
    answer(&turn).map_err(|e| e.in_conversation(&turn.id))
}

fn answer(turn: &Running) -> Result<Answer, GatewayError> {
    let view = turn.live.handle.view();
    let events = view.events.get(turn.from..).unwrap_or(&[]);
    let usage = Tokens::of(&view.state).since(turn.before);
    let text = final_response(events);
    let status = view.state.execution_status;
    if status == ExecutionStatus::Error
        || status == ExecutionStatus::Stuck
        || (text.is_empty() && status != ExecutionStatus::Finished)
    {
        let detail = events.iter().rev().find_map(|e| match e {
            Event::ConversationError(ConversationErrorEvent { detail, .. }) => Some(detail.clone()),
            Event::AgentError(a) if a.base.source == Source::Agent => Some(a.error.clone()),
            _ => None,
        });
        let llm_code = events.iter().rev().find_map(|e| match e {
            Event::ConversationError(ConversationErrorEvent { code, .. }) => Some(code.as_str()),
            _ => None,
        });
        let (http, kind, code) = match status {
            ExecutionStatus::Paused | ExecutionStatus::WaitingForConfirmation => {
                (StatusCode::CONFLICT, "server_error", "agent_stopped")
            }
            _ => llm_failure(llm_code),
        };
        return Err(GatewayError::new(
            http,
            detail.unwrap_or_else(|| {
                format!(
                    "The agent stopped with status `{}` without an answer.",
                    status.as_str()
                )
            }),
            kind,
            code,
        ));
    }
    Ok(Answer { text, usage })
}

/// The status, OpenAI error type and code of a run that failed with the conversation error
/// `code`: what a client can act on (wait and retry, shorten the prompt) keeps its own status;
/// a provider that refused the profile's key, model or address is the gateway's upstream
/// failing (502), never the client's own key (401) or request (400).
fn llm_failure(code: Option<&str>) -> (StatusCode, &'static str, &'static str) {
    match code {
        Some("LLMRateLimitError") => (
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limit_error",
            "rate_limit_exceeded",
        ),
        Some("LLMServiceUnavailableError") => (
            StatusCode::SERVICE_UNAVAILABLE,
            "server_error",
            "llm_unavailable",
        ),
        Some("LLMTimeoutError") => (StatusCode::GATEWAY_TIMEOUT, "server_error", "timeout"),
        Some("LLMContextWindowExceedError") => (
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            "context_length_exceeded",
        ),
        _ => (StatusCode::BAD_GATEWAY, "server_error", "agent_error"),
    }
}
