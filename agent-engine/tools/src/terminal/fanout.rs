//! Fan-out of the shell's output to attached viewers (the desktop terminal pane).
//!
//! The PTY reader threads send every raw chunk here as well as to the tool, through a bounded
//! channel of [`RAW_QUEUE`] chunks (policy: backpressure — a reader that gets ahead of the pump
//! waits, and with it the program writing to the terminal). A pump thread masks
//! secrets (holding back a possible partial secret until more bytes come or the stream has been
//! quiet for [`FLUSH_IDLE`]), appends to a bounded scrollback and broadcasts. Both happen under
//! one lock so a viewer that [`attach`](Fanout::attach)es gets the scrollback and then exactly
//! the bytes that follow it. The fan-out outlives shell resets: viewers stay attached.
//!
//! When the session is recorded for replay, the pump also writes what viewers get to the
//! session's cast, in the same order as the resizes, the person's input and the event markers
//! that come through the same queue ([`Feed`]). A marker first shows whatever is held back (as
//! a quiet stream would), so the screen as of an event holds the output that came before it.

use std::collections::VecDeque;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use tandem_replay::CastWriter;
use tandem_sdk::Masker;
use tokio::sync::broadcast;

use super::stream_mask::{StreamMasker, mask_bytes};

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

/// What the pump takes, in order.
#[derive(Debug)]
pub(crate) enum Feed {
    /// The shell's output.
    Output(Bytes),
    /// The person typed this (recorded only; the shell gets it through its own writer).
    Input(Bytes),
    /// The terminal was resized.
    Resize {
        /// Columns.
        cols: u16,
        /// Rows.
        rows: u16,
    },
    /// An event was recorded: its marker goes into the cast.
    Marker(String),
}

/// The pump's queue. Output is queued in one step with handing it to the tool
/// ([`output`](Self::output)), so anything queued after the tool saw some output (the marker of
/// the event reporting it) comes after that output.
#[derive(Debug, Clone)]
pub(crate) struct FeedTx {
    tx: SyncSender<Feed>,
    order: Arc<Mutex<()>>,
}

impl FeedTx {
    /// A queue of `bound` items.
    pub fn channel(bound: usize) -> (Self, Receiver<Feed>) {
        let (tx, rx) = std::sync::mpsc::sync_channel(bound);
        let order = Arc::new(Mutex::new(()));
        (Self { tx, order }, rx)
    }

    /// Runs `before` (hands `chunk` to the tool), then queues `chunk`, with nothing queued in
    /// between. Waits while the queue is full (backpressure on the PTY reader).
    pub fn output(&self, chunk: Bytes, before: impl FnOnce(&Bytes)) {
        let _order = lock(&self.order);
        before(&chunk);
        let _ = self.tx.send(Feed::Output(chunk));
    }

    /// Queues `feed` after all output the tool has seen. Waits while the queue is full: the
    /// pump never waits on anything but the recording's disk, so not for long.
    pub fn send(&self, feed: Feed) {
        let _order = lock(&self.order);
        let _ = self.tx.send(feed);
    }
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
    /// The replay recording, until it fails (a failure is logged once and ends it).
    cast: Mutex<Option<CastWriter>>,
}

impl Fanout {
    /// Starts the pump thread, recording to `cast` when given; returns the fan-out and the
    /// sender the PTY readers feed.
    pub fn start(
        scrollback_cap: usize,
        cast: Option<CastWriter>,
    ) -> std::io::Result<(Arc<Self>, FeedTx)> {
        let (tx, _) = broadcast::channel(BROADCAST_CAPACITY);
        let fanout = Arc::new(Self {
            tx,
            scrollback: Mutex::new(VecDeque::new()),
            scrollback_cap,
            mask: Mutex::new(MaskSetup::default()),
            cast: Mutex::new(cast),
        });
        let (feed, raw_rx) = FeedTx::channel(RAW_QUEUE);
        let pump = Arc::clone(&fanout);
        std::thread::Builder::new()
            .name("terminal-fanout".into())
            .spawn(move || pump.run(raw_rx))?;
        Ok((fanout, feed))
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

    /// The masker in use.
    pub fn masker(&self) -> Masker {
        lock(&self.mask).masker.clone()
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

    /// Runs `write` on the recording; a failure ends the recording (the terminal goes on).
    fn record(&self, write: impl FnOnce(&mut CastWriter) -> tandem_replay::Result<()>) {
        let mut cast = lock(&self.cast);
        if let Some(writer) = cast.as_mut()
            && let Err(e) = write(writer)
        {
            tracing::warn!(error = %e, "the terminal's replay recording stopped");
            *cast = None;
        }
    }

    fn emit(&self, bytes: Vec<u8>) {
        if bytes.is_empty() {
            return;
        }
        self.record(|cast| cast.output(&bytes));
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

    fn run(&self, rx: Receiver<Feed>) {
        let mut stream = StreamMasker::default();
        loop {
            let next = if stream.has_pending() {
                rx.recv_timeout(FLUSH_IDLE)
            } else {
                rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
            };
            let setup = lock(&self.mask).clone();
            match next {
                Ok(Feed::Output(chunk)) => {
                    self.emit(stream.push(&chunk, &setup.masker, setup.hold));
                }
                Ok(Feed::Input(bytes)) => {
                    let masked = mask_bytes(&bytes, &setup.masker);
                    self.record(|cast| cast.input(&String::from_utf8_lossy(&masked)));
                }
                Ok(Feed::Resize { cols, rows }) => {
                    self.emit(stream.flush(&setup.masker));
                    self.record(|cast| cast.resize(cols, rows));
                }
                Ok(Feed::Marker(id)) => {
                    self.emit(stream.flush(&setup.masker));
                    // Flushed at each marker, so a seek finds every event recorded so far.
                    self.record(|cast| cast.marker(&id).and_then(|()| cast.flush()));
                }
                Err(RecvTimeoutError::Timeout) => self.emit(stream.flush(&setup.masker)),
                Err(RecvTimeoutError::Disconnected) => {
                    self.emit(stream.flush(&setup.masker));
                    self.record(CastWriter::flush);
                    return;
                }
            }
        }
    }
}
