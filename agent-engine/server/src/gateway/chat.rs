//! `POST /v1/chat/completions`: one agent turn as a chat completion, plain or streamed.

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::Event as SseEvent;
use axum::response::{IntoResponse, Response};
use tandem_protocol::{
    ChatChoice, ChatChunkChoice, ChatCompletionChunk, ChatCompletionRequest,
    ChatCompletionResponse, ChatDelta, ChatMessage, ChatUsage, Event,
};
use tandem_sdk::LLM_RETRY_KEY;

use super::run::{self, Target, Tokens};
use super::{
    CONVERSATION_HEADER, CONVERSATION_HEADER_ALIAS, GatewayError, input, name_conversation, now,
    parse_body, profile_for, sse, wants_title,
};
use crate::AppState;

fn usage(t: Tokens) -> ChatUsage {
    ChatUsage {
        prompt_tokens: t.prompt,
        completion_tokens: t.completion,
        total_tokens: t.prompt + t.completion,
    }
}

/// `POST /v1/chat/completions`.
pub async fn chat(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, GatewayError> {
    let req: ChatCompletionRequest = parse_body(&body)?;
    let llm = profile_for(&state, &req.model)?;
    let mut ask = input::from_chat(&req.messages)?;
    ask.autotitle = wants_title(&headers, &req.extra)?;
    let named = headers
        .get(CONVERSATION_HEADER)
        .or_else(|| headers.get(CONVERSATION_HEADER_ALIAS))
        .map(|v| {
            v.to_str().map_err(|_| {
                GatewayError::invalid(
                    "The conversation header is not text.",
                    Some(CONVERSATION_HEADER),
                )
            })
        })
        .transpose()?;
    let target = match named {
        Some(raw) => {
            let id = run::parse_id(raw, "X-OpenHands-ServerConversation-ID")?;
            if state.registry.exists(&id).await {
                Target::Existing(id)
            } else {
                Target::New(Some(id))
            }
        }
        None => Target::New(None),
    };
    let turn = run::start(&state, llm, ask, target).await?;
    let id = turn.id.clone();
    let model = req.model;
    let completion_id = format!("chatcmpl-{}", uuid::Uuid::new_v4().simple());
    let created = now();
    if !req.stream {
        let answer = run::finish(turn).await?;
        let body = ChatCompletionResponse {
            id: completion_id,
            object: "chat.completion".into(),
            created,
            model,
            choices: vec![ChatChoice {
                index: 0,
                message: ChatMessage {
                    role: "assistant".into(),
                    content: answer.text.into(),
                },
                finish_reason: "stop".into(),
            }],
            usage: usage(answer.usage),
        };
        let mut resp = Json(body).into_response();
        name_conversation(&mut resp, &id);
        return Ok(resp);
    }

    let include_usage = req.stream_options.is_some_and(|o| o.include_usage);
    let chunk = move |choices: Vec<ChatChunkChoice>, usage: Option<ChatUsage>| {
        let c = ChatCompletionChunk {
            id: completion_id.clone(),
            object: "chat.completion.chunk".into(),
            created,
            model: model.clone(),
            choices,
            usage,
        };
        SseEvent::default().data(serde_json::to_string(&c).unwrap_or_default())
    };
    let choice = |delta: ChatDelta, finish: Option<&str>| {
        vec![ChatChunkChoice {
            index: 0,
            delta,
            finish_reason: finish.map(str::to_owned),
        }]
    };
    let (tx, rx) = futures::channel::mpsc::unbounded::<SseEvent>();
    let _ = tx.unbounded_send(chunk(
        choice(
            ChatDelta {
                role: Some("assistant".into()),
                content: Some(String::new()),
            },
            None,
        ),
        None,
    ));
    // The client sees a failing LLM call being retried (an SSE comment each, which OpenAI
    // clients skip), not a silent wait.
    let retries = tokio::spawn(announce_retries(turn.subscribe(), tx.clone()));
    tokio::spawn(async move {
        let finished = run::finish(turn).await;
        retries.abort();
        match finished {
            Ok(answer) => {
                let _ = tx.unbounded_send(chunk(
                    choice(
                        ChatDelta {
                            role: None,
                            content: Some(answer.text),
                        },
                        None,
                    ),
                    None,
                ));
                let _ = tx.unbounded_send(chunk(choice(ChatDelta::default(), Some("stop")), None));
                if include_usage {
                    let _ = tx.unbounded_send(chunk(Vec::new(), Some(usage(answer.usage))));
                }
            }
            Err(e) => {
                let data = serde_json::to_string(&e.body()).unwrap_or_default();
                let _ = tx.unbounded_send(SseEvent::default().data(data));
            }
        }
        let _ = tx.unbounded_send(SseEvent::default().data("[DONE]"));
    });
    Ok(sse(rx, &id))
}

/// Sends each `llm_retry` state update of the turn (those already recorded, then the later
/// ones) to the stream as an SSE comment (`: LLM error LLMRateLimitError, retry 1/5 in 8 s:
/// <message>`), until the stream ends.
pub(super) async fn announce_retries(
    (past, mut events): (Vec<Event>, tokio::sync::broadcast::Receiver<Event>),
    tx: futures::channel::mpsc::UnboundedSender<SseEvent>,
) {
    let mut past = past.into_iter();
    loop {
        let event = match past.next() {
            Some(event) => event,
            None => match events.recv().await {
                Ok(event) => event,
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            },
        };
        let Event::StateUpdate(update) = event else {
            continue;
        };
        if update.key != LLM_RETRY_KEY {
            continue;
        }
        let v = &update.value;
        let text = format!(
            "LLM error {}, retry {}/{} in {} s: {}",
            v["code"].as_str().unwrap_or_default(),
            v["retry"],
            v["max_retries"],
            v["wait_seconds"].as_f64().unwrap_or_default(),
            v["message"].as_str().unwrap_or_default(),
        )
        .replace(['\n', '\r'], " ");
        if tx
            .unbounded_send(SseEvent::default().comment(text))
            .is_err()
        {
            return;
        }
    }
}
