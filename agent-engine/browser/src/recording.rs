//! `browser_start_recording` / `browser_stop_recording`: the session's screencast frames and
//! page changes, saved as numbered JSON files of events (`1.json`, `2.json`, ...) in
//! `.agent_tmp/browser_observations/recording-<timestamp>/`, flushed every 5 seconds or when a
//! file passes 1 MB.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::actions::Outcome;
use crate::browser::Browser;
use crate::error::BrowserError;

const FLUSH_EVERY: Duration = Duration::from_secs(5);
const FLUSH_BYTES: usize = 1 << 20;

/// A recording in progress.
#[derive(Debug)]
pub(crate) struct Recording {
    dir: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<Result<(usize, usize), SaveError>>>,
}

/// Why a recording's events were not all saved.
#[derive(Debug, thiserror::Error)]
enum SaveError {
    #[error("{0}")]
    Encode(#[from] serde_json::Error),
    #[error("cannot write {}: {reason}", path.display())]
    Write {
        path: PathBuf,
        reason: std::io::Error,
    },
    #[error("the recording task ended abnormally: {0}")]
    Task(#[from] tokio::task::JoinError),
}

fn millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

fn flush(
    dir: &Path,
    files: &mut usize,
    events: &mut Vec<Value>,
    bytes: &mut usize,
) -> Result<(), SaveError> {
    if events.is_empty() {
        return Ok(());
    }
    *files += 1;
    let path = dir.join(format!("{files}.json"));
    let body = serde_json::to_vec(&events)?;
    std::fs::write(&path, body).map_err(|reason| SaveError::Write { path, reason })?;
    events.clear();
    *bytes = 0;
    Ok(())
}

impl Browser {
    /// Starts recording.
    pub async fn start_recording(&self) -> Result<Outcome, BrowserError> {
        // The browser must run for there to be anything to record.
        {
            let mut s = self.for_agent().await?;
            let engine = s.engine()?;
            self.publish(engine).await;
        }
        let mut slot = self
            .inner
            .recording
            .lock()
            .map_err(|_| BrowserError::Cdp("recording state poisoned".into()))?;
        if let Some(r) = slot.as_ref() {
            return Ok(Outcome {
                text: format!("Already recording into {}.", r.dir.display()),
                ..Outcome::default()
            });
        }
        let dir = self
            .inner
            .config
            .recordings_dir
            .join(format!("recording-{}", millis()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| BrowserError::Cdp(format!("cannot create {}: {e}", dir.display())))?;
        let (stop_tx, mut stop_rx) = oneshot::channel();
        let mut frames = self.watch_frames();
        let mut state = self.watch_state();
        let out_dir = dir.clone();
        let task = tokio::spawn(async move {
            let (mut files, mut total, mut bytes) = (0usize, 0usize, 0usize);
            let mut events = Vec::new();
            let mut tick = tokio::time::interval(FLUSH_EVERY);
            loop {
                tokio::select! {
                    _ = &mut stop_rx => break,
                    _ = tick.tick() => flush(&out_dir, &mut files, &mut events, &mut bytes)?,
                    changed = frames.rx.changed() => {
                        if changed.is_err() { break; }
                        let frame = frames.rx.borrow_and_update().clone();
                        if let Some(f) = frame {
                            bytes += f.data.len();
                            events.push(json!({"type": "frame", "timestamp": millis(), "format": "jpeg", "width": f.width, "height": f.height, "data": &*f.data}));
                            total += 1;
                        }
                    }
                    changed = state.changed() => {
                        if changed.is_err() { break; }
                        let s = state.borrow_and_update().clone();
                        events.push(json!({"type": "page", "timestamp": millis(), "url": s.url, "title": s.title, "driver": s.driver}));
                        total += 1;
                    }
                }
                if bytes > FLUSH_BYTES {
                    flush(&out_dir, &mut files, &mut events, &mut bytes)?;
                }
            }
            flush(&out_dir, &mut files, &mut events, &mut bytes)?;
            Ok((total, files))
        });
        *slot = Some(Recording {
            dir: dir.clone(),
            stop: Some(stop_tx),
            task: Some(task),
        });
        Ok(Outcome {
            text: format!(
                "Recording started: screencast frames and page changes are saved to {} as numbered JSON files, every 5 seconds. Call browser_stop_recording to finish.",
                dir.display()
            ),
            ..Outcome::default()
        })
    }

    /// Stops recording and says what was saved.
    pub async fn stop_recording(&self) -> Result<Outcome, BrowserError> {
        let taken = self.inner.recording.lock().ok().and_then(|mut r| r.take());
        let Some(mut rec) = taken else {
            return Ok(Outcome {
                text: "No recording is running; call browser_start_recording first.".into(),
                is_error: true,
                ..Outcome::default()
            });
        };
        if let Some(stop) = rec.stop.take() {
            let _ = stop.send(());
        }
        let result = match rec.task.take() {
            Some(task) => task.await.map_err(SaveError::from).and_then(|r| r),
            None => Ok((0, 0)),
        };
        Ok(match result {
            Ok((events, files)) => Outcome {
                text: format!(
                    "Recording stopped: {events} events in {files} files saved to {}.",
                    rec.dir.display()
                ),
                ..Outcome::default()
            },
            Err(e) => Outcome {
                text: format!("Recording stopped, but saving failed: {e}"),
                is_error: true,
                ..Outcome::default()
            },
        })
    }
}
