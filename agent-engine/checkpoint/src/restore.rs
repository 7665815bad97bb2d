//! Writing a rewind: a journal first, then path by path (each an atomic rename), then the
//! checkpoint after. A crash between is finished from the journal on the next open.

use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tandem_protocol::api::{Checkpoint, CheckpointAuthor, PathChange, RestoredPath, SkippedPath};

use crate::error::{CheckpointError, Result};
use crate::records::RecordLog;
use crate::store::{Entry, Store};

/// In the name of a file being written: `.NAME.tandem-restore-RANDOM`.
const TEMP_MARK: &str = ".tandem-restore-";

/// The journal's file in the store.
const JOURNAL: &str = "restore.json";

/// A restore in progress.
#[derive(Debug, Serialize, Deserialize)]
struct Journal {
    /// The tree restored to.
    tree: String,
    /// The paths to write or delete.
    paths: Vec<RestoredPath>,
    /// Where to record the checkpoint after (the conversation's record file), and its event.
    records: Option<PathBuf>,
    event_id: String,
}

/// What a restore did.
#[derive(Debug, Clone)]
pub struct Restored {
    /// The checkpoint taken after it.
    pub after: Checkpoint,
    /// Paths that could not be written, and why.
    pub failed: Vec<SkippedPath>,
}

impl Store {
    /// Makes each of `paths` equal to `tree` (written or deleted), then takes and records
    /// (in `records`, at `event_id`) the checkpoint after, authored [`CheckpointAuthor::Rewind`].
    /// Paths not listed are not touched, their mtimes included.
    pub fn restore(
        &self,
        tree: &str,
        paths: &[RestoredPath],
        records: &RecordLog,
        event_id: &str,
    ) -> Result<Restored> {
        self.restore_to(tree, paths, Some(records.path()), event_id)
    }

    /// [`Store::restore`] with the checkpoint after recorded in `records` when given (the
    /// system store's restores are in no conversation's record).
    pub(crate) fn restore_to(
        &self,
        tree: &str,
        paths: &[RestoredPath],
        records: Option<&Path>,
        event_id: &str,
    ) -> Result<Restored> {
        let _lock = self.lock()?;
        let journal = Journal {
            tree: tree.to_owned(),
            paths: paths.to_vec(),
            records: records.map(Path::to_path_buf),
            event_id: event_id.to_owned(),
        };
        let bytes = serde_json::to_vec(&journal).map_err(|e| CheckpointError::Corrupt {
            path: self.journal_path(),
            detail: e.to_string(),
        })?;
        tandem_fs::atomic_write(&self.journal_path(), &bytes)?;
        tandem_fs::sync_dir(self.dir())?;
        self.finish(journal)
    }

    fn journal_path(&self) -> PathBuf {
        self.dir().join(JOURNAL)
    }

    /// Finishes a restore a crash interrupted (called by [`Store::open`]).
    pub(crate) fn recover_locked(&self) -> Result<()> {
        let path = self.journal_path();
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(CheckpointError::io("read", &path, e)),
        };
        let journal: Journal = match serde_json::from_slice(&bytes) {
            Ok(j) => j,
            Err(e) => {
                // Written atomically, so never torn; a foreign file is kept aside, not applied.
                let aside = path.with_extension("json.corrupt");
                let _ = std::fs::rename(&path, &aside);
                return Err(CheckpointError::Corrupt {
                    path: aside,
                    detail: e.to_string(),
                });
            }
        };
        tracing::warn!(store = %self.dir().display(), paths = journal.paths.len(), "finishing a rewind a crash interrupted");
        self.remove_temp_files(&journal.paths);
        self.finish(journal).map(|_| ())
    }

    fn finish(&self, journal: Journal) -> Result<Restored> {
        let failed = self.apply(&journal.tree, &journal.paths)?;
        let mut taken = self.take_locked("rewind", None)?;
        taken.system = self.system().and_then(|s| s.head_commit());
        let records = journal
            .records
            .as_deref()
            .map(|p| RecordLog::new(p.parent().unwrap_or(Path::new("."))));
        let after = match records {
            Some(log) => log.append(&taken, &journal.event_id, CheckpointAuthor::Rewind, None)?,
            None => taken.record(&journal.event_id, CheckpointAuthor::Rewind, None),
        };
        std::fs::remove_file(self.journal_path())
            .map_err(|e| CheckpointError::io("remove", self.journal_path(), e))?;
        Ok(Restored { after, failed })
    }

    /// Removes the temp files a write the crash cut short left beside the journal's paths.
    fn remove_temp_files(&self, paths: &[RestoredPath]) {
        let dirs: BTreeSet<PathBuf> = paths
            .iter()
            .filter_map(|p| {
                self.workspace()
                    .join(&p.path)
                    .parent()
                    .map(Path::to_path_buf)
            })
            .collect();
        for dir in dirs {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with('.') && name.contains(TEMP_MARK) {
                    let _ = std::fs::remove_file(entry.path());
                }
            }
        }
    }

    /// Writes and deletes; idempotent, so a journal can be applied again after a crash.
    fn apply(&self, tree: &str, paths: &[RestoredPath]) -> Result<Vec<SkippedPath>> {
        let root = self.workspace().to_owned();
        let mut failed = Vec::new();
        let mut deletes: Vec<&str> = paths
            .iter()
            .filter(|p| p.change == PathChange::Delete)
            .map(|p| p.path.as_str())
            .collect();
        // Deepest first, so a directory empties before it is removed.
        deletes.sort_by_key(|p| std::cmp::Reverse(p.matches('/').count()));
        let deleted: BTreeSet<&str> = deletes.iter().copied().collect();
        // The system store's roots (`/opt`, `/root`) stay even when a rewind empties them.
        let kept: Vec<PathBuf> = self.scope.iter().map(|s| root.join(s)).collect();
        for rel in &deletes {
            let path = root.join(rel);
            match std::fs::symlink_metadata(&path) {
                Ok(m) if m.is_dir() => {
                    failed.push(SkippedPath {
                        path: (*rel).to_owned(),
                        reason: "is a directory now; left as it is".into(),
                    });
                    continue;
                }
                Ok(_) => {}
                Err(_) => continue,
            }
            if let Err(e) = std::fs::remove_file(&path) {
                failed.push(SkippedPath {
                    path: (*rel).to_owned(),
                    reason: format!("cannot delete: {e}"),
                });
                continue;
            }
            remove_empty_parents(&root, &path, &kept);
        }
        let writes: Vec<String> = paths
            .iter()
            .filter(|p| p.change == PathChange::Write)
            .map(|p| p.path.clone())
            .collect();
        let entries = self.entries(tree, &writes)?;
        let blobs = self
            .git
            .blobs(&entries.iter().map(|e| e.id.clone()).collect::<Vec<_>>())?;
        for (entry, blob) in entries.iter().zip(blobs) {
            if let Err(reason) = write_entry(&root, entry, &blob, &deleted) {
                failed.push(SkippedPath {
                    path: entry.path.clone(),
                    reason,
                });
            }
        }
        Ok(failed)
    }
}

/// Finishes every restore a crash interrupted in the stores under `home`
/// (`$TANDEM_HOME`): each store with a journal is opened, which finishes it. Returns each
/// such store's directory and the outcome.
pub fn recover_all(home: &Path) -> Vec<(PathBuf, Result<()>)> {
    let Ok(dirs) = std::fs::read_dir(home.join("checkpoints")) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for dir in dirs.flatten().map(|d| d.path()) {
        // The system store's is finished when it is opened (Store::open_system).
        if !dir.join(JOURNAL).is_file() || dir.file_name().is_some_and(|n| n == "system") {
            continue;
        }
        let result = std::fs::read(dir.join("workspace"))
            .map_err(|e| CheckpointError::io("read", dir.join("workspace"), e))
            .and_then(|w| {
                let workspace = PathBuf::from(std::ffi::OsStr::from_bytes(&w));
                Store::open(home, &workspace).map(|_| ())
            });
        out.push((dir, result));
    }
    out
}

/// Removes the directories above `path` that are empty now, up to (not including) `root` or
/// any of `kept`.
fn remove_empty_parents(root: &Path, path: &Path, kept: &[PathBuf]) {
    let mut dir = path.parent();
    while let Some(d) = dir {
        if d == root
            || !d.starts_with(root)
            || kept.iter().any(|k| k == d)
            || std::fs::remove_dir(d).is_err()
        {
            break;
        }
        dir = d.parent();
    }
}

/// Writes one tree entry over whatever is at its path, through a temp file renamed in place.
fn write_entry(
    root: &Path,
    entry: &Entry,
    blob: &[u8],
    deleted: &BTreeSet<&str>,
) -> std::result::Result<(), String> {
    let path = root.join(&entry.path);
    let parent = path.parent().unwrap_or(root);
    // A file where the checkpoint has a directory: only replaced when the rewind deletes it.
    let mut ancestor = PathBuf::new();
    for part in Path::new(&entry.path)
        .parent()
        .into_iter()
        .flat_map(Path::components)
    {
        ancestor.push(part);
        let full = root.join(&ancestor);
        if let Ok(m) = std::fs::symlink_metadata(&full)
            && !m.is_dir()
        {
            let rel = ancestor.to_string_lossy();
            if deleted.contains(rel.as_ref()) {
                std::fs::remove_file(&full).map_err(|e| format!("cannot replace {rel}: {e}"))?;
            } else {
                return Err(format!("{rel} is not a directory now; left as it is"));
            }
        }
    }
    std::fs::create_dir_all(parent).map_err(|e| format!("cannot create its directory: {e}"))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let random = uuid::Uuid::new_v4().simple().to_string();
    let temp = parent.join(format!(".{name}{TEMP_MARK}{}", &random[..12]));
    let written = match entry.mode.as_str() {
        "120000" => {
            let target = std::ffi::OsStr::from_bytes(blob);
            std::os::unix::fs::symlink(target, &temp)
        }
        mode => write_file(&temp, blob, mode == "100755"),
    };
    let renamed = written.and_then(|()| {
        keep_owner(&temp, &path, parent);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
            // A directory where the checkpoint has a file: only an empty one is replaced.
            std::fs::remove_dir(&path)?;
        }
        std::fs::rename(&temp, &path)
    });
    if let Err(e) = renamed {
        let _ = std::fs::remove_file(&temp);
        return Err(format!("cannot write: {e}"));
    }
    Ok(())
}

/// Gives a written file the owner and permission bits of the file it replaces (the exec bit
/// stays the checkpoint's), or, for a new one, its folder's owner: a root server restoring a
/// person's file or the agent's home leaves it theirs, and a private file stays private.
/// Best effort: without the right to change owners the file stays the server's.
fn keep_owner(temp: &Path, path: &Path, parent: &Path) {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Ok(written) = std::fs::symlink_metadata(temp) else {
        return;
    };
    let old = std::fs::symlink_metadata(path)
        .ok()
        .filter(|m| m.is_file() == written.is_file());
    if let Some(old) = old.as_ref().filter(|_| written.is_file()) {
        // Read and write bits from the old file; execute where it can be read, when the
        // checkpoint's file is executable. Never a set-id bit.
        let read_write = old.mode() & 0o666;
        let exec = if written.mode() & 0o111 != 0 {
            (read_write & 0o444) >> 2
        } else {
            0
        };
        let _ = std::fs::set_permissions(temp, std::fs::Permissions::from_mode(read_write | exec));
    }
    let owner = old.or_else(|| std::fs::metadata(parent).ok());
    if let Some(owner) = owner
        && (owner.uid() != written.uid() || owner.gid() != written.gid())
    {
        let _ = std::os::unix::fs::lchown(temp, Some(owner.uid()), Some(owner.gid()));
    }
}

fn write_file(path: &Path, bytes: &[u8], executable: bool) -> std::io::Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(if executable { 0o755 } else { 0o644 })
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_data()
}
