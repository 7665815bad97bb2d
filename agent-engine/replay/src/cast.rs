//! The terminal lane: one PTY recorded as asciicast v3 (`NAME.cast`) and its index
//! (`NAME.cast.idx`, JSON lines).
//!
//! The cast holds output (`o`), the person's input (`i`), resizes (`r`, `COLSxROWS`), a marker
//! (`m`) per event id and the exit (`x`), each with the seconds since the one before. The index
//! names each marker's byte offset in the cast and, every [`KEYFRAME_BYTES`] of output, a
//! keyframe: the screen's whole state (vt100's `state_formatted`) at an offset. The screen as of
//! an event is the keyframe before its marker plus the output between them, so a seek replays
//! at most about [`KEYFRAME_BYTES`] however long the session. No keyframe is taken while the
//! alternate screen is up (its state would not bring back the main one) or a saved cursor
//! waits for its restore (the emulator's state does not hold it).
//!
//! Secrets are masked before a byte is written: output and input keep back the last
//! `longest secret − 1` bytes until more arrive, so a secret split across two reads of the PTY is
//! masked too.
//!
//! A reader opens what it can: a missing or damaged index means a replay from the start (and a
//! note saying so); a torn last line or a malformed one is skipped and named.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Seek as _, SeekFrom, Write};
use std::num::NonZeroU16;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::{ReplayError, Result};

/// Output bytes between two keyframes.
pub const KEYFRAME_BYTES: usize = 32 * 1024;

/// What a masked secret reads as (the engine's mask).
pub const SECRET_MASK: &str = "<secret-hidden>";

/// One line of the index.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
enum IndexEntry {
    /// The screen's state at `offset` (the byte of the cast where the next event starts).
    Keyframe {
        offset: u64,
        cols: u16,
        rows: u16,
        state: String,
    },
    /// Event `id`'s marker ends at `offset`.
    Marker { id: String, offset: u64 },
    /// A resize at `offset` that no keyframe followed: no keyframe before it serves a seek
    /// past it (a seek then replays from the start until a keyframe comes after it).
    Barrier { offset: u64 },
}

/// The index file of the cast at `cast`.
pub fn index_path(cast: &Path) -> PathBuf {
    let mut name = cast.as_os_str().to_owned();
    name.push(".idx");
    PathBuf::from(name)
}

/// Holds back text that may be the start of a secret until the rest arrives.
#[derive(Debug, Default)]
struct Masker {
    secrets: Vec<String>,
    keep: usize,
    carry: String,
}

impl Masker {
    fn new(secrets: &[String]) -> Self {
        let mut secrets: Vec<String> = secrets.iter().filter(|s| !s.is_empty()).cloned().collect();
        // Longest first: a secret inside another is masked as part of it.
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        secrets.dedup();
        let keep = secrets.first().map_or(0, |s| s.len() - 1);
        Self {
            secrets,
            keep,
            carry: String::new(),
        }
    }

    fn mask(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for s in &self.secrets {
            if out.contains(s.as_str()) {
                out = out.replace(s.as_str(), SECRET_MASK);
            }
        }
        out
    }

    /// `text` appended; returns what can be written now, masked.
    fn push(&mut self, text: &str) -> String {
        self.carry.push_str(text);
        if self.keep == 0 {
            let all = std::mem::take(&mut self.carry);
            return self.mask(&all);
        }
        let mut split = self.carry.len().saturating_sub(self.keep);
        // A secret that starts before the split and ends after it moves the split to its start.
        for s in &self.secrets {
            for (start, _) in self.carry.match_indices(s.as_str()) {
                if start < split && start + s.len() > split {
                    split = start;
                }
            }
        }
        while !self.carry.is_char_boundary(split) {
            split -= 1;
        }
        let rest = self.carry.split_off(split);
        let ready = std::mem::replace(&mut self.carry, rest);
        self.mask(&ready)
    }

    /// Everything held back, masked.
    fn finish(&mut self) -> String {
        let all = std::mem::take(&mut self.carry);
        self.mask(&all)
    }
}

fn size(n: u16) -> NonZeroU16 {
    NonZeroU16::new(n).unwrap_or(NonZeroU16::MIN)
}

/// Records one PTY. Dropping it flushes what it holds back.
pub struct CastWriter {
    path: PathBuf,
    cast: BufWriter<File>,
    index: BufWriter<File>,
    offset: u64,
    last: Instant,
    screen: vt100::Parser,
    since_keyframe: usize,
    output: Masker,
    input: Masker,
    /// Bytes of output that end inside a UTF-8 character (the rest comes with the next read).
    partial: Vec<u8>,
    /// A cursor was saved and not yet restored: a keyframe would lose the saved position
    /// (the emulator's state does not include it), so none is taken.
    saved_cursor: bool,
    /// A resize came when no keyframe could be taken: the next one allowed is taken at once.
    keyframe_due: bool,
    /// The last bytes of output, to see a cursor sequence cut between two reads.
    tail: String,
}

/// Sequences that save the cursor, and that restore it.
const SAVE_CURSOR: &[&str] = &["\x1b7", "\x1b[s", "\x1b[?1048h", "\x1b[?1049h"];
const RESTORE_CURSOR: &[&str] = &["\x1b8", "\x1b[u", "\x1b[?1048l", "\x1b[?1049l"];

/// Whether `text` leaves a cursor saved (`Some(true)`), restored (`Some(false)`) or neither.
fn cursor_saved_after(text: &str) -> Option<bool> {
    let last = |seqs: &[&str]| seqs.iter().filter_map(|q| text.rfind(q)).max();
    match (last(SAVE_CURSOR), last(RESTORE_CURSOR)) {
        (Some(s), Some(r)) => Some(s > r),
        (Some(_), None) => Some(true),
        (None, Some(_)) => Some(false),
        (None, None) => None,
    }
}

impl std::fmt::Debug for CastWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CastWriter")
            .field("path", &self.path)
            .field("offset", &self.offset)
            .finish_non_exhaustive()
    }
}

impl CastWriter {
    /// Starts the recording at `path` (and its index beside it) of a terminal of `cols` by
    /// `rows`, masking each of `secrets`.
    pub fn create(path: &Path, cols: u16, rows: u16, secrets: &[String]) -> Result<Self> {
        let open = |p: &Path| {
            File::create(p)
                .map(BufWriter::new)
                .map_err(|e| ReplayError::io("create", p, e))
        };
        let mut writer = Self {
            path: path.to_path_buf(),
            cast: open(path)?,
            index: open(&index_path(path))?,
            offset: 0,
            last: Instant::now(),
            screen: vt100::Parser::new(size(rows), size(cols), 0),
            since_keyframe: 0,
            output: Masker::new(secrets),
            input: Masker::new(secrets),
            partial: Vec::new(),
            saved_cursor: false,
            keyframe_due: false,
            tail: String::new(),
        };
        let timestamp = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        // A struct, so `version` comes first as asciinema writes it.
        #[derive(Serialize)]
        struct Header<'a> {
            version: u32,
            term: Term<'a>,
            timestamp: u64,
        }
        #[derive(Serialize)]
        struct Term<'a> {
            cols: u16,
            rows: u16,
            r#type: &'a str,
        }
        let header = Header {
            version: 3,
            term: Term {
                cols,
                rows,
                r#type: "xterm-256color",
            },
            timestamp,
        };
        writer.line(&serde_json::to_string(&header).unwrap_or_default())?;
        writer.keyframe()?;
        Ok(writer)
    }

    /// The recording's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn line(&mut self, text: &str) -> Result<()> {
        self.cast
            .write_all(text.as_bytes())
            .and_then(|()| self.cast.write_all(b"\n"))
            .map_err(|e| ReplayError::io("write", &self.path, e))?;
        self.offset += text.len() as u64 + 1;
        Ok(())
    }

    fn event(&mut self, code: &str, data: &str) -> Result<()> {
        let now = Instant::now();
        let interval = (now.duration_since(self.last).as_secs_f64() * 1e6).round() / 1e6;
        self.last = now;
        let line = serde_json::to_string(&(interval, code, data)).unwrap_or_default();
        self.line(&line)
    }

    fn index_entry(&mut self, entry: &IndexEntry) -> Result<()> {
        let line = serde_json::to_string(entry).unwrap_or_default();
        let path = index_path(&self.path);
        self.index
            .write_all(line.as_bytes())
            .and_then(|()| self.index.write_all(b"\n"))
            .map_err(|e| ReplayError::io("write", &path, e))
    }

    fn keyframe(&mut self) -> Result<()> {
        let screen = self.screen.screen();
        let (rows, cols) = screen.size();
        let entry = IndexEntry::Keyframe {
            offset: self.offset,
            cols: cols.get(),
            rows: rows.get(),
            state: screen.state_formatted(),
        };
        self.since_keyframe = 0;
        self.keyframe_due = false;
        self.index_entry(&entry)
    }

    fn write_output(&mut self, text: &str) -> Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.event("o", text)?;
        self.screen.process(text.as_bytes());
        self.since_keyframe += text.len();
        // With the end of the last output: a sequence cut between two reads counts.
        let window = format!("{}{text}", self.tail);
        if let Some(saved) = cursor_saved_after(&window) {
            self.saved_cursor = saved;
        }
        let mut cut = window.len().saturating_sub(8);
        while !window.is_char_boundary(cut) {
            cut -= 1;
        }
        self.tail = window[cut..].to_owned();
        if (self.keyframe_due || self.since_keyframe >= KEYFRAME_BYTES) && self.keyframe_allowed() {
            self.keyframe()?;
        }
        Ok(())
    }

    /// Whether the emulator's state now brings the screen back whole.
    fn keyframe_allowed(&self) -> bool {
        !self.saved_cursor && !self.screen.screen().alternate_screen()
    }

    /// Output the PTY wrote.
    pub fn output(&mut self, bytes: &[u8]) -> Result<()> {
        self.partial.extend_from_slice(bytes);
        let mut text = String::new();
        let mut rest: &[u8] = &self.partial;
        loop {
            match std::str::from_utf8(rest) {
                Ok(s) => {
                    text.push_str(s);
                    rest = &[];
                    break;
                }
                Err(e) => {
                    let (valid, after) = rest.split_at(e.valid_up_to());
                    text.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match e.error_len() {
                        Some(n) => {
                            text.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[n..];
                        }
                        // A character cut off at the end of the read: wait for the rest.
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        self.partial = rest.to_vec();
        let ready = self.output.push(&text);
        self.write_output(&ready)
    }

    /// What the person typed.
    pub fn input(&mut self, text: &str) -> Result<()> {
        let ready = self.input.push(text);
        if ready.is_empty() {
            return Ok(());
        }
        self.event("i", &ready)
    }

    /// Writes what is held back (at a marker, a resize, the end).
    fn settle(&mut self) -> Result<()> {
        let cut = String::from_utf8_lossy(&std::mem::take(&mut self.partial)).into_owned();
        let pushed = self.output.push(&cut);
        let held = self.output.finish();
        self.write_output(&(pushed + &held))?;
        let typed = self.input.finish();
        if !typed.is_empty() {
            self.event("i", &typed)?;
        }
        Ok(())
    }

    /// The terminal's new size.
    pub fn resize(&mut self, cols: u16, rows: u16) -> Result<()> {
        self.settle()?;
        self.event("r", &format!("{cols}x{rows}"))?;
        self.screen.set_size(size(rows), size(cols));
        // A keyframe right after: a resize replayed onto a keyframe would not match (the
        // emulator counts rows scrolled off, which a keyframe does not carry, and a taller
        // screen pulls that many blank rows in at the top). When none can be taken now, the
        // index says so and the first one allowed is taken.
        if self.keyframe_allowed() {
            self.keyframe()?;
        } else {
            self.keyframe_due = true;
            let entry = IndexEntry::Barrier {
                offset: self.offset,
            };
            self.index_entry(&entry)?;
        }
        Ok(())
    }

    /// Event `event_id` was recorded now: the screen as of it is what was written before this.
    pub fn marker(&mut self, event_id: &str) -> Result<()> {
        self.settle()?;
        self.event("m", event_id)?;
        let entry = IndexEntry::Marker {
            id: event_id.to_owned(),
            offset: self.offset,
        };
        self.index_entry(&entry)?;
        self.flush()
    }

    /// The program ended with `code`.
    pub fn exit(&mut self, code: i32) -> Result<()> {
        self.settle()?;
        self.event("x", &code.to_string())?;
        self.flush()
    }

    /// Writes what is buffered to disk (the cast first: the index never names bytes the cast
    /// does not have).
    pub fn flush(&mut self) -> Result<()> {
        self.cast
            .flush()
            .map_err(|e| ReplayError::io("write", &self.path, e))?;
        let path = index_path(&self.path);
        self.index
            .flush()
            .map_err(|e| ReplayError::io("write", &path, e))
    }

    /// The screen as recorded so far (what a seek to now would show).
    pub fn screen(&self) -> &vt100::Screen {
        self.screen.screen()
    }
}

impl Drop for CastWriter {
    fn drop(&mut self) {
        let _ = self.settle();
        let _ = self.flush();
    }
}

/// A terminal's screen as of an event.
pub struct Screen {
    /// The terminal emulator's state.
    pub vt: vt100::Parser,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen")
            .field("text", &self.text())
            .finish_non_exhaustive()
    }
}

impl Screen {
    /// The visible screen as text, rows joined by `\n`.
    pub fn text(&self) -> String {
        self.vt.screen().contents()
    }

    /// Columns and rows.
    pub fn size(&self) -> (u16, u16) {
        let (rows, cols) = self.vt.screen().size();
        (cols.get(), rows.get())
    }
}

/// The answer of [`screen_at`].
#[derive(Debug)]
pub struct Seek {
    /// The screen as of the event.
    pub screen: Screen,
    /// Bytes of the cast replayed to get there (from the keyframe before the marker).
    pub replayed: u64,
    /// What could not be used (a missing index, a malformed line), in words.
    pub notes: Vec<String>,
}

/// Reads the index: its entries, and notes on what was unreadable.
fn read_index(cast: &Path, length: u64) -> (Vec<IndexEntry>, Vec<String>) {
    let path = index_path(cast);
    let file = match File::open(&path) {
        Ok(f) => f,
        Err(e) => {
            return (
                Vec::new(),
                vec![format!(
                    "no index ({}: {e}): replayed from the start",
                    path.display()
                )],
            );
        }
    };
    let mut entries = Vec::new();
    let mut notes = Vec::new();
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let Ok(line) = line else {
            notes.push(format!("index line {} unreadable", n + 1));
            break;
        };
        match serde_json::from_str::<IndexEntry>(&line) {
            Ok(entry) => {
                let offset = match &entry {
                    IndexEntry::Keyframe { offset, .. }
                    | IndexEntry::Marker { offset, .. }
                    | IndexEntry::Barrier { offset } => *offset,
                };
                if offset <= length {
                    entries.push(entry);
                } else {
                    notes.push(format!(
                        "index line {} names bytes the recording does not have",
                        n + 1
                    ));
                }
            }
            Err(e) => notes.push(format!("index line {} skipped: {e}", n + 1)),
        }
    }
    (entries, notes)
}

#[derive(Deserialize)]
struct Header {
    version: u32,
    term: Term,
}

#[derive(Deserialize)]
struct Term {
    cols: u16,
    rows: u16,
}

/// The screen of the recording at `cast` as of event `event_id` (its marker): from the
/// keyframe before the marker, or from the start when the index lacks one.
pub fn screen_at(cast: &Path, event_id: &str) -> Result<Seek> {
    let mut file = File::open(cast).map_err(|e| ReplayError::io("open", cast, e))?;
    let length = file
        .metadata()
        .map_err(|e| ReplayError::io("read", cast, e))?
        .len();
    let mut reader = BufReader::new(&mut file);
    let mut first = String::new();
    reader
        .read_line(&mut first)
        .map_err(|e| ReplayError::io("read", cast, e))?;
    let not_a_cast = |detail: String| ReplayError::NotACast {
        path: cast.to_path_buf(),
        detail,
    };
    let header: Header =
        serde_json::from_str(first.trim_end()).map_err(|e| not_a_cast(e.to_string()))?;
    if header.version != 3 {
        return Err(not_a_cast(format!("version {}", header.version)));
    }
    let body = first.len() as u64;
    let (entries, mut notes) = read_index(cast, length);
    let marker = entries.iter().rev().find_map(|e| match e {
        IndexEntry::Marker { id, offset } if id == event_id => Some(*offset),
        _ => None,
    });
    // The newest keyframe before the marker, unless a barrier lies between them.
    let keyframe = marker.and_then(|m| {
        let barrier = entries
            .iter()
            .filter_map(|e| match e {
                IndexEntry::Barrier { offset } if *offset <= m => Some(*offset),
                _ => None,
            })
            .max();
        entries.iter().rev().find_map(|e| match e {
            IndexEntry::Keyframe {
                offset,
                cols,
                rows,
                state,
            } if *offset <= m && *offset >= body && barrier.is_none_or(|b| *offset >= b) => {
                Some((*offset, *cols, *rows, state))
            }
            _ => None,
        })
    });
    let (start, mut vt) = match keyframe {
        Some((offset, cols, rows, state)) => {
            let mut vt = vt100::Parser::new(size(rows), size(cols), 0);
            vt.process(state.as_bytes());
            (offset, vt)
        }
        None => (
            body,
            vt100::Parser::new(size(header.term.rows), size(header.term.cols), 0),
        ),
    };
    drop(reader);
    file.seek(SeekFrom::Start(start))
        .map_err(|e| ReplayError::io("read", cast, e))?;
    let mut offset = start;
    let mut found = false;
    for (n, line) in BufReader::new(&mut file).lines().enumerate() {
        let Ok(line) = line else {
            notes.push("the recording ends in bytes that are not text".into());
            break;
        };
        offset += line.len() as u64 + 1;
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Ok((_, code, data)) = serde_json::from_str::<(f64, String, String)>(&line) else {
            if offset > length {
                notes.push("the recording's last line is cut off".into());
            } else {
                notes.push(format!(
                    "event {} after byte {start} skipped: malformed",
                    n + 1
                ));
            }
            continue;
        };
        match code.as_str() {
            "o" => vt.process(data.as_bytes()),
            "r" => {
                if let Some((c, r)) = data.split_once('x')
                    && let (Ok(c), Ok(r)) = (c.parse(), r.parse())
                {
                    vt.set_size(size(r), size(c));
                }
            }
            // The index names this marker's end; without one, the first in the cast.
            "m" if data == event_id && marker.is_none_or(|m| m == offset) => {
                found = true;
                break;
            }
            _ => {}
        }
    }
    if !found {
        return Err(ReplayError::NoMarker(event_id.to_owned()));
    }
    Ok(Seek {
        screen: Screen { vt },
        replayed: offset - start,
        notes,
    })
}

/// The event ids marked in the recording at `cast`, in order: from its index, or (without a
/// readable index) from the recording itself. Notes say what could not be read.
pub fn markers(cast: &Path) -> Result<(Vec<String>, Vec<String>)> {
    let length = std::fs::metadata(cast)
        .map_err(|e| ReplayError::io("read", cast, e))?
        .len();
    let (entries, notes) = read_index(cast, length);
    if !entries.is_empty() {
        let ids = entries
            .into_iter()
            .filter_map(|e| match e {
                IndexEntry::Marker { id, .. } => Some(id),
                _ => None,
            })
            .collect();
        return Ok((ids, notes));
    }
    let file = File::open(cast).map_err(|e| ReplayError::io("open", cast, e))?;
    let mut ids = Vec::new();
    for line in BufReader::new(file).lines().skip(1) {
        let Ok(line) = line else { break };
        if let Ok((_, code, data)) = serde_json::from_str::<(f64, String, String)>(&line)
            && code == "m"
        {
            ids.push(data);
        }
    }
    Ok((ids, notes))
}
