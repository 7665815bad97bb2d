//! `/sockets/pty/{conversation_id}` (Tandem): an interactive terminal. By default it attaches
//! to the agent's own shell (the terminal tool's PTY, started if the agent has not used it
//! yet): the scrollback first, then live output, so a person sees the agent's commands and can
//! type into the same shell. `?mode=shell` opens a separate bash in the workspace instead,
//! ended when the socket closes. Output goes out as binary frames; the client sends
//! `{"type":"input","data"}` or `{"type":"resize","rows","cols"}` text frames (or raw binary
//! input); while the shell has not taken [`INPUT_CAP`] bytes of typed input, the socket is not
//! read (backpressure). Authentication: the first frame only (a key in the URL or a header
//! closes it, 4001).
//!
//! [`INPUT_CAP`]: tandem_tools::terminal::INPUT_CAP

use std::sync::Arc;

use axum::extract::Path as UrlPath;
use axum::extract::ws::{Message as WsMessage, WebSocket};
use axum::response::Response;
use tandem_protocol::{PtyClientFrame, PtyServerFrame};
use tandem_sdk::Tool;
use tandem_tools::terminal::{Lane, TerminalSession, TerminalTool};
use tokio::sync::broadcast;

use super::Upgrade;
use crate::AppState;
use crate::auth::close;
use crate::extract::QueryMap;

/// Upgrades to the PTY socket.
pub async fn handler(up: Upgrade, UrlPath(raw): UrlPath<String>, q: QueryMap) -> Response {
    up.serve_first_frame(move |socket, state| serve(socket, state, raw, q))
}

async fn start(
    tool: Arc<TerminalTool>,
    dir: std::path::PathBuf,
) -> std::io::Result<Arc<TerminalSession>> {
    tokio::task::spawn_blocking(move || tool.start_session(&dir))
        .await
        .map_err(std::io::Error::other)?
}

async fn serve(mut socket: WebSocket, state: AppState, raw: String, q: QueryMap) {
    let Some(live) = super::conversation(&mut socket, &state, &raw).await else {
        return;
    };
    let _guard = live.watch();
    let own_shell = q.get("mode") == Some("shell");
    let tool = if own_shell {
        let tool = TerminalTool::new();
        tool.record_to(Arc::clone(&live.recording.recorder), Lane::Shell);
        Arc::new(tool)
    } else {
        Arc::clone(&live.terminal)
    };
    let session = match start(Arc::clone(&tool), live.workspace.clone()).await {
        Ok(s) => s,
        Err(e) => {
            let _ = socket
                .send(WsMessage::Text(
                    PtyServerFrame::error(None, format!("cannot start a shell: {e}"))
                        .to_json()
                        .into(),
                ))
                .await;
            close(&mut socket, 1011, "cannot start a shell").await;
            return;
        }
    };
    if own_shell {
        session.mask_with(live.handle.masker());
    }
    let (scrollback, mut rx) = session.attach();
    if !scrollback.is_empty()
        && socket
            .send(WsMessage::Binary(scrollback.into()))
            .await
            .is_err()
    {
        return;
    }
    let mut ping = tokio::time::interval(super::PING_INTERVAL);
    ping.tick().await;
    loop {
        // Input the shell has not taken yet is bounded: while it is at the cap the client is
        // not read (backpressure), and output keeps flowing.
        let full = session.queued_input() >= tandem_tools::terminal::INPUT_CAP;
        tokio::select! {
            () = session.input_room(), if full => {}
            out = rx.recv() => match out {
                Ok(bytes) => if socket.send(WsMessage::Binary(bytes)).await.is_err() { break },
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(broadcast::error::RecvError::Closed) => break,
            },
            incoming = socket.recv(), if !full => match incoming {
                Some(Ok(WsMessage::Text(t))) => {
                    if let Some(reply) = on_frame(&session, t.as_str())
                        && socket.send(WsMessage::Text(reply.into())).await.is_err() { break }
                }
                Some(Ok(WsMessage::Binary(b))) => {
                    let _ = session.write_input(&b);
                }
                Some(Ok(WsMessage::Ping(_) | WsMessage::Pong(_))) => {}
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => break,
            },
            _ = ping.tick() => {
                if socket.send(WsMessage::Ping(Default::default())).await.is_err() { break }
            }
        }
    }
    if own_shell {
        tool.close();
    }
}

/// Applies one client frame; returns an error frame for bad input.
fn on_frame(session: &TerminalSession, text: &str) -> Option<String> {
    match serde_json::from_str::<PtyClientFrame>(text) {
        Ok(PtyClientFrame::Input { data }) => session.write_input(data.as_bytes()).err().map(|e| PtyServerFrame::error(None, e.to_string()).to_json()),
        Ok(PtyClientFrame::Resize { rows, cols }) => session.resize(rows.max(1), cols.max(1)).err().map(|e| PtyServerFrame::error(None, e.to_string()).to_json()),
        Ok(PtyClientFrame::Auth { .. }) => None,
        Err(e) => Some(PtyServerFrame::error(Some("invalid_frame"), format!("expected {{\"type\":\"input\",\"data\"}} or {{\"type\":\"resize\",\"rows\",\"cols\"}}: {e}")).to_json()),
    }
}
