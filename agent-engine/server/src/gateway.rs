//! The OpenAI-compatible gateway (Tandem): `GET /v1/models` lists the server's LLM profiles as
//! `tandem_{profile}` (`openhands_{profile}` is accepted too); `POST /v1/chat/completions`
//! runs the agent. Without a conversation header the request is one-shot: an ephemeral
//! conversation gets the latest user message (system messages become the system prompt
//! suffix), runs to the end, its final text is returned in OpenAI's shape and the conversation
//! is deleted. With `X-OpenHands-ServerConversation-ID` (alias `X-Tandem-Conversation-ID`) the
//! message is appended to that conversation and its id comes back in the same header.
//! `stream: true` answers with `chat.completion.chunk` events and `data: [DONE]`. Errors use
//! OpenAI's `{"error": {...}}` shape.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use tandem_protocol::{
    AgentSpec, ChatChoice, ChatCompletionRequest, ChatCompletionResponse, ChatMessage, ChatUsage,
    Content, ConversationErrorEvent, Event, ExecutionStatus, ImageContent, Message, ModelEntry,
    ModelList, OpenAiError, OpenAiErrorResponse, Role, Source, StartConversationRequest,
};

use crate::AppState;
use crate::error::ApiError;
use crate::info::final_response;
use crate::registry::Live;

/// Header naming the conversation to append to.
pub const CONVERSATION_HEADER: &str = "x-openhands-serverconversation-id";
/// Tandem's alias of [`CONVERSATION_HEADER`].
pub const CONVERSATION_HEADER_ALIAS: &str = "x-tandem-conversation-id";

/// An error response in OpenAI's shape.
pub fn openai_error(status: StatusCode, message: &str, kind: &str, code: &str) -> Response {
    let body = OpenAiErrorResponse {
        error: OpenAiError {
            message: message.to_owned(),
            kind: kind.to_owned(),
            code: Some(code.to_owned()),
        },
    };
    (status, Json(body)).into_response()
}

struct GatewayError(StatusCode, String, &'static str, &'static str);

impl IntoResponse for GatewayError {
    fn into_response(self) -> Response {
        openai_error(self.0, &self.1, self.2, self.3)
    }
}

impl From<ApiError> for GatewayError {
    fn from(e: ApiError) -> Self {
        let status = e.status();
        let kind = match status {
            StatusCode::UNAUTHORIZED => "authentication_error",
            StatusCode::NOT_FOUND => "not_found_error",
            StatusCode::TOO_MANY_REQUESTS => "rate_limit_error",
            s if s.is_client_error() => "invalid_request_error",
            _ => "server_error",
        };
        Self(status, e.to_string(), kind, e.code())
    }
}

fn created() -> i64 {
    chrono::Utc::now().timestamp()
}

/// `GET /v1/models`.
pub async fn models(State(state): State<AppState>) -> Json<ModelList> {
    let data = state
        .config
        .profiles
        .keys()
        .map(|p| ModelEntry {
            id: format!("tandem_{p}"),
            object: "model".into(),
            created: 0,
            owned_by: "tandem".into(),
        })
        .collect();
    Json(ModelList {
        object: "list".into(),
        data,
    })
}

/// Text and images of an OpenAI message content (a string or a list of parts).
fn content_of(v: &Value) -> Vec<Content> {
    match v {
        Value::String(s) => vec![Content::text(s.clone())],
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p.get("type").and_then(Value::as_str) {
                Some("text") => p
                    .get("text")
                    .and_then(Value::as_str)
                    .map(|t| Content::text(t.to_owned())),
                Some("image_url") => {
                    let url = p
                        .get("image_url")
                        .and_then(|u| u.get("url").or(Some(u)))
                        .and_then(Value::as_str)?;
                    Some(Content::Image(ImageContent {
                        cache_prompt: false,
                        image_urls: vec![url.to_owned()],
                        extra: Default::default(),
                    }))
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn text_of(v: &Value) -> String {
    content_of(v)
        .iter()
        .filter_map(Content::as_text)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `POST /v1/chat/completions`.
pub async fn chat(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> Response {
    match chat_inner(state, headers, body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

struct Turn {
    live: Arc<Live>,
    ephemeral: bool,
    from: usize,
}

async fn chat_inner(
    state: AppState,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, GatewayError> {
    let bad = |m: String| {
        GatewayError(
            StatusCode::BAD_REQUEST,
            m,
            "invalid_request_error",
            "invalid_request",
        )
    };
    let req: ChatCompletionRequest =
        serde_json::from_slice(&body).map_err(|e| bad(format!("invalid request body: {e}")))?;
    let profile = req
        .model
        .strip_prefix("tandem_")
        .or_else(|| req.model.strip_prefix("openhands_"))
        .unwrap_or(&req.model);
    let Some(llm) = state.config.profiles.get(profile).cloned() else {
        return Err(GatewayError(
            StatusCode::NOT_FOUND,
            format!(
                "The model `{}` does not exist; see GET /v1/models.",
                req.model
            ),
            "invalid_request_error",
            "model_not_found",
        ));
    };
    let system: Vec<String> = req
        .messages
        .iter()
        .filter(|m| m.role == "system" || m.role == "developer")
        .map(|m| text_of(&m.content))
        .collect();
    let Some(user) = req.messages.iter().rev().find(|m| m.role == "user") else {
        return Err(bad("the request has no user message".into()));
    };
    let content = content_of(&user.content);
    if content.is_empty() {
        return Err(bad(
            "the latest user message has no text or image content".into()
        ));
    }
    let message = Message::new(Role::User, content);
    let conv_header = headers
        .get(CONVERSATION_HEADER)
        .or_else(|| headers.get(CONVERSATION_HEADER_ALIAS))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let turn = match conv_header {
        Some(raw) => {
            let id = crate::extract::conversation_id(&raw)?;
            let live = state.registry.get(&id).await?;
            let from = live.handle.view().events.len();
            Turn {
                live,
                ephemeral: false,
                from,
            }
        }
        None => {
            let mut agent = AgentSpec::default_for(llm);
            if !system.is_empty() {
                agent.agent_context = Some(json!({"system_message_suffix": system.join("\n\n")}));
            }
            let start = StartConversationRequest {
                agent,
                workspace: None,
                conversation_id: None,
                confirmation_policy: None,
                security_analyzer: None,
                initial_message: None,
                max_iterations: None,
                stuck_detection: None,
                secrets: None,
                tags: Some(
                    [("source".to_owned(), "gateway".to_owned())]
                        .into_iter()
                        .collect(),
                ),
                extra: Default::default(),
            };
            let (live, _) = state.registry.create(start).await?;
            Turn {
                live,
                ephemeral: true,
                from: 0,
            }
        }
    };
    if let Err(e) = crate::conversations::send(&state, &turn.live, message, true).await {
        cleanup(&state, &turn).await;
        return Err(e.into());
    }
    let id = turn.live.handle.id().to_owned();
    let model = req.model.clone();
    let ephemeral = turn.ephemeral;
    if req.stream {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let st = state.clone();
        tokio::spawn(async move {
            let r = finish(&st, &turn).await;
            let _ = tx.send(r);
        });
        let chunk_id = format!("chatcmpl-{}", uuid::Uuid::new_v4().simple());
        let stream = futures::stream::unfold(
            (0u8, Some(rx), chunk_id, model),
            |(stage, rx, cid, model)| async move {
                let chunk = |delta: Value, finish: Option<&str>| {
                    json!({"id": cid, "object": "chat.completion.chunk", "created": created(), "model": model,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                .to_string()
                };
                match stage {
                    0 => {
                        let first = chunk(json!({"role": "assistant", "content": ""}), None);
                        Some((
                            Ok::<_, Infallible>(SseEvent::default().data(first)),
                            (1, rx, cid, model),
                        ))
                    }
                    1 => {
                        let result = match rx {
                            Some(rx) => rx.await.unwrap_or_else(|_| {
                                Err(GatewayError(
                                    StatusCode::INTERNAL_SERVER_ERROR,
                                    "the run was lost".into(),
                                    "server_error",
                                    "internal_error",
                                ))
                            }),
                            None => return None,
                        };
                        let data = match result {
                            Ok((text, _)) => chunk(json!({"content": text}), None),
                            Err(e) => json!({"error": {"message": e.1, "type": e.2, "code": e.3}})
                                .to_string(),
                        };
                        Some((Ok(SseEvent::default().data(data)), (2, None, cid, model)))
                    }
                    2 => {
                        let last = chunk(json!({}), Some("stop"));
                        Some((Ok(SseEvent::default().data(last)), (3, None, cid, model)))
                    }
                    3 => Some((
                        Ok(SseEvent::default().data("[DONE]")),
                        (4, None, cid, model),
                    )),
                    _ => None,
                }
            },
        );
        let mut resp = Sse::new(stream).into_response();
        if !ephemeral {
            insert_header(&mut resp, &id);
        }
        return Ok(resp);
    }
    let (text, usage) = finish(&state, &turn).await?;
    let body = ChatCompletionResponse {
        id: format!("chatcmpl-{}", uuid::Uuid::new_v4().simple()),
        object: "chat.completion".into(),
        created: created(),
        model,
        choices: vec![ChatChoice {
            index: 0,
            message: ChatMessage {
                role: "assistant".into(),
                content: Value::from(text),
            },
            finish_reason: "stop".into(),
        }],
        usage,
    };
    let mut resp = Json(body).into_response();
    if !ephemeral {
        insert_header(&mut resp, &id);
    }
    Ok(resp)
}

fn insert_header(resp: &mut Response, id: &str) {
    if let Ok(v) = HeaderValue::from_str(id) {
        resp.headers_mut()
            .insert(HeaderName::from_static(CONVERSATION_HEADER), v);
    }
}

async fn cleanup(state: &AppState, turn: &Turn) {
    if turn.ephemeral
        && let Err(e) = state.registry.delete(turn.live.handle.id()).await
    {
        tracing::warn!(
            "deleting the gateway conversation {}: {e}",
            turn.live.handle.id()
        );
    }
}

/// Waits for the run, collects the answer and usage, deletes an ephemeral conversation.
async fn finish(state: &AppState, turn: &Turn) -> Result<(String, ChatUsage), GatewayError> {
    let waited = tokio::time::timeout(
        state.config.gateway_timeout,
        turn.live.handle.wait_until_stopped(),
    )
    .await;
    let result = if waited.is_err() {
        let _ = turn.live.handle.interrupt().await;
        Err(GatewayError(
            StatusCode::GATEWAY_TIMEOUT,
            format!(
                "The agent did not finish within {} seconds.",
                state.config.gateway_timeout.as_secs()
            ),
            "server_error",
            "timeout",
        ))
    } else {
        answer(&turn.live, turn.from)
    };
    cleanup(state, turn).await;
    result
}

fn answer(live: &Live, from: usize) -> Result<(String, ChatUsage), GatewayError> {
    let view = live.handle.view();
    let events = view.events.get(from..).unwrap_or(&[]);
    let usage = {
        let (mut p, mut c) = (0u64, 0u64);
        for m in view.state.stats.usage_to_metrics.values() {
            if let Some(u) = &m.accumulated_token_usage {
                p += u.prompt_tokens;
                c += u.completion_tokens;
            }
        }
        ChatUsage {
            prompt_tokens: p,
            completion_tokens: c,
            total_tokens: p + c,
        }
    };
    let text = final_response(events);
    if view.state.execution_status == ExecutionStatus::Error
        || (text.is_empty() && view.state.execution_status != ExecutionStatus::Finished)
    {
        let detail = events.iter().rev().find_map(|e| match e {
            Event::ConversationError(ConversationErrorEvent { detail, .. }) => Some(detail.clone()),
            Event::AgentError(a) if a.base.source == Source::Agent => Some(a.error.clone()),
            _ => None,
        });
        let status = view.state.execution_status.as_str();
        return Err(GatewayError(
            StatusCode::BAD_GATEWAY,
            detail.unwrap_or_else(|| {
                format!("the agent stopped with status `{status}` without an answer")
            }),
            "server_error",
            "agent_error",
        ));
    }
    Ok((text, usage))
}
