//! The event log of one conversation: its `events/` directory and the one writer that owns it.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tandem_protocol::Event;

use super::atomic::FILE_MODE;
use super::file_name::{
    LOCK_FILE, SET_ASIDE_SUFFIXES, event_file_name, is_event_temp, is_marker, is_valid_event_id,
    marker_file_name, parse_event_file_name,
};
use super::read_events::read_events;
use crate::{Result, SdkError};

/// What loading a log found: the events of its good prefix, and what was wrong beyond it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LoadedLog {
    /// The events, in log order (index 0 first).
    pub events: Vec<Event>,
    /// Each event's file as read, parallel to `events`: servers send these bytes instead of
    /// serializing the event again.
    pub json: Vec<Arc<[u8]>>,
    /// Problems found (a corrupt or unreadable file, a gap, unknown names, files moved aside),
    /// each naming the file. Empty for a healthy log.
    pub warnings: Vec<String>,
}

/// The single writer of a conversation's `events/` directory.
///
/// While an `EventLog` is alive it holds the exclusive file lock `.eventlog.lock` (as the
/// upstream server does), so a second writer, in this process or another, fails to open the
/// log instead of interleaving indexes. Each [`append`](Self::append) writes one file
/// `event-{index:05}-{id}.json` atomically and durably (`fdatasync` before the rename) and then
/// renames the `.eventlog-len-N.marker` to the new count.
#[derive(Debug)]
pub struct EventLog {
    dir: PathBuf,
    len: usize,
    /// Held for its lock; released when the log is dropped.
    _lock: File,
    /// Serialisation buffer reused across appends.
    buf: Vec<u8>,
    /// Whether the current length marker exists (it is created on open).
    marker_exists: bool,
}

/// What a scan of an `events/` directory found, before any file is read.
struct Scan {
    /// Names of the contiguous run of event files from index 0.
    names: Vec<String>,
    /// Event files that cannot be loaded (beyond a gap, duplicate indexes), with the suffix a
    /// writer renames them with.
    unloadable: Vec<(String, &'static str)>,
    warnings: Vec<String>,
    markers: Vec<String>,
    temps: Vec<String>,
}

impl EventLog {
    /// Starts an empty log in `dir` (the conversation's `events/` directory), creating the
    /// directory. Fails if the directory already holds events, or another writer has it open.
    pub fn create(dir: impl Into<PathBuf>) -> Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|e| SdkError::io("create dir", &dir, e))?;
        let lock = lock(&dir)?;
        let scan = scan(&dir)?;
        if !scan.names.is_empty() || !scan.unloadable.is_empty() {
            return Err(SdkError::InvalidState(format!(
                "{} already holds an event log; open it instead",
                dir.display()
            )));
        }
        let mut log = Self {
            dir,
            len: 0,
            _lock: lock,
            buf: Vec::new(),
            marker_exists: false,
        };
        log.reset_marker(&scan.markers);
        Ok(log)
    }

    /// Opens the log in `dir` (the conversation's `events/` directory; created if missing) for
    /// appending, and loads its events.
    ///
    /// Loading orders the event files by index and stops at the first gap or at the first file
    /// that cannot be read or parsed; everything before it is served, and a warning names what
    /// was left out. Files left out are renamed aside (`<name>.corrupt` for the bad file,
    /// `<name>.orphaned` for valid ones after it, `<name>.duplicate` for a second file with an
    /// index already taken) so that new appends cannot collide with their indexes. Temp files
    /// of interrupted writes are removed. Fails if another writer has the log open.
    pub fn open(dir: impl Into<PathBuf>) -> Result<(Self, LoadedLog)> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|e| SdkError::io("create dir", &dir, e))?;
        let lock = lock(&dir)?;
        let scan = scan(&dir)?;
        let (loaded, mut unloadable) = load_scanned(&dir, &scan);
        let mut warnings = loaded.warnings;
        unloadable.extend(scan.unloadable.iter().cloned());
        for (name, suffix) in &unloadable {
            let from = dir.join(name);
            let to = dir.join(format!("{name}{suffix}"));
            match std::fs::rename(&from, &to) {
                Ok(()) => warnings.push(format!(
                    "moved {} aside to {name}{suffix} so that new events cannot collide with it",
                    from.display()
                )),
                Err(e) => {
                    return Err(SdkError::io("move aside", from, e));
                }
            }
        }
        for temp in &scan.temps {
            // A temp file was never acknowledged: its event was not appended.
            let _ = std::fs::remove_file(dir.join(temp));
        }
        for w in &warnings {
            tracing::warn!("{w}");
        }
        let len = loaded.events.len();
        let mut log = Self {
            dir,
            len,
            _lock: lock,
            buf: Vec::new(),
            marker_exists: false,
        };
        log.reset_marker(&scan.markers);
        Ok((
            log,
            LoadedLog {
                events: loaded.events,
                json: loaded.json,
                warnings,
            },
        ))
    }

    /// Loads the log in `dir` without opening it for writing: no lock is taken and nothing is
    /// renamed or removed (for viewers and listings). Same stopping rules as [`open`](Self::open).
    pub fn read(dir: &Path) -> Result<LoadedLog> {
        let scan = scan(dir)?;
        let (mut loaded, _) = load_scanned(dir, &scan);
        for (name, _) in &scan.unloadable {
            loaded
                .warnings
                .push(format!("ignored {}", dir.join(name).display()));
        }
        Ok(loaded)
    }

    /// Appends `event` as file number [`len`](Self::len). When this returns `Ok` the event is
    /// on disk (synced, renamed into place) and survives a killed process. Transient events
    /// (`full_state`, streaming deltas, server errors) are refused, as are ids that cannot name
    /// a file.
    pub fn append(&mut self, event: &Event) -> Result<&[u8]> {
        if event.is_transient() {
            return Err(SdkError::InvalidState(format!(
                "{} events are transient and never persisted",
                event.kind()
            )));
        }
        let id = event.id();
        if !is_valid_event_id(id) {
            return Err(SdkError::InvalidState(format!(
                "event id {id:?} cannot name an event file (expected a UUID)"
            )));
        }
        self.buf.clear();
        serde_json::to_writer(&mut self.buf, event)?;
        let path = self.dir.join(event_file_name(self.len, id));
        write_event_file(&path, &self.buf)?;
        self.len += 1;
        self.advance_marker();
        Ok(&self.buf)
    }

    /// Number of events in the log (the index the next append gets).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the log has no events.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `events/` directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Renames the length marker from `len - 1` to `len` (one metadata operation). The marker
    /// is a hint for other readers, so failing to update it does not fail the append.
    fn advance_marker(&mut self) {
        let new = self.dir.join(marker_file_name(self.len));
        let result = if self.marker_exists {
            std::fs::rename(self.dir.join(marker_file_name(self.len - 1)), &new)
        } else {
            create_empty(&new)
        };
        self.marker_exists = result.is_ok();
        if let Err(e) = result {
            tracing::warn!(
                "could not update the event count marker {}: {e}",
                new.display()
            );
        }
    }

    /// Replaces whatever markers exist with the one for the current length.
    fn reset_marker(&mut self, existing: &[String]) {
        let want = marker_file_name(self.len);
        for name in existing.iter().filter(|n| **n != want) {
            let _ = std::fs::remove_file(self.dir.join(name));
        }
        self.marker_exists =
            existing.contains(&want) || create_empty(&self.dir.join(&want)).is_ok();
    }
}

/// Takes the exclusive lock on `dir/.eventlog.lock`, failing at once if someone holds it.
pub(crate) fn lock(dir: &Path) -> Result<File> {
    let path = dir.join(LOCK_FILE);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(FILE_MODE)
        .open(&path)
        .map_err(|e| SdkError::io("open", &path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(std::fs::TryLockError::WouldBlock) => Err(SdkError::io(
            "lock",
            path,
            std::io::Error::new(
                ErrorKind::WouldBlock,
                "event log is locked: another writer has this conversation open",
            ),
        )),
        Err(std::fs::TryLockError::Error(e)) => Err(SdkError::io("lock", path, e)),
    }
}

/// Lists `dir` and sorts its names into event files, markers, temp files and the rest.
fn scan(dir: &Path) -> Result<Scan> {
    let entries = std::fs::read_dir(dir).map_err(|e| SdkError::io("read dir", dir, e))?;
    let mut files: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut out = Scan {
        names: Vec::new(),
        unloadable: Vec::new(),
        warnings: Vec::new(),
        markers: Vec::new(),
        temps: Vec::new(),
    };
    for entry in entries {
        let entry = entry.map_err(|e| SdkError::io("read dir", dir, e))?;
        let Ok(name) = entry.file_name().into_string() else {
            out.warnings.push(format!(
                "ignored a file with a non-UTF-8 name in {}",
                dir.display()
            ));
            continue;
        };
        if let Some(index) = parse_event_file_name(&name) {
            files.entry(index).or_default().push(name);
        } else if is_marker(&name) {
            out.markers.push(name);
        } else if is_event_temp(&name) {
            out.temps.push(name);
        } else if !name.starts_with('.') && !SET_ASIDE_SUFFIXES.iter().any(|s| name.ends_with(s)) {
            out.warnings.push(format!(
                "ignored unknown file {}",
                dir.join(&name).display()
            ));
        }
    }
    let mut gap = false;
    for (index, mut names) in files {
        names.sort();
        let mut names = names.into_iter();
        let Some(first) = names.next() else { continue };
        for dup in names {
            out.warnings.push(format!(
                "{} has the same index {index} as {first}; ignored",
                dir.join(&dup).display()
            ));
            out.unloadable.push((dup, ".duplicate"));
        }
        if !gap && index == out.names.len() {
            out.names.push(first);
            continue;
        }
        if !gap {
            gap = true;
            out.warnings.push(format!(
                "event index {} is missing in {}: the log stops there; {first} and the files \
                 after it are not loaded",
                out.names.len(),
                dir.display()
            ));
        }
        out.unloadable.push((first, ".orphaned"));
    }
    Ok(out)
}

/// Reads the scanned files. Returns the loaded prefix (with the scan's warnings and the
/// failure, if any) and the loaded-over files a writer must move aside.
fn load_scanned(dir: &Path, scan: &Scan) -> (LoadedLog, Vec<(String, &'static str)>) {
    let result = read_events(dir, &scan.names);
    let mut warnings = scan.warnings.clone();
    let mut aside = Vec::new();
    if let Some((bad, error)) = result.failure {
        let later = scan.names.len() - bad - 1;
        warnings.push(format!(
            "corrupt event file {}: {error}; kept the {bad} events before it{}",
            dir.join(&scan.names[bad]).display(),
            if later > 0 {
                format!(" and left out the {later} after it")
            } else {
                String::new()
            }
        ));
        aside.push((scan.names[bad].clone(), ".corrupt"));
        aside.extend(
            scan.names[bad + 1..]
                .iter()
                .map(|n| (n.clone(), ".orphaned")),
        );
    }
    (
        LoadedLog {
            events: result.events,
            json: result.json,
            warnings,
        },
        aside,
    )
}

/// Writes an event file atomically: temp file, write, `fdatasync`, rename.
fn write_event_file(path: &Path, bytes: &[u8]) -> Result<()> {
    super::atomic_write(path, bytes)
}

/// Creates an empty file with mode 0600.
fn create_empty(path: &Path) -> std::io::Result<()> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(FILE_MODE)
        .open(path)?
        .flush()
}
