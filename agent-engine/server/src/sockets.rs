//! WebSocket endpoints: `/sockets/events/{id}` (upstream's event stream), `/sockets/bash-events`
//! (upstream's bash stream), and Tandem's `/sockets/pty/{id}` (the agent's terminal or a shell of
//! one's own), `/sockets/browser/{id}` and `/sockets/vnc/{id}` (the desktop). Each is opened
//! through [`Upgrade`], which authenticates the client before any data flows: upstream's two
//! also by a key up front ([`Upgrade::serve`], [`crate::auth::authenticate`]), Tandem's three
//! only by the first frame ([`Upgrade::serve_first_frame`]).

use std::future::Future;
use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::extract::ws::rejection::WebSocketUpgradeRejection;
use axum::extract::ws::{WebSocket, WebSocketUpgrade};
use axum::http::request::Parts;
use axum::response::Response;

use crate::AppState;
use crate::auth::{CLOSE_NOT_FOUND, authenticate, authenticate_first_frame, close, socket_pre_key};
use crate::extract::QueryMap;
use crate::registry::Live;

pub mod bash;
pub mod browser;
pub mod events;
pub mod pty;
pub mod vnc;

/// How often the server pings an idle socket.
pub const PING_INTERVAL: std::time::Duration = std::time::Duration::from_secs(20);

/// The largest message a client may send on Tandem's sockets (browser, PTY, VNC): a paste, a
/// key or RFB input is far smaller. A larger one ends the connection before it is buffered
/// (the browser socket closes politely, 1009, above its own smaller limit first).
pub const MAX_MESSAGE: usize = 1 << 20;

/// The largest message on upstream's sockets (events, bash), as upstream's server allows.
pub const UPSTREAM_MAX_MESSAGE: usize = 16 << 20;

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
    /// Accepts one of upstream's sockets and runs `serve` on it once the client has
    /// authenticated (the key up front, as upstream's clients send it, else an auth frame
    /// first); a client that does not is closed with 4001.
    pub fn serve<F, Fut>(self, serve: F) -> Response
    where
        F: FnOnce(WebSocket, AppState) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let Self { ws, state, pre_key } = self;
        let ws = ws
            .max_message_size(UPSTREAM_MAX_MESSAGE)
            .max_frame_size(UPSTREAM_MAX_MESSAGE);
        ws.on_upgrade(move |mut socket| async move {
            if authenticate(&mut socket, &state.config.session_keys, pre_key).await {
                serve(socket, state).await;
            }
        })
    }

    /// Accepts one of Tandem's sockets and runs `serve` on it once the client's first frame
    /// has authenticated it; a key in the URL or a header closes it with 4001, as does a
    /// missing or wrong auth frame.
    pub fn serve_first_frame<F, Fut>(self, serve: F) -> Response
    where
        F: FnOnce(WebSocket, AppState) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let Self { ws, state, pre_key } = self;
        let ws = ws.max_message_size(MAX_MESSAGE).max_frame_size(MAX_MESSAGE);
        ws.on_upgrade(move |mut socket| async move {
            let keys = &state.config.session_keys;
            if authenticate_first_frame(&mut socket, keys, pre_key.is_some()).await {
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
