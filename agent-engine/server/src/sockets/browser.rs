//! `/sockets/browser/{conversation_id}` (Tandem): the agent's browser live. After the auth
//! frame the server sends the state (who drives, URL, title, tabs, a pending handoff) on
//! connect and on every change, and the active tab's screencast frames as they come (only the
//! latest is kept, so a slow client skips frames instead of queueing them). The client takes
//! control, hands back, and while it drives sends mouse, key, text and navigation frames; any
//! input while the agent drives is refused with an error frame and does nothing.

use std::sync::Arc;

use axum::extract::Path as UrlPath;
use axum::extract::ws::{Message as WsMessage, WebSocket};
use axum::response::Response;
use tandem_browser::{Browser, Frame};
use tandem_protocol::{BrowserClientFrame, BrowserServerFrame};
use tokio::sync::mpsc;

use super::Upgrade;
use crate::AppState;
use crate::auth::{CLOSE_NOT_FOUND, close};
use crate::registry::Live;

/// Upgrades to the browser socket.
pub async fn handler(up: Upgrade, UrlPath(raw): UrlPath<String>) -> Response {
    up.serve_first_frame(move |socket, state| serve(socket, state, raw))
}

async fn send(socket: &mut WebSocket, frame: &BrowserServerFrame) -> bool {
    socket
        .send(WsMessage::Text(frame.to_json().into()))
        .await
        .is_ok()
}

fn frame_of(f: &Frame) -> BrowserServerFrame {
    BrowserServerFrame::Frame {
        format: "jpeg".into(),
        data: f.data.to_string(),
        width: f.width,
        height: f.height,
    }
}

fn error(message: impl Into<String>) -> BrowserServerFrame {
    BrowserServerFrame::Error {
        message: message.into(),
    }
}

async fn serve(mut socket: WebSocket, state: AppState, raw: String) {
    let Some(live) = super::conversation(&mut socket, &state, &raw).await else {
        return;
    };
    let Some(browser) = live.browser.clone() else {
        let _ = send(
            &mut socket,
            &error("This conversation has no browser tools"),
        )
        .await;
        close(
            &mut socket,
            CLOSE_NOT_FOUND,
            "No browser in this conversation",
        )
        .await;
        return;
    };
    let _guard = live.watch();
    let mut states = browser.watch_state();
    let mut frames = browser.watch_frames();
    let first = BrowserServerFrame::State(states.borrow_and_update().clone());
    if !send(&mut socket, &first).await {
        return;
    }
    // Input is applied in order on its own task, so a slow navigation never holds up frames.
    let (inputs, refusals) = input_worker(Arc::clone(&live), browser.clone());
    let mut refusals = refusals;
    let mut last_seq = 0;
    // The screencast sends frames only when the page repaints: a viewer joining while it runs
    // gets the latest frame now, or a still page would stay blank for them.
    let latest = frames.rx.borrow_and_update().clone();
    if let Some(f) = latest {
        last_seq = f.seq;
        if !send(&mut socket, &frame_of(&f)).await {
            return;
        }
    }
    let mut ping = tokio::time::interval(super::PING_INTERVAL);
    ping.tick().await;
    loop {
        tokio::select! {
            changed = states.changed() => {
                if changed.is_err() { break }
                let s = states.borrow_and_update().clone();
                if !send(&mut socket, &BrowserServerFrame::State(s)).await { break }
            }
            changed = frames.rx.changed() => {
                if changed.is_err() { break }
                let frame = frames.rx.borrow_and_update().clone();
                if let Some(f) = frame.filter(|f| f.seq > last_seq) {
                    last_seq = f.seq;
                    if !send(&mut socket, &frame_of(&f)).await { break }
                }
            }
            refusal = refusals.recv() => {
                let Some(message) = refusal else { break };
                if !send(&mut socket, &error(message)).await { break }
            }
            incoming = socket.recv() => match incoming {
                Some(Ok(WsMessage::Text(t))) => match serde_json::from_str::<BrowserClientFrame>(t.as_str()) {
                    Ok(BrowserClientFrame::Auth { .. }) => {}
                    Ok(frame) => { let _ = inputs.send(frame); }
                    Err(e) => {
                        let message = format!("not a browser frame ({e}); expected {{\"type\": take_control | hand_back | mouse | key | text | navigate | back | forward | reload | switch_tab, ...}}");
                        if !send(&mut socket, &error(message)).await { break }
                    }
                },
                Some(Ok(WsMessage::Binary(_))) => {
                    if !send(&mut socket, &error("binary frames are not accepted; send JSON text frames")).await { break }
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

/// Applies the client's frames one after another; refusals come back as messages.
fn input_worker(
    live: Arc<Live>,
    browser: Browser,
) -> (
    mpsc::UnboundedSender<BrowserClientFrame>,
    mpsc::UnboundedReceiver<String>,
) {
    let (tx, mut rx) = mpsc::unbounded_channel::<BrowserClientFrame>();
    let (refuse, refusals) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(frame) = rx.recv().await {
            let result = match frame {
                BrowserClientFrame::TakeControl => crate::browser::take_control(&live)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                BrowserClientFrame::HandBack { note } => crate::browser::hand_back(&live, &note)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                input => browser.person_input(input).await.map_err(|e| e.to_string()),
            };
            if let Err(message) = result
                && refuse.send(message).is_err()
            {
                break;
            }
        }
    });
    (tx, refusals)
}
