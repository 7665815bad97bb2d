//! `/sockets/browser/{conversation_id}` (Tandem): the agent's browser live. After the auth
//! frame the server sends the state (who drives, URL, title, loading, tabs, a pending handoff)
//! on connect and on every change, and the active tab's screencast frames as they come. The
//! client takes control, hands back, marks text as secret, and while it drives sends mouse,
//! key, text and navigation frames; any input while the agent drives is refused with an error
//! frame and does nothing.
//!
//! Every queue between the client and the browser is bounded, each with its policy:
//! - **Frames and state toward the client: keep the newest.** Both are `watch` values; a slow
//!   client skips frames instead of queueing them, and the server holds one of each.
//! - **Input from the client: backpressure.** Frames wait in a queue of [`INPUT_QUEUE`] and are
//!   applied in order on their own task; pointer moves are coalesced (a move replaces a move
//!   at the queue's end). While the queue is full the socket stops reading the client, so the
//!   client's own sends wait. A client that keeps it from draining below half for
//!   [`INPUT_STALL`] after it filled is flooding and is closed (1008) with the reason.
//! - **Refusals toward the client: at most [`REFUSALS`] waiting**; further ones are dropped
//!   until the client reads.
//! - **A client that does not read**: a frame not taken within [`SEND_STALL`] closes the
//!   socket (1008) with the reason; nothing queues meanwhile.
//! - **Garbage**: a frame over [`MAX_FRAME`] bytes is closed at once (1009); frames that are
//!   not browser frames get an error frame each, and after [`GARBAGE_LIMIT`] more bad frames
//!   than good ones the socket is closed (1008) with the reason.
//!
//! Whatever one client does, the others (and the agent) keep being served: each socket has its
//! own queue and task.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

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

/// Input frames waiting to be applied, per socket.
pub const INPUT_QUEUE: usize = 64;
/// How long the input queue may stay above half full, once it filled, before the client counts
/// as flooding.
pub const INPUT_STALL: Duration = Duration::from_secs(10);
/// Refusals waiting to be sent, per socket.
pub const REFUSALS: usize = 16;
/// How long one frame toward the client may wait to be taken.
pub const SEND_STALL: Duration = Duration::from_secs(10);
/// The largest client frame accepted (input frames are small).
pub const MAX_FRAME: usize = 64 * 1024;
/// How many more bad frames than good ones close the socket.
pub const GARBAGE_LIMIT: u32 = 16;

const CLOSE_POLICY: u16 = 1008;
const CLOSE_TOO_BIG: u16 = 1009;

/// Why the socket ends.
enum End {
    /// The client left (or the connection broke).
    Gone,
    /// The server closes it: code and reason.
    Close(u16, String),
}

/// Sends `message` unless the client has not taken a frame for [`SEND_STALL`].
async fn send_within(socket: &mut WebSocket, message: WsMessage) -> Result<(), End> {
    match tokio::time::timeout(SEND_STALL, socket.send(message)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(End::Gone),
        Err(_) => Err(End::Close(
            CLOSE_POLICY,
            format!(
                "the client took no frame for {} s (it is not reading); closed",
                SEND_STALL.as_secs()
            ),
        )),
    }
}

async fn send_frame(socket: &mut WebSocket, frame: &BrowserServerFrame) -> Result<(), End> {
    send_within(socket, WsMessage::Text(frame.to_json().into())).await
}

/// Queues `frame`, coalescing a pointer move with a move at the queue's end.
fn enqueue(backlog: &mut VecDeque<BrowserClientFrame>, frame: BrowserClientFrame) {
    let is_move = |f: &BrowserClientFrame| matches!(f, BrowserClientFrame::Mouse { action, .. } if action == "move");
    if is_move(&frame)
        && let Some(last) = backlog.back_mut()
        && is_move(last)
    {
        *last = frame;
        return;
    }
    backlog.push_back(frame);
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
    match run(&mut socket, &live, &browser).await {
        End::Gone => {}
        End::Close(code, reason) => {
            tracing::debug!(conversation = %live.handle.id(), "browser socket closed: {reason}");
            let _ = tokio::time::timeout(SEND_STALL, close(&mut socket, code, &reason)).await;
        }
    }
}

async fn run(socket: &mut WebSocket, live: &Arc<Live>, browser: &Browser) -> End {
    let mut states = browser.watch_state();
    let mut frames = browser.watch_frames();
    let first = BrowserServerFrame::State(states.borrow_and_update().clone());
    if let Err(end) = send_frame(socket, &first).await {
        return end;
    }
    // Input is applied in order on its own task, so a slow navigation never holds up frames.
    let (inputs, mut refusals) = input_worker(Arc::clone(live), browser.clone());
    let mut backlog: VecDeque<BrowserClientFrame> = VecDeque::with_capacity(INPUT_QUEUE);
    let mut full_since: Option<tokio::time::Instant> = None;
    let mut garbage: u32 = 0;
    let mut last_seq = 0;
    // The screencast sends frames only when the page repaints: a viewer joining while it runs
    // gets the latest frame now, or a still page would stay blank for them.
    let latest = frames.rx.borrow_and_update().clone();
    if let Some(f) = latest {
        last_seq = f.seq;
        if let Err(end) = send_frame(socket, &frame_of(&f)).await {
            return end;
        }
    }
    let mut ping = tokio::time::interval(super::PING_INTERVAL);
    ping.tick().await;
    loop {
        let full = backlog.len() >= INPUT_QUEUE;
        // A burst drains; a flood keeps the queue topped up as the browser takes each frame,
        // so only falling to half full ends the count.
        if full && full_since.is_none() {
            full_since = Some(tokio::time::Instant::now());
        } else if backlog.len() <= INPUT_QUEUE / 2 {
            full_since = None;
        }
        let flood_at = full_since.map(|t| t + INPUT_STALL);
        tokio::select! {
            changed = states.changed() => {
                if changed.is_err() { return End::Gone }
                let s = states.borrow_and_update().clone();
                if let Err(end) = send_frame(socket, &BrowserServerFrame::State(s)).await { return end }
            }
            changed = frames.rx.changed() => {
                if changed.is_err() { return End::Gone }
                let frame = frames.rx.borrow_and_update().clone();
                if let Some(f) = frame.filter(|f| f.seq > last_seq) {
                    last_seq = f.seq;
                    if let Err(end) = send_frame(socket, &frame_of(&f)).await { return end }
                }
            }
            refusal = refusals.recv() => {
                let Some(message) = refusal else { return End::Gone };
                if let Err(end) = send_frame(socket, &error(message)).await { return end }
            }
            permit = inputs.reserve(), if !backlog.is_empty() => {
                let Ok(permit) = permit else { return End::Gone };
                if let Some(frame) = backlog.pop_front() {
                    permit.send(frame);
                }
            }
            () = async {
                match flood_at {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            } => {
                return End::Close(
                    CLOSE_POLICY,
                    format!(
                        "input arrives faster than the browser applies it ({INPUT_QUEUE} frames waited for {} s); closed",
                        INPUT_STALL.as_secs()
                    ),
                );
            }
            // While the queue is full the client is not read: backpressure.
            incoming = socket.recv(), if !full => match incoming {
                Some(Ok(WsMessage::Text(t))) => {
                    if t.as_str().len() > MAX_FRAME {
                        return End::Close(CLOSE_TOO_BIG, format!("a frame of {} bytes; browser frames are at most {MAX_FRAME}", t.as_str().len()));
                    }
                    match serde_json::from_str::<BrowserClientFrame>(t.as_str()) {
                        Ok(BrowserClientFrame::Auth { .. }) => {}
                        Ok(frame) => {
                            garbage = garbage.saturating_sub(1);
                            enqueue(&mut backlog, frame);
                        }
                        Err(e) => {
                            garbage += 1;
                            let message = format!("not a browser frame ({e}); expected {{\"type\": take_control | hand_back | mark_secret | mouse | key | text | navigate | back | forward | reload | switch_tab, ...}}");
                            if let Some(end) = too_much_garbage(garbage) { return end }
                            if let Err(end) = send_frame(socket, &error(message)).await { return end }
                        }
                    }
                }
                Some(Ok(WsMessage::Binary(b))) => {
                    if b.len() > MAX_FRAME {
                        return End::Close(CLOSE_TOO_BIG, format!("a frame of {} bytes; browser frames are at most {MAX_FRAME}", b.len()));
                    }
                    garbage += 1;
                    if let Some(end) = too_much_garbage(garbage) { return end }
                    if let Err(end) = send_frame(socket, &error("binary frames are not accepted; send JSON text frames")).await { return end }
                }
                Some(Ok(WsMessage::Ping(_) | WsMessage::Pong(_))) => {}
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => return End::Gone,
            },
            _ = ping.tick() => {
                if let Err(end) = send_within(socket, WsMessage::Ping(Default::default())).await { return end }
            }
        }
    }
}

fn too_much_garbage(garbage: u32) -> Option<End> {
    (garbage > GARBAGE_LIMIT).then(|| {
        End::Close(
            CLOSE_POLICY,
            format!(
                "{GARBAGE_LIMIT} more frames that are not browser frames than ones that are; closed"
            ),
        )
    })
}

/// Applies the client's frames one after another (one waits at a time: the socket's backlog
/// is the queue); refusals come back as messages, at most [`REFUSALS`] waiting.
fn input_worker(
    live: Arc<Live>,
    browser: Browser,
) -> (mpsc::Sender<BrowserClientFrame>, mpsc::Receiver<String>) {
    let (tx, mut rx) = mpsc::channel::<BrowserClientFrame>(1);
    let (refuse, refusals) = mpsc::channel(REFUSALS);
    tokio::spawn(async move {
        while let Some(frame) = rx.recv().await {
            let result = match frame {
                BrowserClientFrame::TakeControl => crate::takeover::take_control(&live)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                BrowserClientFrame::HandBack { note } => crate::takeover::hand_back(&live, &note)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string()),
                BrowserClientFrame::MarkSecret { text } => match browser.mark_secret(&text) {
                    Ok(secrets) => crate::takeover::register_secrets(&live, secrets)
                        .await
                        .map_err(|e| e.to_string()),
                    Err(e) => Err(e.to_string()),
                },
                input => browser.person_input(input).await.map_err(|e| e.to_string()),
            };
            if let Err(message) = result {
                match refuse.try_send(message) {
                    Ok(()) | Err(mpsc::error::TrySendError::Full(_)) => {}
                    Err(mpsc::error::TrySendError::Closed(_)) => break,
                }
            }
        }
    });
    (tx, refusals)
}
