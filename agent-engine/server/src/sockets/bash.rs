//! `/sockets/bash-events` (upstream): after authentication, every server-level `BashCommand`
//! and `BashOutput` as it happens; a client frame holding an `ExecuteBashRequest` starts a
//! command. Bad frames get a `ServerErrorEvent`-shaped reply.

use axum::extract::ws::{Message as WsMessage, WebSocket};
use axum::response::Response;
use serde_json::json;
use tandem_protocol::ExecuteBashRequest;
use tokio::sync::broadcast;

use super::Upgrade;
use crate::AppState;

/// Upgrades to the bash socket.
pub async fn handler(up: Upgrade) -> Response {
    up.serve(serve)
}

async fn serve(mut socket: WebSocket, state: AppState) {
    let mut rx = state.bash.subscribe();
    let mut ping = tokio::time::interval(super::PING_INTERVAL);
    ping.tick().await;
    loop {
        tokio::select! {
            ev = rx.recv() => match ev {
                Ok(e) => {
                    let text = serde_json::to_string(&e).unwrap_or_default();
                    if socket.send(WsMessage::Text(text.into())).await.is_err() { break }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => break,
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(WsMessage::Text(t))) => {
                    let v: serde_json::Value = serde_json::from_str(t.as_str()).unwrap_or_default();
                    if v.get("type").and_then(|t| t.as_str()) == Some("auth") {
                        continue;
                    }
                    match serde_json::from_value::<ExecuteBashRequest>(v) {
                        Ok(req) if !req.command.trim().is_empty() => {
                            state.bash.start(req);
                        }
                        Ok(_) | Err(_) => {
                            let err = json!({"kind": "ServerErrorEvent", "source": "environment", "id": uuid::Uuid::new_v4().to_string(),
                                "timestamp": tandem_protocol::now_timestamp(), "code": "invalid_frame",
                                "detail": "Expected {\"command\": \"...\", \"cwd\"?: \"...\", \"timeout\"?: seconds}"});
                            if socket.send(WsMessage::Text(err.to_string().into())).await.is_err() { break }
                        }
                    }
                }
                Some(Ok(WsMessage::Binary(_) | WsMessage::Ping(_) | WsMessage::Pong(_))) => {}
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => break,
            },
            _ = ping.tick() => {
                if socket.send(WsMessage::Ping(Default::default())).await.is_err() { break }
            }
        }
    }
}
