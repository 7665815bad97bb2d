//! WebSocket endpoints: `/sockets/events/{id}` (upstream's event stream), `/sockets/bash-events`
//! (upstream's bash stream), and Tandem's `/sockets/pty/{id}` (the agent's terminal or a shell of
//! one's own), `/sockets/browser/{id}` and `/sockets/vnc/{id}` (the desktop). Each is opened through [`Upgrade`], which authenticates the client
//! ([`crate::auth::authenticate`]) before any data flows.

use std::future::Future;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{WebSocket, WebSocketUpgrade};
use axum::http::request::Parts;
use axum::response::Response;

use crate::AppState;
use crate::auth::{CLOSE_NOT_FOUND, authenticate, close, socket_pre_key};
use crate::extract::QueryMap;
use crate::registry::Live;

pub mod bash;
pub mod browser;
pub mod events;
pub mod pty;
pub mod vnc;

/// How often the server pings an idle socket.
pub const PING_INTERVAL: std::time::Duration = std::time::Duration::from_secs(20);

/// A request to open a socket: the upgrade, the server state, and the key the request carries
/// up front (the `X-Session-API-Key` header, else `?session_api_key=`), if any.
pub struct Upgrade {
    ws: WebSocketUpgrade,
    state: AppState,
    pre_key: Option<String>,
}

impl FromRequestParts<AppState> for Upgrade {
    type Rejection = WebSocketUpgradeRejection;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let ws = WebSocketUpgrade::from_request_parts(parts, state).await?;
        let query = QueryMap::parse(parts.uri.query().unwrap_or(""));
        Ok(Self {
            ws,
            state: state.clone(),
            pre_key: socket_pre_key(&parts.headers, &query),
        })
    }
}

impl Upgrade {
    /// Accepts the socket and runs `serve` on it once the client has authenticated (the key up
    /// front, else an auth frame first); a client that does not is closed with 4001.
    pub fn serve<F, Fut>(self, serve: F) -> Response
    where
        F: FnOnce(WebSocket, AppState) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let Self { ws, state, pre_key } = self;
        ws.on_upgrade(move |mut socket| async move {
            if authenticate(&mut socket, &state.config.session_keys, pre_key).await {
                serve(socket, state).await;
            }
        })
    }
}

/// The conversation `raw` names, or `None` once the socket is closed with 4004 (unknown).
async fn conversation(socket: &mut WebSocket, state: &AppState, raw: &str) -> Option<Arc<Live>> {
    let live = match crate::extract::conversation_id(raw) {
        Ok(id) => state.registry.get(&id).await.ok(),
        Err(_) => None,
    };
    if live.is_none() {
        close(socket, CLOSE_NOT_FOUND, "Conversation not found").await;
    }
    live
}
