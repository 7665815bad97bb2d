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
use std::sync::atomic::Ordering;

use axum::Json;
use axum::extract::{Path as UrlPath, State};
use serde_json::json;
use tandem_browser::Browser;
use tandem_protocol::{BrowserState, HandBackRequest, Message};

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

/// A person takes control (idempotent). Answers the state.
pub async fn take_control(live: &Arc<Live>) -> Result<BrowserState> {
    let browser = browser_of(live)?;
    if browser.take_control() {
        let s = browser.state();
        live.handle
            .record_state(
                CONTROL_KEY,
                json!({"driver": "person", "url": s.url, "title": s.title}),
            )
            .await?;
        // An agent waiting in browser_request_handoff is already waiting for the person.
        if live.running() && !browser.handoff_pending() {
            live.resume_on_hand_back.store(true, Ordering::SeqCst);
            live.handle.pause().await?;
        }
    }
    Ok(browser.state())
}

/// The person hands control back with `note` (idempotent). Answers the state.
pub async fn hand_back(live: &Arc<Live>, note: &str) -> Result<BrowserState> {
    let browser = browser_of(live)?;
    let Some((back, answered)) = browser.hand_back(note) else {
        return Ok(browser.state());
    };
    live.handle
        .record_state(
            CONTROL_KEY,
            json!({"driver": "agent", "url": back.url_after, "title": back.title_after,
                   "url_before": back.url_before, "title_before": back.title_before,
                   "note": back.note}),
        )
        .await?;
    if !answered {
        let text = format!("[browser] {}", back.describe());
        live.handle.send_message(Message::user(text), false).await?;
    }
    if live.resume_on_hand_back.swap(false, Ordering::SeqCst) {
        // The pause takes effect after the step in flight; resume once it has.
        let live = Arc::clone(live);
        tokio::spawn(async move {
            live.handle.wait_until_stopped().await;
            if let Err(e) = live.handle.run().await {
                tracing::debug!(conversation = %live.handle.id(), "not resumed after the hand-back: {e}");
            }
        });
    }
    Ok(browser.state())
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
