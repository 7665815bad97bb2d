//! `POST /v1/responses`: one agent turn as an OpenAI Responses `response`, plain or streamed
//! as the standard `response.*` events. A response id is `resp_` + the conversation's id (32
//! hex) + 16 random hex, so `previous_response_id` names the conversation to continue and
//! survives restarts.

use std::collections::BTreeMap;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::Event as SseEvent;
use axum::response::{IntoResponse, Response};
use tandem_protocol::{
    InputTokensDetails, OutputTokensDetails, ResponseError, ResponseObject, ResponseOutputMessage,
    ResponseOutputText, ResponseRequest, ResponseStreamEvent, ResponseUsage,
};

use super::chat::announce_retries;
use super::run::{self, Answer, Target, Tokens};
use super::{GatewayError, input, name_conversation, parse_body, profile_for, sse, wants_title};
use crate::AppState;

const PREFIX: &str = "resp_";

fn response_id(conversation: &str) -> String {
    let conv = conversation.replace('-', "");
    let salt = uuid::Uuid::new_v4().simple().to_string();
    format!("{PREFIX}{conv}{}", &salt[..16])
}

/// The conversation a response id names, if it is one of ours.
fn conversation_of(response_id: &str) -> Option<String> {
    let hex = response_id.strip_prefix(PREFIX)?;
    if hex.len() != 48 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    uuid::Uuid::parse_str(&hex[..32])
        .ok()
        .map(|u| u.hyphenated().to_string())
}

fn usage(t: Tokens) -> ResponseUsage {
    ResponseUsage {
        input_tokens: t.prompt,
        input_tokens_details: InputTokensDetails {
            cached_tokens: t.cached,
        },
        output_tokens: t.completion,
        output_tokens_details: OutputTokensDetails {
            reasoning_tokens: t.reasoning,
        },
        total_tokens: t.prompt + t.completion,
    }
}

fn seconds() -> f64 {
    chrono::Utc::now().timestamp_millis() as f64 / 1000.0
}

/// The response as it stands: in progress, completed with an answer, or failed.
struct Shape {
    id: String,
    message_id: String,
    created_at: f64,
    model: String,
    instructions: Option<String>,
    metadata: BTreeMap<String, String>,
    previous: Option<String>,
}

impl Shape {
    fn message(&self, status: &str, text: Option<&str>) -> ResponseOutputMessage {
        ResponseOutputMessage {
            id: self.message_id.clone(),
            kind: "message".into(),
            role: "assistant".into(),
            status: status.into(),
            content: text.map(ResponseOutputText::new).into_iter().collect(),
        }
    }

    fn object(&self, outcome: Option<&Result<Answer, GatewayError>>) -> ResponseObject {
        let (status, output, usage, error, completed_at) = match outcome {
            None => ("in_progress", Vec::new(), None, None, None),
            Some(Ok(a)) => (
                "completed",
                vec![self.message("completed", Some(&a.text))],
                Some(usage(a.usage)),
                None,
                Some(seconds()),
            ),
            Some(Err(e)) => (
                "failed",
                Vec::new(),
                None,
                Some(ResponseError {
                    code: e.code.to_string(),
                    message: e.message.clone(),
                }),
                None,
            ),
        };
        ResponseObject {
            id: self.id.clone(),
            object: "response".into(),
            created_at: self.created_at,
            completed_at,
            status: status.into(),
            error,
            incomplete_details: None,
            instructions: self.instructions.clone(),
            metadata: self.metadata.clone(),
            model: self.model.clone(),
            output,
            parallel_tool_calls: false,
            previous_response_id: self.previous.clone(),
            tool_choice: "none".into(),
            tools: Vec::new(),
            usage,
        }
    }
}

/// `POST /v1/responses`.
pub async fn responses(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, GatewayError> {
    let req: ResponseRequest = parse_body(&body)?;
    let llm = profile_for(&state, &req.model)?;
    let mut ask = input::from_responses(&req.input, req.instructions.as_deref())?;
    ask.autotitle = wants_title(&headers, &req.extra)?;
    let target = match &req.previous_response_id {
        Some(prev) => {
            let unknown = || {
                GatewayError::new(
                    StatusCode::NOT_FOUND,
                    format!("Previous response with id '{prev}' not found (or its conversation was deleted)."),
                    "invalid_request_error",
                    "previous_response_not_found",
                )
                .with_param("previous_response_id")
            };
            let id = conversation_of(prev).ok_or_else(unknown)?;
            if !state.registry.exists(&id).await {
                return Err(unknown());
            }
            Target::Existing(id)
        }
        None => Target::New(None),
    };
    let created_at = seconds();
    let turn = run::start(&state, llm, ask, target).await?;
    let conversation = turn.id.clone();
    let shape = Shape {
        id: response_id(&conversation),
        message_id: format!("msg_{}", uuid::Uuid::new_v4().simple()),
        created_at,
        model: req.model,
        instructions: req.instructions,
        metadata: req.metadata.unwrap_or_default(),
        previous: req.previous_response_id,
    };
    if !req.stream {
        let outcome = Ok(run::finish(turn).await?);
        let mut resp = Json(shape.object(Some(&outcome))).into_response();
        name_conversation(&mut resp, &conversation);
        return Ok(resp);
    }

    let (tx, rx) = futures::channel::mpsc::unbounded::<SseEvent>();
    // A failing LLM call being retried shows as SSE comments, not a silent wait.
    let retries = tokio::spawn(announce_retries(turn.subscribe(), tx.clone()));
    let mut seq = 0u64;
    let mut send = move |mut ev: ResponseStreamEvent| {
        ev.sequence_number = seq;
        seq += 1;
        let data = serde_json::to_string(&ev).unwrap_or_default();
        let _ = tx.unbounded_send(SseEvent::default().event(ev.kind.clone()).data(data));
    };
    let with_response = |kind: &str, r: ResponseObject| ResponseStreamEvent {
        response: Some(r),
        ..ResponseStreamEvent::new(kind, 0)
    };
    send(with_response("response.created", shape.object(None)));
    send(with_response("response.in_progress", shape.object(None)));
    tokio::spawn(async move {
        let outcome = run::finish(turn).await;
        retries.abort();
        let text = match &outcome {
            Ok(a) => a.text.clone(),
            Err(_) => {
                send(with_response(
                    "response.failed",
                    shape.object(Some(&outcome)),
                ));
                return;
            }
        };
        let mid = shape.message_id.clone();
        let part = || ResponseStreamEvent {
            item_id: Some(mid.clone()),
            output_index: Some(0),
            content_index: Some(0),
            ..ResponseStreamEvent::new("", 0)
        };
        send(ResponseStreamEvent {
            output_index: Some(0),
            item: Some(shape.message("in_progress", None)),
            ..ResponseStreamEvent::new("response.output_item.added", 0)
        });
        send(ResponseStreamEvent {
            kind: "response.content_part.added".into(),
            part: Some(ResponseOutputText::new("")),
            ..part()
        });
        send(ResponseStreamEvent {
            kind: "response.output_text.delta".into(),
            delta: Some(text.clone()),
            logprobs: Some(Vec::new()),
            ..part()
        });
        send(ResponseStreamEvent {
            kind: "response.output_text.done".into(),
            text: Some(text.clone()),
            logprobs: Some(Vec::new()),
            ..part()
        });
        send(ResponseStreamEvent {
            kind: "response.content_part.done".into(),
            part: Some(ResponseOutputText::new(text.clone())),
            ..part()
        });
        send(ResponseStreamEvent {
            output_index: Some(0),
            item: Some(shape.message("completed", Some(&text))),
            ..ResponseStreamEvent::new("response.output_item.done", 0)
        });
        send(with_response(
            "response.completed",
            shape.object(Some(&outcome)),
        ));
    });
    Ok(sse(rx, &conversation))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_response_id_names_its_conversation() {
        let conv = uuid::Uuid::new_v4().hyphenated().to_string();
        let id = response_id(&conv);
        assert!(id.starts_with("resp_"));
        assert_eq!(conversation_of(&id).as_deref(), Some(conv.as_str()));
        assert_ne!(id, response_id(&conv));
        for bad in [
            "resp_x",
            "resp_",
            "abc",
            &format!("resp_{}", "g".repeat(48)),
        ] {
            assert_eq!(conversation_of(bad), None, "{bad}");
        }
    }
}
