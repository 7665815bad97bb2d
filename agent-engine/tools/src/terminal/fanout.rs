//! Fan-out of the shell's output to attached viewers (the desktop terminal pane).
//!
//! The PTY reader threads send every raw chunk here as well as to the tool, through a bounded
//! channel of [`RAW_QUEUE`] chunks (policy: backpressure — a reader that gets ahead of the pump
//! waits, and with it the program writing to the terminal). A pump thread masks
//! secrets (holding back a possible partial secret until more bytes come or the stream has been
//! quiet for [`FLUSH_IDLE`]), appends to a bounded scrollback and broadcasts. Both happen under
//! one lock so a viewer that [`attach`](Fanout::attach)es gets the scrollback and then exactly
//! the bytes that follow it. The fan-out outlives shell resets: viewers stay attached.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use tandem_sdk::Masker;
use tokio::sync::broadcast;

use super::stream_mask::StreamMasker;

/// How long held-back bytes wait for more before they are shown anyway.
const FLUSH_IDLE: Duration = Duration::from_millis(15);
/// Bytes held back at least when there are secrets (longer secrets raise it).
const MIN_HOLD: usize = 4096;
/// Raw chunks (up to 64 KiB each) queued for the pump.
const RAW_QUEUE: usize = 16;
/// Messages a slow viewer may fall behind before it misses some (policy: keep the newest; the
/// viewer skips what it missed). The channel keeps this many messages alive even when every
/// viewer has read them, so the bytes held are bounded by this times [`MAX_MESSAGE`].
const BROADCAST_CAPACITY: usize = 256;
/// Largest message broadcast: longer output is split.
const MAX_MESSAGE: usize = 16 * 1024;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The masking setup the pump uses for the next chunks.
#[derive(Debug, Clone, Default)]
struct MaskSetup {
    masker: Masker,
    hold: usize,
}

/// Viewer side of a terminal session.
#[derive(Debug)]
pub(crate) struct Fanout {
    tx: broadcast::Sender<Bytes>,
    scrollback: Mutex<VecDeque<u8>>,
    scrollback_cap: usize,
    mask: Mutex<MaskSetup>,
}

impl Fanout {
    /// Starts the pump thread; returns the fan-out and the sender the PTY readers feed.
    pub fn start(scrollback_cap: usize) -> std::io::Result<(Arc<Self>, SyncSender<Bytes>)> {
        let (tx, _) = broadcast::channel(BROADCAST_CAPACITY);
        let fanout = Arc::new(Self {
            tx,
            scrollback: Mutex::new(VecDeque::new()),
            scrollback_cap,
            mask: Mutex::new(MaskSetup::default()),
        });
        let (raw_tx, raw_rx) = std::sync::mpsc::sync_channel(RAW_QUEUE);
        let pump = Arc::clone(&fanout);
        std::thread::Builder::new()
            .name("terminal-fanout".into())
            .spawn(move || pump.run(raw_rx))?;
        Ok((fanout, raw_tx))
    }

    /// Uses `masker` from now on; `longest_secret` is the longest value it may need to catch.
    pub fn set_masker(&self, masker: Masker, longest_secret: usize) {
        let hold = if masker.is_empty() {
            0
        } else {
            MIN_HOLD.max(longest_secret)
        };
        *lock(&self.mask) = MaskSetup { masker, hold };
    }

    /// A receiver of the output from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Bytes> {
        self.tx.subscribe()
    }

    /// The recent output.
    pub fn scrollback(&self) -> Vec<u8> {
        lock(&self.scrollback).iter().copied().collect()
    }

    /// The recent output and a receiver of everything after it, with nothing lost in between.
    pub fn attach(&self) -> (Vec<u8>, broadcast::Receiver<Bytes>) {
        let scrollback = lock(&self.scrollback);
        let rx = self.tx.subscribe();
        (scrollback.iter().copied().collect(), rx)
    }

    fn emit(&self, bytes: Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        let mut scrollback = lock(&self.scrollback);
        scrollback.extend(bytes.iter().copied());
        let excess = scrollback.len().saturating_sub(self.scrollback_cap);
        if excess > 0 {
            scrollback.drain(..excess);
        }
        let bytes = Bytes::from(bytes);
        let mut start = 0;
        while start < bytes.len() {
            let end = (start + MAX_MESSAGE).min(bytes.len());
            // No receivers is not an error: viewers come and go.
            let _ = self.tx.send(bytes.slice(start..end));
            start = end;
        }
    }

    fn run(&self, rx: Receiver<Bytes>) {
        let mut stream = StreamMasker::default();
        loop {
            let next = if stream.has_pending() {
                rx.recv_timeout(FLUSH_IDLE)
            } else {
                rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
            };
            let setup = lock(&self.mask).clone();
            match next {
                Ok(chunk) => self.emit(stream.push(&chunk, &setup.masker, setup.hold)),
                Err(RecvTimeoutError::Timeout) => self.emit(stream.flush(&setup.masker)),
                Err(RecvTimeoutError::Disconnected) => {
                    self.emit(stream.flush(&setup.masker));
                    return;
                }
            }
        }
    }
}
