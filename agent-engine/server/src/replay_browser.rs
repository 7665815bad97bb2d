//! Records the agent's browser for replay (`tandem_replay::frames`): one frame after each
//! browser action, and while someone watches the live screencast (recording never starts it),
//! a frame when the page changed, at most one per `SCREENCAST_INTERVAL` (the last change is
//! caught when the interval ends). Frames are Chromium's own JPEGs of the visible page at
//! quality 40 ([`Browser::capture`]), smaller than the viewer's. Each is listed after the
//! newest event recorded before it; its address is masked with the conversation's masker.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use tandem_browser::Browser;
use tandem_protocol::Event;
use tandem_replay::frames::SCREENCAST_INTERVAL;
use tandem_replay::{FrameKind, FrameWriter};
use tandem_sdk::ConversationHandle;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

/// Stops the recording when dropped (with the conversation's [`Live`](crate::registry::Live)).
#[derive(Debug)]
pub struct BrowserRecording(tokio::task::AbortHandle);

impl Drop for BrowserRecording {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn is_browser_action(event: &Event) -> bool {
    matches!(event, Event::Observation(o) if o.tool_name.starts_with("browser_"))
}

/// Waits until `due`, or forever without one.
async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Starts recording `browser` into `dir` for the conversation of `handle`.
pub fn record(browser: Browser, handle: &ConversationHandle, dir: PathBuf) -> BrowserRecording {
    let mut events = handle.subscribe_live();
    let masking = handle.clone();
    let mut last_event = handle.events().last().map(|e| e.id().to_owned());
    let task = tokio::spawn(async move {
        let opened = tokio::task::spawn_blocking(move || FrameWriter::open(&dir)).await;
        let writer = match opened {
            Ok(Ok(w)) => Arc::new(Mutex::new(w)),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "the browser is not recorded for replay");
                return;
            }
            Err(_) => return,
        };
        let mut frames = browser.frames_passively();
        frames.borrow_and_update();
        let mut last_capture: Option<Instant> = None;
        // A change seen within the interval: captured when the interval ends.
        let mut due: Option<Instant> = None;
        loop {
            let kind = tokio::select! {
                event = events.recv() => match event {
                    Ok(event) => {
                        last_event = Some(event.id().to_owned());
                        if !is_browser_action(&event) {
                            continue;
                        }
                        FrameKind::Action
                    }
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => break,
                },
                changed = frames.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    frames.borrow_and_update();
                    let ready = last_capture.is_none_or(|t| t.elapsed() >= SCREENCAST_INTERVAL);
                    if !ready {
                        due = due.or(last_capture.map(|t| t + SCREENCAST_INTERVAL));
                        continue;
                    }
                    FrameKind::Screencast
                }
                () = sleep_until(due) => {
                    due = None;
                    FrameKind::Screencast
                }
            };
            if kind == FrameKind::Screencast {
                last_capture = Some(Instant::now());
            }
            let Some((data, url)) = browser.capture().await else {
                continue;
            };
            let Ok(jpeg) = base64::engine::general_purpose::STANDARD.decode(data.as_bytes()) else {
                continue;
            };
            let url = masking.masker().mask(&url);
            let writer = Arc::clone(&writer);
            let after = last_event.clone();
            let written = tokio::task::spawn_blocking(move || {
                let mut w = writer.lock().unwrap_or_else(|e| e.into_inner());
                w.write(&jpeg, &url, after.as_deref(), kind)
            })
            .await;
            if let Ok(Err(e)) = written {
                tracing::warn!(error = %e, "the browser's replay recording stopped");
                break;
            }
        }
    });
    BrowserRecording(task.abort_handle())
}
