//! The browser lane: frames of the agent's browser, each a JPEG file in `frames/`, listed in
//! `browser.jsonl` (one JSON line per frame: its id, file, page address, and the newest event
//! recorded before it). Two kinds: one frame after each browser action, and screencast frames
//! while someone watches (the recorder takes at most one per [`SCREENCAST_INTERVAL`]), never
//! the same image twice in a row. Addresses are masked before they are written.
//!
//! The frame as of an event is the newest whose `after_event` is that event or one before it
//! ([`frame_at`]). A frame whose file is missing is named and the one before it shown.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::{ReplayError, Result};

/// Screencast frames are taken at most this often (2 per second).
pub const SCREENCAST_INTERVAL: Duration = Duration::from_millis(500);

/// The list of frames in a replay folder.
pub const FRAME_LOG: &str = "browser.jsonl";

/// Why a frame was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrameKind {
    /// After a browser action (always recorded).
    Action,
    /// From the live screencast (rate-limited, deduplicated).
    Screencast,
}

/// One recorded frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FrameEntry {
    /// The frame's id.
    pub id: String,
    /// Its JPEG, relative to the replay folder.
    pub file: String,
    /// The page's address (masked).
    pub url: String,
    /// The newest event recorded before the frame (none before the first).
    pub after_event: Option<String>,
    /// Why it was recorded.
    pub kind: FrameKind,
    /// When (milliseconds since the epoch).
    pub at_ms: u64,
}

/// Appends frames to a replay folder.
#[derive(Debug)]
pub struct FrameWriter {
    dir: PathBuf,
    log: File,
    next: u64,
    last_hash: Option<u64>,
    last_file: Option<String>,
}

fn hash(bytes: &[u8]) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

impl FrameWriter {
    /// Opens the lane in `dir` (created if needed), continuing its numbering.
    pub fn open(dir: &Path) -> Result<Self> {
        let frames = dir.join("frames");
        std::fs::create_dir_all(&frames).map_err(|e| ReplayError::io("create", &frames, e))?;
        let path = dir.join(FRAME_LOG);
        let next = read_log(dir).0.len() as u64 + 1;
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| ReplayError::io("open", &path, e))?;
        Ok(Self {
            dir: dir.to_path_buf(),
            log,
            next,
            last_hash: None,
            last_file: None,
        })
    }

    /// Records `jpeg` of the page at `url` (already masked), after event `after_event`.
    /// A screencast frame with the same image as the frame before is skipped (`None`); an
    /// action frame is always listed, its image shared with the frame before when it is the
    /// same.
    pub fn write(
        &mut self,
        jpeg: &[u8],
        url: &str,
        after_event: Option<&str>,
        kind: FrameKind,
    ) -> Result<Option<FrameEntry>> {
        let digest = hash(jpeg);
        let same = self.last_hash == Some(digest);
        if kind == FrameKind::Screencast && same {
            return Ok(None);
        }
        let id = format!("f{:07}", self.next);
        let file = match (&self.last_file, same) {
            (Some(file), true) => file.clone(),
            _ => {
                let file = format!("frames/{id}.jpg");
                let path = self.dir.join(&file);
                std::fs::write(&path, jpeg).map_err(|e| ReplayError::io("write", &path, e))?;
                file
            }
        };
        let entry = FrameEntry {
            id,
            file: file.clone(),
            url: url.to_owned(),
            after_event: after_event.map(str::to_owned),
            kind,
            at_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX)),
        };
        let mut line = serde_json::to_vec(&entry).unwrap_or_default();
        line.push(b'\n');
        let path = self.dir.join(FRAME_LOG);
        self.log
            .write_all(&line)
            .map_err(|e| ReplayError::io("write", &path, e))?;
        self.next += 1;
        self.last_hash = Some(digest);
        self.last_file = Some(file);
        Ok(Some(entry))
    }
}

/// The frames listed in `dir`, and notes on lines that could not be read.
pub fn read_log(dir: &Path) -> (Vec<FrameEntry>, Vec<String>) {
    let path = dir.join(FRAME_LOG);
    let Ok(file) = File::open(&path) else {
        return (Vec::new(), Vec::new());
    };
    let mut frames = Vec::new();
    let mut notes = Vec::new();
    for (n, line) in BufReader::new(file).lines().enumerate() {
        let Ok(line) = line else {
            notes.push(format!("{FRAME_LOG} line {} unreadable", n + 1));
            break;
        };
        match serde_json::from_str::<FrameEntry>(&line) {
            Ok(entry) => frames.push(entry),
            Err(e) => notes.push(format!("{FRAME_LOG} line {} skipped: {e}", n + 1)),
        }
    }
    (frames, notes)
}

/// The frame of the replay folder `dir` as of `events[at]` (the conversation's event ids,
/// oldest first): the newest frame recorded after an event up to it whose image is there.
/// Notes name what was skipped.
pub fn frame_at(
    dir: &Path,
    events: &[String],
    at: usize,
    notes: &mut Vec<String>,
) -> Option<FrameEntry> {
    let (frames, read_notes) = read_log(dir);
    notes.extend(read_notes);
    let position: HashMap<&str, usize> = events
        .iter()
        .enumerate()
        .map(|(n, id)| (id.as_str(), n))
        .collect();
    for frame in frames.iter().rev() {
        let before = match &frame.after_event {
            None => true,
            Some(id) => position.get(id.as_str()).is_some_and(|n| *n <= at),
        };
        if !before {
            continue;
        }
        if dir.join(&frame.file).is_file() {
            return Some(frame.clone());
        }
        notes.push(format!(
            "browser frame {} is missing ({}): the one before it is shown",
            frame.id, frame.file
        ));
    }
    None
}
