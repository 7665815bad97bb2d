//! Session-key authentication: the `X-Session-API-Key` header on every `/api` route (and a
//! Bearer token on the `/v1` gateway), and for sockets a first frame
//! `{"type":"auth","session_api_key"}` within 10 seconds — else the socket closes with 4001.
//! Upstream's sockets (`/sockets/events`, `/sockets/bash-events`) also take the header or the
//! deprecated `session_api_key` query parameter, as upstream's clients send them; Tandem's own
//! (PTY, VNC, browser) refuse a key in the URL or a header ([`authenticate_first_frame`]), so
//! it never sits in a URL, a proxy's log or a browser's history. Nothing here logs a key or a
//! request's URI.

use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message as WsMessage, WebSocket};
use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use subtle::{Choice, ConstantTimeEq};
use tandem_protocol::SocketAuthFrame;

use crate::AppState;
use crate::error::ApiError;
use crate::gateway::openai_error;

/// How long a socket may take to send its auth frame.
pub const AUTH_TIMEOUT: Duration = Duration::from_secs(10);
/// Close code for failed authentication.
pub const CLOSE_UNAUTHORIZED: u16 = 4001;
/// Close code for an unknown conversation.
pub const CLOSE_NOT_FOUND: u16 = 4004;

/// Whether `given` is one of `keys` (always true without keys). Compares in constant time.
pub fn key_ok(keys: &[String], given: Option<&str>) -> bool {
    if keys.is_empty() {
        return true;
    }
    let Some(given) = given else { return false };
    // Every key is compared, so the time taken does not say which one matched.
    keys.iter()
        .fold(Choice::from(0), |found, k| {
            found | k.as_bytes().ct_eq(given.as_bytes())
        })
        .into()
}

/// The key a request carries: `X-Session-API-Key`, else `Authorization: Bearer`.
pub fn header_key(headers: &HeaderMap) -> Option<String> {
    if let Some(k) = headers
        .get("x-session-api-key")
        .and_then(|v| v.to_str().ok())
    {
        return Some(k.to_owned());
    }
    headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        })
        .map(|k| k.trim().to_owned())
}

/// Middleware: `/api/*` needs a key (401 `{"detail":"Unauthorized"}`), `/v1/*` too (401 in
/// OpenAI's error shape). Health, info, docs and sockets pass (sockets authenticate
/// themselves).
pub async fn require_key(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let api = path == "/api" || path.starts_with("/api/");
    let gateway = path.starts_with("/v1/");
    if (api || gateway)
        && !key_ok(
            &state.config.session_keys,
            header_key(req.headers()).as_deref(),
        )
    {
        if gateway {
            return openai_error(
                axum::http::StatusCode::UNAUTHORIZED,
                "Invalid or missing session key (send it as a Bearer token).",
                "authentication_error",
                "invalid_api_key",
            );
        }
        return ApiError::Unauthorized.into_response();
    }
    state.touch();
    next.run(req).await
}

/// Closes `socket` with `code` and `reason`.
pub async fn close(socket: &mut WebSocket, code: u16, reason: &str) {
    let _ = socket
        .send(WsMessage::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })))
        .await;
}

/// Authenticates an accepted socket: `pre` is the key from the header or query (checked
/// first); otherwise the first frame must be an auth frame with a valid key within
/// [`AUTH_TIMEOUT`]. Closes with 4001 and returns false on failure.
pub async fn authenticate(socket: &mut WebSocket, keys: &[String], pre: Option<String>) -> bool {
    if keys.is_empty() {
        return true;
    }
    if let Some(k) = pre {
        if key_ok(keys, Some(&k)) {
            return true;
        }
        close(socket, CLOSE_UNAUTHORIZED, "Authentication failed").await;
        return false;
    }
    first_frame(socket, keys).await
}

/// Why a Tandem socket that got a key in its URL or a header is closed (a close frame's reason
/// holds at most 123 bytes).
pub const KEY_ONLY_IN_FIRST_FRAME: &str =
    "Send the session key in the first frame {\"type\":\"auth\"}, never in the URL or a header";

/// Authenticates an accepted Tandem socket (PTY, VNC, browser): the first frame must be an auth
/// frame with a valid key within [`AUTH_TIMEOUT`]. A request that carried a key up front
/// (`sent_up_front`: the header or `?session_api_key=`) is closed with 4001 and
/// [`KEY_ONLY_IN_FIRST_FRAME`], valid or not. Returns false once closed.
pub async fn authenticate_first_frame(
    socket: &mut WebSocket,
    keys: &[String],
    sent_up_front: bool,
) -> bool {
    if keys.is_empty() {
        return true;
    }
    if sent_up_front {
        close(socket, CLOSE_UNAUTHORIZED, KEY_ONLY_IN_FIRST_FRAME).await;
        return false;
    }
    first_frame(socket, keys).await
}

/// Waits for the auth frame; closes with 4001 and returns false when it is not one with a
/// valid key.
async fn first_frame(socket: &mut WebSocket, keys: &[String]) -> bool {
    let first = tokio::time::timeout(AUTH_TIMEOUT, async {
        loop {
            match socket.recv().await {
                Some(Ok(WsMessage::Text(t))) => return Some(t.to_string()),
                Some(Ok(WsMessage::Binary(b))) => {
                    return Some(String::from_utf8_lossy(&b).into_owned());
                }
                Some(Ok(WsMessage::Ping(_) | WsMessage::Pong(_))) => continue,
                _ => return None,
            }
        }
    })
    .await;
    let ok = match first {
        Ok(Some(text)) => serde_json::from_str::<SocketAuthFrame>(&text)
            .is_ok_and(|f| f.kind == "auth" && key_ok(keys, f.session_api_key.as_deref())),
        _ => false,
    };
    if !ok {
        close(socket, CLOSE_UNAUTHORIZED, "Authentication failed").await;
    }
    ok
}

/// The pre-accept key of a socket request: header, else `?session_api_key=`.
pub fn socket_pre_key(headers: &HeaderMap, query: &crate::extract::QueryMap) -> Option<String> {
    headers
        .get("x-session-api-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or_else(|| query.get("session_api_key").map(str::to_owned))
}
