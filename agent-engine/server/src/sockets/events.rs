//! `/sockets/events/{conversation_id}`: after authentication one `full_state` frame, the
//! replay (`resend_mode=all|since`), then every event as it is persisted, transient deltas,
//! and a `full_state` after every run. A client frame holding a `Message` is sent like
//! `POST /events` with `run: true`; anything else gets a `ServerErrorEvent` and the socket
//! stays open. Disconnecting changes nothing in the conversation.

use axum::extract::Path as UrlPath;
use axum::extract::ws::{Message as WsMessage, WebSocket};
use axum::response::Response;
use tandem_protocol::{Event, EventBase, Extra, SendMessageRequest, ServerErrorEvent, Source};

use super::Upgrade;
use crate::AppState;
use crate::auth::{CLOSE_NOT_FOUND, close};
use crate::conversations::{message_of, send};
use crate::event_routes::{FrameFeed, Resend};
use crate::extract::QueryMap;

/// Upgrades to the event socket.
pub async fn handler(up: Upgrade, UrlPath(raw): UrlPath<String>, q: QueryMap) -> Response {
    up.serve(move |socket, state| serve(socket, state, raw, q))
}

fn server_error(code: &str, detail: String) -> Event {
    Event::ServerError(ServerErrorEvent {
        base: EventBase::new(Source::Environment, None),
        code: code.into(),
        detail,
        extra: Extra::new(),
    })
}

async fn send_event(socket: &mut WebSocket, e: &Event) -> bool {
    match serde_json::to_string(e) {
        Ok(text) => socket.send(WsMessage::Text(text.into())).await.is_ok(),
        Err(_) => true,
    }
}

async fn serve(mut socket: WebSocket, state: AppState, raw: String, q: QueryMap) {
    let resend = match Resend::from_query(&q) {
        Ok(r) => r,
        Err(e) => {
            let _ = send_event(&mut socket, &server_error("invalid_query", e.to_string())).await;
            Resend::None
        }
    };
    let live = match crate::extract::conversation_id(&raw) {
        Ok(id) => state.registry.get(&id).await.ok(),
        Err(_) => None,
    };
    let Some(live) = live else {
        close(&mut socket, CLOSE_NOT_FOUND, "Conversation not found").await;
        return;
    };
    let mut feed = FrameFeed::new(live, &resend);
    let mut ping = tokio::time::interval(super::PING_INTERVAL);
    ping.tick().await;
    loop {
        tokio::select! {
            frame = feed.next() => match frame {
                Some(e) => if !send_event(&mut socket, &e).await { break },
                None => break,
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(WsMessage::Text(t))) => {
                    if let Some(reply) = on_client_frame(&feed, t.as_str()).await
                        && !send_event(&mut socket, &reply).await { break }
                }
                Some(Ok(WsMessage::Binary(b))) => {
                    let text = String::from_utf8_lossy(&b).into_owned();
                    if let Some(reply) = on_client_frame(&feed, &text).await
                        && !send_event(&mut socket, &reply).await { break }
                }
                Some(Ok(WsMessage::Ping(_) | WsMessage::Pong(_))) => {}
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => break,
            },
            _ = ping.tick() => {
                if socket.send(WsMessage::Ping(Default::default())).await.is_err() { break }
            }
        }
    }
}

/// Handles one client frame; returns an error frame to send back, if any.
async fn on_client_frame(feed: &FrameFeed, text: &str) -> Option<Event> {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            return Some(server_error(
                "invalid_json",
                format!("The frame is not JSON: {e}"),
            ));
        }
    };
    if value.get("type").and_then(|t| t.as_str()) == Some("auth") {
        return None;
    }
    let req: SendMessageRequest = match serde_json::from_value(value) {
        Ok(r) => r,
        Err(e) => {
            return Some(server_error(
                "invalid_message",
                format!("Expected a message {{\"role\":\"user\",\"content\":[...]}}: {e}"),
            ));
        }
    };
    let result = match message_of(&req, &["body"]) {
        Ok(m) => send(feed.live(), m, true).await,
        Err(e) => Err(e),
    };
    result.err().map(|e| server_error(e.code(), e.to_string()))
}
