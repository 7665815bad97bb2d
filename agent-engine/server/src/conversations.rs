//! `/api/conversations`: create, get, batch, search, count, update, delete, and the commands
//! (run, pause, interrupt, confirmation policy, security analyzer, secrets, ask_agent,
//! condense, final response).

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tandem_llm::{Llm, LlmError, LlmRequest};
use tandem_protocol::{
    AgentResponse, AskAgentRequest, ConversationInfo, ConversationPage, Message, Role,
    SendMessageRequest, SetConfirmationPolicyRequest, SetSecurityAnalyzerRequest,
    StartConversationRequest, SuccessResponse, UpdateConversationRequest, UpdateSecretsRequest,
};
use tandem_sdk::{SdkError, ToolRegistry, llm_view, tool_schemas};
use tokio_util::sync::CancellationToken;

use crate::AppState;
use crate::error::{ApiError, Result};
use crate::extract::{ApiJson, QueryMap, conversation_id};
use crate::info::final_response;
use crate::registry::{Live, parse_secrets};

/// The message of a `SendMessageRequest`; only `user` messages go to the agent.
pub fn message_of(req: &SendMessageRequest, loc: &[&str]) -> Result<Message> {
    if req.role != Role::User {
        let mut l = loc.to_vec();
        l.push("role");
        return Err(ApiError::field(
            &l,
            "value_error",
            "messages sent to the agent must have role `user`",
            serde_json::to_value(req.role).unwrap_or(Value::Null),
        ));
    }
    let mut m = Message::new(Role::User, req.content.clone());
    m.extra = req.extra.clone();
    if let Some(sender) = &req.sender {
        m.extra
            .insert("sender".into(), Value::from(sender.as_str()));
    }
    Ok(m)
}

async fn live(state: &AppState, raw: &str) -> Result<Arc<Live>> {
    let id = conversation_id(raw)?;
    state.registry.get(&id).await
}

/// Sends a message (a run it starts waits its turn when every slot is taken).
pub async fn send(live: &Live, message: Message, run: bool) -> Result<()> {
    // A conversation that moved away takes no message here (the events socket reaches it
    // past the route guard).
    crate::move_routes::check_dir(live.handle.dir())?;
    live.handle
        .send_message(message, run)
        .await
        .map_err(ApiError::from)
}

/// `POST /api/conversations`: 201 when created, 200 when the id exists.
pub async fn create(
    State(state): State<AppState>,
    ApiJson(req): ApiJson<StartConversationRequest>,
) -> Result<Response> {
    let first = match &req.initial_message {
        Some(m) => Some((message_of(m, &["body", "initial_message"])?, m.run)),
        None => None,
    };
    let (live, created) = state.registry.create(req).await?;
    if created && let Some((message, run)) = first {
        send(&live, message, run).await?;
    }
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(live.info())).into_response())
}

/// `GET /api/conversations/{id}`.
pub async fn get_one(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Json<ConversationInfo>> {
    let id = conversation_id(&raw)?;
    state
        .registry
        .info(&id)
        .await
        .map(Json)
        .ok_or(ApiError::NotFound)
}

/// `GET /api/conversations?ids=a&ids=b`: `null` for unknown ids.
pub async fn batch(
    State(state): State<AppState>,
    q: QueryMap,
) -> Result<Json<Vec<Option<ConversationInfo>>>> {
    let ids = q.all("ids");
    if ids.len() > 100 {
        return Err(ApiError::field(
            &["query", "ids"],
            "too_long",
            "at most 100 ids",
            Value::from(ids.len()),
        ));
    }
    let mut out = Vec::new();
    for raw in ids {
        let info = match conversation_id(&raw) {
            Ok(id) => state.registry.info(&id).await,
            Err(_) => None,
        };
        out.push(info);
    }
    Ok(Json(out))
}

fn status_filter(q: &QueryMap) -> Result<Option<String>> {
    const ALL: &[&str] = &[
        "idle",
        "running",
        "paused",
        "waiting_for_confirmation",
        "finished",
        "error",
        "stuck",
        "deleting",
    ];
    match q.get("status") {
        None => Ok(None),
        Some(_) => Ok(Some(q.choice("status", "idle", ALL)?.to_owned())),
    }
}

async fn filtered(state: &AppState, q: &QueryMap) -> Result<Vec<ConversationInfo>> {
    let status = status_filter(q)?;
    let mut all = state.registry.list().await;
    if let Some(s) = status {
        all.retain(|c| c.execution_status.as_str() == s);
    }
    Ok(all)
}

/// `GET /api/conversations/search`.
pub async fn search(State(state): State<AppState>, q: QueryMap) -> Result<Json<ConversationPage>> {
    let limit = usize::try_from(q.int("limit", 100, 1, 100)?).unwrap_or(100);
    let order = q.choice(
        "sort_order",
        "CREATED_AT_DESC",
        &[
            "CREATED_AT",
            "CREATED_AT_DESC",
            "UPDATED_AT",
            "UPDATED_AT_DESC",
        ],
    )?;
    let mut all = filtered(&state, &q).await?;
    match order {
        "CREATED_AT" => all.sort_by(|a, b| a.created_at.cmp(&b.created_at)),
        "UPDATED_AT" => all.sort_by(|a, b| a.updated_at.cmp(&b.updated_at)),
        "UPDATED_AT_DESC" => all.sort_by(|a, b| b.updated_at.cmp(&a.updated_at)),
        _ => all.sort_by(|a, b| b.created_at.cmp(&a.created_at)),
    }
    let (items, next_page_id) =
        crate::extract::page(all, q.get("page_id"), limit, |c| c.id.as_str());
    Ok(Json(ConversationPage {
        items,
        next_page_id,
    }))
}

/// `GET /api/conversations/count`.
pub async fn count(State(state): State<AppState>, q: QueryMap) -> Result<Json<usize>> {
    Ok(Json(filtered(&state, &q).await?.len()))
}

/// `PATCH /api/conversations/{id}`: title and tags.
pub async fn update(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    ApiJson(req): ApiJson<UpdateConversationRequest>,
) -> Result<Json<SuccessResponse>> {
    let live = live(&state, &raw).await?;
    if let Some(title) = req.title {
        let n = title.chars().count();
        if n == 0 || n > 200 {
            return Err(ApiError::field(
                &["body", "title"],
                "string_too_long",
                "the title must be 1 to 200 characters",
                Value::from(title),
            ));
        }
        live.handle.set_title(title).await?;
    }
    if let Some(tags) = req.tags {
        state.registry.set_tags(live.handle.dir(), &tags)?;
    }
    Ok(Json(SuccessResponse::OK))
}

/// `DELETE /api/conversations/{id}`.
pub async fn delete(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Json<SuccessResponse>> {
    let id = conversation_id(&raw)?;
    state.registry.delete(&id).await?;
    Ok(Json(SuccessResponse::OK))
}

/// `POST /api/conversations/{id}/run`: 409 while running (or waiting its turn); beyond the
/// run limit it waits in the queue.
pub async fn run(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Json<SuccessResponse>> {
    let live = live(&state, &raw).await?;
    if live.running() {
        return Err(ApiError::AlreadyRunning);
    }
    match live.handle.run().await {
        Ok(()) => Ok(Json(SuccessResponse::OK)),
        Err(SdkError::AlreadyRunning) => Err(ApiError::AlreadyRunning),
        Err(SdkError::InvalidState(m)) => Err(ApiError::Conflict(m)),
        Err(e) => Err(e.into()),
    }
}

/// `POST /api/conversations/{id}/pause`.
pub async fn pause(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Json<SuccessResponse>> {
    live(&state, &raw).await?.handle.pause().await?;
    Ok(Json(SuccessResponse::OK))
}

/// `POST /api/conversations/{id}/interrupt`.
pub async fn interrupt(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Json<SuccessResponse>> {
    live(&state, &raw).await?.handle.interrupt().await?;
    Ok(Json(SuccessResponse::OK))
}

/// `POST /api/conversations/{id}/confirmation_policy`.
pub async fn confirmation_policy(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    ApiJson(req): ApiJson<SetConfirmationPolicyRequest>,
) -> Result<Json<SuccessResponse>> {
    live(&state, &raw)
        .await?
        .handle
        .set_confirmation_policy(req.policy)
        .await?;
    Ok(Json(SuccessResponse::OK))
}

/// `GET /api/conversations/{id}/budget` (Tandem): what the conversation may spend.
pub async fn budget(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Json<tandem_protocol::Budget>> {
    Ok(Json(live(&state, &raw).await?.handle.budget()))
}

/// `PUT /api/conversations/{id}/budget` (Tandem): sets the limits (absent: none); a run
/// paused on its budget may run again once it is raised. 422 naming a limit that is not a
/// positive number.
pub async fn set_budget(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    ApiJson(budget): ApiJson<tandem_protocol::Budget>,
) -> Result<Json<tandem_protocol::Budget>> {
    check_budget(&budget, &["body"])?;
    let live = live(&state, &raw).await?;
    live.handle.set_budget(budget).await?;
    Ok(Json(live.handle.budget()))
}

/// 422 naming the limit of `budget` (at `loc`) that is not a positive number.
pub fn check_budget(budget: &tandem_protocol::Budget, loc: &[&str]) -> Result<()> {
    budget.validate().map_err(|e| {
        let input = match e.field {
            "max_cost" => serde_json::json!(budget.max_cost),
            _ => serde_json::json!(budget.max_tokens),
        };
        let mut at = loc.to_vec();
        at.push(e.field);
        ApiError::field(
            &at,
            "greater_than",
            format!("{}: {}", e.field, e.reason),
            input,
        )
    })
}

/// `POST /api/conversations/{id}/security_analyzer`.
pub async fn security_analyzer(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    ApiJson(req): ApiJson<SetSecurityAnalyzerRequest>,
) -> Result<Json<SuccessResponse>> {
    live(&state, &raw)
        .await?
        .handle
        .set_security_analyzer(req.security_analyzer)
        .await?;
    Ok(Json(SuccessResponse::OK))
}

/// `POST /api/conversations/{id}/secrets`.
pub async fn secrets(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    ApiJson(req): ApiJson<UpdateSecretsRequest>,
) -> Result<Json<SuccessResponse>> {
    let live = live(&state, &raw).await?;
    let parsed = parse_secrets(Some(&req.secrets), &["body", "secrets"])?;
    live.handle.update_secrets(parsed).await?;
    Ok(Json(SuccessResponse::OK))
}

/// Attempts after the first that `ask_agent` makes, whatever the agent's LLM allows: a side
/// question is asked while someone waits on the HTTP request.
const ASK_RETRIES: u32 = 1;
/// Longest wait between `ask_agent`'s attempts, seconds.
const ASK_RETRY_WAIT: f64 = 2.0;
/// How long `ask_agent` waits for the LLM in all, attempts and waits included.
const ASK_DEADLINE: Duration = Duration::from_secs(60);

/// The agent's LLM with `ask_agent`'s short retry schedule ([`ASK_RETRIES`] retries, waits of
/// [`ASK_RETRY_WAIT`] s at most); the agent's own client when its schedule is already shorter
/// or a client cannot be made from its configuration.
fn ask_llm(agent_llm: &Arc<dyn Llm>) -> Arc<dyn Llm> {
    let config = agent_llm.config();
    if config.num_retries <= ASK_RETRIES && config.retry_max_wait <= ASK_RETRY_WAIT {
        return Arc::clone(agent_llm);
    }
    let mut short = config.clone();
    short.num_retries = short.num_retries.min(ASK_RETRIES);
    short.retry_max_wait = short.retry_max_wait.min(ASK_RETRY_WAIT);
    short.retry_min_wait = short.retry_min_wait.min(short.retry_max_wait);
    tandem_llm::agent_llm(short).unwrap_or_else(|_| Arc::clone(agent_llm))
}

/// `POST /api/conversations/{id}/ask_agent`: a side LLM call with the conversation's view and
/// tools plus the question; the conversation does not change. A reply with only a tool call
/// is a 502 naming the tool (upstream answers 500). The call retries once at most and gives
/// up after [`ASK_DEADLINE`]: an LLM that fails is a 502 naming its error, one that does not
/// answer in time a 504, instead of a request held for the agent's whole retry schedule.
pub async fn ask_agent(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    ApiJson(req): ApiJson<AskAgentRequest>,
) -> Result<Json<AgentResponse>> {
    let live = live(&state, &raw).await?;
    let mut messages = {
        let view = live.handle.view();
        llm_view(&view.events)
    };
    messages.push(Message::user(format!(
        "<QUESTION>\n{}\n</QUESTION>\nAnswer the question above in text, from what you know of this conversation so far. Do not call any tool.",
        req.question
    )));
    let mut registry = ToolRegistry::new();
    for t in &live.tools {
        registry.register(Arc::clone(t));
    }
    let request = LlmRequest {
        messages,
        tools: tool_schemas(&registry, true),
        prompt_cache_key: Some(live.handle.id().to_owned()),
        on_delta: None,
        on_retry: None,
    };
    let llm = ask_llm(&live.llm);
    let cancel = CancellationToken::new();
    let model = llm.config().model.clone();
    let reply =
        match tokio::time::timeout(ASK_DEADLINE, llm.completion(request, cancel.clone())).await {
            Ok(Ok(reply)) => reply,
            Ok(Err(e @ LlmError::Timeout(_))) => {
                return Err(ApiError::Timeout(format!("the LLM ({model}) {e}")));
            }
            Ok(Err(e)) => {
                return Err(ApiError::Upstream(format!("the LLM ({model}) failed: {e}")));
            }
            Err(_) => {
                cancel.cancel();
                return Err(ApiError::Timeout(format!(
                    "the LLM ({model}) did not answer within {} s",
                    ASK_DEADLINE.as_secs()
                )));
            }
        };
    let text = reply.message.text();
    if text.trim().is_empty() {
        let tools: Vec<String> = reply
            .message
            .tool_calls
            .iter()
            .flatten()
            .map(|c| c.name.clone())
            .collect();
        return Err(ApiError::Upstream(if tools.is_empty() {
            "the model answered with no text".into()
        } else {
            format!(
                "the model answered with a tool call ({}) instead of text",
                tools.join(", ")
            )
        }));
    }
    Ok(Json(AgentResponse { response: text }))
}

/// `POST /api/conversations/{id}/condense`.
pub async fn condense(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Json<SuccessResponse>> {
    live(&state, &raw).await?.handle.condense().await?;
    Ok(Json(SuccessResponse::OK))
}

/// `GET /api/conversations/{id}/agent_final_response`.
pub async fn agent_final_response(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Json<AgentResponse>> {
    let live = live(&state, &raw).await?;
    let response = final_response(&live.handle.view().events);
    Ok(Json(AgentResponse { response }))
}
