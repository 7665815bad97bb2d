//! The person's side of the agent's browser: taking control, handing back, and the REST
//! mirror of the live view's control frames (`/api/conversations/{id}/browser/...`).
//!
//! Taking control refuses the agent's browser actions and pauses its run after the step in
//! flight (unless the agent itself asked for the person and is waiting for them). Handing
//! back records who drives again, tells the agent what changed — as the answer of its
//! `browser_request_handoff`, or else as a user message starting with `[browser]` — and
//! resumes the run the takeover paused. Each change of driver is a
//! `ConversationStateUpdateEvent` with key `browser_control` in the conversation's events.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use serde_json::json;
use tandem_browser::{Browser, Resume};
use tandem_protocol::{BrowserState, HandBackRequest, Message};
use tandem_sdk::SecretSource;

use crate::AppState;
use crate::error::{ApiError, Result};
use crate::extract::{ApiJson, conversation_id};
use crate::registry::Live;

/// The key of the events that record who drives the browser.
pub const CONTROL_KEY: &str = "browser_control";

/// The conversation's browser, or 409 when its agent has no browser tools.
pub fn browser_of(live: &Live) -> Result<&Browser> {
    live.browser.as_ref().ok_or_else(|| {
        ApiError::Conflict(
            "this conversation has no browser: its agent was started without {\"name\": \"browser_tool_set\"} among its tools".into(),
        )
    })
}

/// A person takes control (idempotent). Answers the state. Who drives, and whether the
/// hand-back resumes the run, is the browser's state machine's alone
/// ([`Browser::take_control`]); this records the change and pauses a running agent before
/// the next hand-back may start.
pub async fn take_control(live: &Arc<Live>) -> Result<BrowserState> {
    let browser = browser_of(live)?;
    if let Some(takeover) = browser.take_control(|| live.running()).await {
        // Paused first: nothing may keep the run going under the person.
        if takeover.pause_run {
            live.handle.pause().await?;
        }
        live.handle
            .record_state(
                CONTROL_KEY,
                json!({"driver": "person", "url": takeover.url, "title": takeover.title}),
            )
            .await?;
    }
    Ok(browser.state())
}

/// The person hands control back with `note` (idempotent). Answers the state. What the person
/// typed into password fields becomes a secret of the conversation first, so the event, the
/// agent's observation and its next LLM request are masked.
pub async fn hand_back(live: &Arc<Live>, note: &str) -> Result<BrowserState> {
    let browser = browser_of(live)?;
    let Some(mut over) = browser.hand_back(note).await else {
        return Ok(browser.state());
    };
    register_secrets(live, std::mem::take(&mut over.secrets)).await?;
    let back = over.back.clone();
    live.handle
        .record_state(
            CONTROL_KEY,
            json!({"driver": "agent", "url": back.url_after, "title": back.title_after,
                   "url_before": back.url_before, "title_before": back.title_before,
                   "note": back.note}),
        )
        .await?;
    if !over.answer() {
        let text = format!("[browser] {}", back.describe());
        live.handle.send_message(Message::user(text), false).await?;
    }
    if over.resume_run {
        // The pause takes effect after the step in flight; resume once the run has stopped
        // (asked again in the browser's turn), unless a takeover came first (it then owes the
        // resume at its own hand-back).
        let live = Arc::clone(live);
        let browser = browser.clone();
        tokio::spawn(async move {
            loop {
                live.handle.wait_until_stopped().await;
                let resumed = browser
                    .resume_pending(
                        || live.running(),
                        || async {
                            if let Err(e) = live.handle.run().await {
                                tracing::debug!(conversation = %live.handle.id(), "not resumed after the hand-back: {e}");
                            }
                        },
                    )
                    .await;
                if resumed != Resume::NotStopped {
                    break;
                }
            }
        });
    }
    drop(over);
    Ok(browser.state())
}

/// Makes `(name, value)` pairs secrets of the conversation (masked as `<secret-hidden>`).
pub async fn register_secrets(live: &Live, secrets: Vec<(String, String)>) -> Result<()> {
    if secrets.is_empty() {
        return Ok(());
    }
    let description = "typed or marked as secret by the person in the agent's browser";
    let secrets = secrets
        .into_iter()
        .map(|(name, value)| {
            (
                name,
                SecretSource::Static {
                    value,
                    description: Some(description.to_owned()),
                },
            )
        })
        .collect();
    live.handle.update_secrets(secrets).await?;
    Ok(())
}

async fn live(state: &AppState, raw: &str) -> Result<Arc<Live>> {
    let id = conversation_id(raw)?;
    state.registry.get(&id).await
}

/// `GET /api/conversations/{id}/browser/state`.
pub async fn state_route(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Json<BrowserState>> {
    let live = live(&state, &raw).await?;
    Ok(Json(browser_of(&live)?.state()))
}

/// `POST /api/conversations/{id}/browser/take_control`.
pub async fn take_control_route(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
) -> Result<Json<BrowserState>> {
    let live = live(&state, &raw).await?;
    Ok(Json(take_control(&live).await?))
}

/// `POST /api/conversations/{id}/browser/hand_back`.
pub async fn hand_back_route(
    State(state): State<AppState>,
    UrlPath(raw): UrlPath<String>,
    ApiJson(body): ApiJson<HandBackRequest>,
) -> Result<Json<BrowserState>> {
    let live = live(&state, &raw).await?;
    Ok(Json(hand_back(&live, &body.note).await?))
}
