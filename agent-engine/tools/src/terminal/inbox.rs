//! The bounded queue between a shell's PTY reader thread and the tool's runner.
//!
//! The reader thread parses the prompt markers as it reads ([`InboxWriter::push`]) and never
//! waits for the tool, which drains the queue only while a tool call uses the shell.
//!
//! **Policy: keep the newest output, and every state change.** Output events are kept up to
//! [`OUTPUT_CAP`] bytes; older output is dropped first, counted, and the next drain begins with
//! a note saying how many bytes were dropped. A person running `yes` in the agent's shell while
//! the agent is idle therefore costs at most [`OUTPUT_CAP`] bytes here, however long it runs.
//! Marker events (started, prompt, reading) are kept as long as there are fewer than
//! [`EVENT_CAP`]; past that the oldest go first (each sets the shell's state outright, so the
//! newest ones still tell the state).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::Notify;

use super::markers::{MarkerParser, ShellEvent};

/// Output bytes kept while nobody drains the queue.
pub(crate) const OUTPUT_CAP: usize = 1024 * 1024;
/// Events kept while nobody drains the queue.
pub(crate) const EVENT_CAP: usize = 4096;

#[derive(Debug, Default)]
struct State {
    events: VecDeque<ShellEvent>,
    output_bytes: usize,
    dropped_bytes: usize,
    closed: bool,
}

impl State {
    fn add(&mut self, event: ShellEvent) {
        if let ShellEvent::Output(bytes) = &event {
            self.output_bytes += bytes.len();
        }
        self.events.push_back(event);
        while self.output_bytes > OUTPUT_CAP || self.events.len() > EVENT_CAP {
            // The oldest output event (or, with too many events, the oldest event).
            let index = if self.output_bytes > OUTPUT_CAP {
                self.events
                    .iter()
                    .position(|e| matches!(e, ShellEvent::Output(_)))
                    .unwrap_or(0)
            } else {
                0
            };
            match self.events.remove(index) {
                Some(ShellEvent::Output(bytes)) => {
                    self.output_bytes -= bytes.len();
                    self.dropped_bytes += bytes.len();
                }
                Some(_) => {}
                None => break,
            }
        }
    }
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    notify: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The reader thread's end: parses PTY chunks into events.
#[derive(Debug)]
pub(crate) struct InboxWriter {
    shared: Arc<Shared>,
    parser: MarkerParser,
    parsed: VecDeque<ShellEvent>,
}

/// The runner's end.
#[derive(Debug)]
pub(crate) struct Inbox {
    shared: Arc<Shared>,
}

/// A queue for the shell whose markers carry `nonce`.
pub(crate) fn inbox(nonce: &str) -> (InboxWriter, Inbox) {
    let shared = Arc::new(Shared::default());
    (
        InboxWriter {
            shared: Arc::clone(&shared),
            parser: MarkerParser::new(nonce),
            parsed: VecDeque::new(),
        },
        Inbox { shared },
    )
}

impl InboxWriter {
    /// Adds what the shell printed; never blocks for the runner.
    pub fn push(&mut self, chunk: &[u8]) {
        self.parser.push(chunk, &mut self.parsed);
        if self.parsed.is_empty() {
            return;
        }
        {
            let mut state = self.shared.lock();
            for event in self.parsed.drain(..) {
                state.add(event);
            }
        }
        self.shared.notify.notify_one();
    }
}

impl Drop for InboxWriter {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.notify.notify_one();
    }
}

impl Inbox {
    /// Moves everything queued to `out` (a note first when output was dropped). Answers
    /// whether the shell's output has ended (nothing more will come).
    pub fn drain_into(&mut self, out: &mut VecDeque<ShellEvent>) -> bool {
        let mut state = self.shared.lock();
        if state.dropped_bytes > 0 {
            let note = format!(
                "\r\n[... {} bytes of output dropped while no command waited for them ...]\r\n",
                state.dropped_bytes
            );
            out.push_back(ShellEvent::Output(note.into_bytes()));
            state.dropped_bytes = 0;
        }
        out.extend(state.events.drain(..));
        state.output_bytes = 0;
        state.closed
    }

    /// Output bytes queued now.
    #[cfg(test)]
    pub fn queued_bytes(&self) -> usize {
        self.shared.lock().output_bytes
    }

    /// Waits until there is something to drain (or the output ended), then drains it like
    /// [`drain_into`](Self::drain_into).
    pub async fn recv_into(&mut self, out: &mut VecDeque<ShellEvent>) -> bool {
        loop {
            let before = out.len();
            let closed = self.drain_into(out);
            if closed || out.len() > before {
                return closed;
            }
            self.shared.notify.notified().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_nobody_drains_is_capped_and_markers_are_kept() {
        let nonce = "abc";
        let (mut writer, mut inbox) = inbox(nonce);
        let started = format!("\x1b]6973;{nonce};S\x07");
        writer.push(started.as_bytes());
        let line = vec![b'y'; 64 * 1024];
        for _ in 0..200 {
            writer.push(&line);
        }
        let state = inbox.shared.lock();
        assert!(state.output_bytes <= OUTPUT_CAP);
        assert_eq!(state.dropped_bytes, 200 * 64 * 1024 - state.output_bytes);
        drop(state);
        let mut out = VecDeque::new();
        assert!(!inbox.drain_into(&mut out));
        let ShellEvent::Output(note) = &out[0] else {
            panic!("no note first: {:?}", out.front());
        };
        assert!(String::from_utf8_lossy(note).contains("bytes of output dropped"));
        assert!(out.contains(&ShellEvent::Started));
        drop(writer);
        assert!(inbox.drain_into(&mut VecDeque::new()));
    }

    #[test]
    fn too_many_events_drop_the_oldest() {
        let (mut writer, inbox) = inbox("n");
        for _ in 0..EVENT_CAP + 10 {
            writer.push(b"\x1b]6973;n;S\x07");
        }
        assert_eq!(inbox.shared.lock().events.len(), EVENT_CAP);
    }
}
