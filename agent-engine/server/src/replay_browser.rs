//! Records the agent's browser for replay (`tandem_replay::frames`): one frame after each
//! browser action, and the live screencast at a low rate while someone watches it (recording
//! never starts the screencast itself). Each frame is listed after the newest event recorded
//! before it; its address is masked with the conversation's masker.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use base64::Engine as _;
use tandem_browser::Browser;
use tandem_protocol::Event;
use tandem_replay::{FrameKind, FrameWriter};
use tandem_sdk::ConversationHandle;
use tokio::sync::broadcast::error::RecvError;

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
        loop {
            let (data, url, kind) = tokio::select! {
                event = events.recv() => match event {
                    Ok(event) => {
                        last_event = Some(event.id().to_owned());
                        if !is_browser_action(&event) {
                            continue;
                        }
                        let Some((data, url)) = browser.capture().await else { continue };
                        (data, url, FrameKind::Action)
                    }
                    Err(RecvError::Lagged(_)) => continue,
                    Err(RecvError::Closed) => break,
                },
                changed = frames.changed() => {
                    if changed.is_err() {
                        break;
                    }
                    let Some(frame) = frames.borrow_and_update().clone() else { continue };
                    (frame.data.to_string(), browser.state().url, FrameKind::Screencast)
                }
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
