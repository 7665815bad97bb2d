//! Searching file contents newest file first, on all cores, stopping once the first
//! [`MAX_RESULTS`] matching files (and one more, to know the list is cut) are certain.
//!
//! Workers take the files in order from a shared counter; a file's outcome is recorded in its
//! slot, and the contiguous prefix of decided slots is counted as it grows. Once that prefix
//! holds more than [`MAX_RESULTS`] matching files nothing later can change the answer, so the
//! workers stop: a search whose answer lies among the newest files reads only those.

use std::io;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};

use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use tokio_util::sync::CancellationToken;

use crate::walk::{Cancelled, MAX_RESULTS};

const PENDING: u8 = 0;
const MATCHED: u8 = 1;
const MISSED: u8 = 2;

/// The first [`MAX_RESULTS`] of `files` (in their order) that contain a match of `matcher`, and
/// whether more did.
pub fn first_matching(
    files: &[PathBuf],
    matcher: &RegexMatcher,
    cancel: &CancellationToken,
) -> Result<(Vec<usize>, bool), Cancelled> {
    let slots: Vec<AtomicU8> = files.iter().map(|_| AtomicU8::new(PENDING)).collect();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // (first undecided slot, matching files before it)
    let decided = Mutex::new((0usize, 0usize));
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .min(files.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut searcher = searcher();
                loop {
                    if stop.load(Ordering::Relaxed) || cancel.is_cancelled() {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(path) = files.get(i) else { break };
                    let outcome = if contains_match(&mut searcher, matcher, path) {
                        MATCHED
                    } else {
                        MISSED
                    };
                    slots[i].store(outcome, Ordering::Release);
                    let mut decided = decided.lock().unwrap_or_else(|e| e.into_inner());
                    let (frontier, count) = &mut *decided;
                    while *frontier < slots.len() {
                        match slots[*frontier].load(Ordering::Acquire) {
                            PENDING => break,
                            MATCHED => *count += 1,
                            _ => {}
                        }
                        *frontier += 1;
                        if *count > MAX_RESULTS {
                            stop.store(true, Ordering::Relaxed);
                            break;
                        }
                    }
                }
            });
        }
    });
    if cancel.is_cancelled() {
        return Err(Cancelled);
    }
    let (frontier, count) = *decided.lock().unwrap_or_else(|e| e.into_inner());
    let matching = slots[..frontier]
        .iter()
        .enumerate()
        .filter(|(_, s)| s.load(Ordering::Acquire) == MATCHED)
        .map(|(i, _)| i)
        .take(MAX_RESULTS)
        .collect();
    Ok((matching, count > MAX_RESULTS))
}

/// A searcher as `rg` sets one up for a walked file: binary files (a NUL byte) are skipped.
fn searcher() -> Searcher {
    SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .line_number(false)
        .build()
}

/// Whether the file at `path` has a match; an unreadable file has none.
fn contains_match(searcher: &mut Searcher, matcher: &RegexMatcher, path: &PathBuf) -> bool {
    let mut sink = FirstMatch(false);
    searcher.search_path(matcher, path, &mut sink).is_ok() && sink.0
}

/// Stops the search of a file at its first match.
struct FirstMatch(bool);

impl Sink for FirstMatch {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, _: &SinkMatch<'_>) -> Result<bool, io::Error> {
        self.0 = true;
        Ok(false)
    }
}
