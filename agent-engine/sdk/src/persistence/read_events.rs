//! Reading and parsing the event files of a log, on several threads for long logs.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use tandem_protocol::Event;

/// Below this many files one thread is faster than starting more.
const PARALLEL_THRESHOLD: usize = 96;

/// Most threads a read of the log uses (the machine may have more cores, the disk gains nothing).
const MAX_THREADS: usize = 4;

/// The events of a log's good prefix, and the first file that failed, if any.
pub(crate) struct EventFiles {
    /// Events of `names[..events.len()]`, in order.
    pub events: Vec<Event>,
    /// The bytes of each of those files, in the same order.
    pub json: Vec<Arc<[u8]>>,
    /// Index into `names` of the first file that could not be read or parsed, and why.
    pub failure: Option<(usize, String)>,
}

/// Reads and parses `dir/names[i]` for each `i` in order, stopping at the first failure.
pub(crate) fn read_events(dir: &Path, names: &[String]) -> EventFiles {
    let threads = if names.len() < PARALLEL_THRESHOLD {
        1
    } else {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, MAX_THREADS)
    };
    if threads == 1 {
        return read_chunk(dir, names, 0);
    }
    let chunk = names.len().div_ceil(threads);
    let parts: Vec<EventFiles> = std::thread::scope(|scope| {
        let handles: Vec<_> = names
            .chunks(chunk)
            .enumerate()
            .skip(1)
            .map(|(i, part)| scope.spawn(move || read_chunk(dir, part, i * chunk)))
            .collect();
        // This thread takes the first chunk instead of idling.
        let mut parts = vec![read_chunk(dir, &names[..chunk.min(names.len())], 0)];
        for (i, handle) in handles.into_iter().enumerate() {
            parts.push(handle.join().unwrap_or_else(|_| EventFiles {
                events: Vec::new(),
                json: Vec::new(),
                failure: Some((
                    (i + 1) * chunk,
                    "a thread reading the log panicked".to_owned(),
                )),
            }));
        }
        parts
    });
    let mut events = Vec::with_capacity(names.len());
    let mut json = Vec::with_capacity(names.len());
    for part in parts {
        events.extend(part.events);
        json.extend(part.json);
        if part.failure.is_some() {
            return EventFiles {
                events,
                json,
                failure: part.failure,
            };
        }
    }
    EventFiles {
        events,
        json,
        failure: None,
    }
}

/// Sequential read of `names`, whose first element is file number `offset` of the log.
fn read_chunk(dir: &Path, names: &[String], offset: usize) -> EventFiles {
    let mut events = Vec::with_capacity(names.len());
    let mut json = Vec::with_capacity(names.len());
    let mut buf = Vec::with_capacity(64 * 1024);
    let mut path = dir.to_path_buf();
    for (i, name) in names.iter().enumerate() {
        path.push(name);
        let parsed = read_into(&path, &mut buf)
            .map_err(|e| format!("unreadable: {e}"))
            .and_then(|()| Event::from_json_slice(&buf).map_err(|e| e.to_string()));
        path.pop();
        match parsed {
            Ok(event) => {
                events.push(event);
                json.push(Arc::from(&buf[..]));
            }
            Err(e) => {
                return EventFiles {
                    events,
                    json,
                    failure: Some((offset + i, e)),
                };
            }
        }
    }
    EventFiles {
        events,
        json,
        failure: None,
    }
}

/// Reads the whole file into `buf` (reusing its allocation; no `stat`).
fn read_into(path: &Path, buf: &mut Vec<u8>) -> std::io::Result<()> {
    buf.clear();
    File::open(path)?.read_to_end(buf).map(|_| ())
}
