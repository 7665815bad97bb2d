//! Atomic file replacement: write a temp file beside the target, sync it, rename it over.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::{Result, SdkError};

/// Mode of every file Tandem persists: readable by the owner only (it may hold conversation
/// content and tool output).
pub(crate) const FILE_MODE: u32 = 0o600;

/// Replaces `path` with `bytes` atomically: a reader (or a crash) sees the old content or the
/// new, never a mix. The bytes go to a temp file `.<name>.<random>` in the same directory (mode
/// 0600), are synced to disk (`fdatasync`), and the temp file is renamed over `path`. The
/// directory itself is not synced, as upstream does: the new name survives a killed process
/// at once and a power loss once the kernel writes the directory back.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    let temp = temp_path(path)?;
    let written = write_synced(&temp, bytes)
        .and_then(|()| std::fs::rename(&temp, path).map_err(|e| SdkError::io("rename", path, e)));
    if written.is_err() {
        // Best effort: a leftover temp file is a dot-file every loader ignores.
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// `.<name>.<random>` beside `path`.
fn temp_path(path: &Path) -> Result<PathBuf> {
    let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
        SdkError::io(
            "write",
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
        )
    })?;
    let random = uuid::Uuid::new_v4().simple().to_string();
    Ok(path.with_file_name(format!(".{name}.{}", &random[..12])))
}

/// Creates `path` (which must not exist) with mode 0600, writes `bytes`, and syncs the data.
fn write_synced(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)
        .map_err(|e| SdkError::io("create", path, e))?;
    file.write_all(bytes)
        .map_err(|e| SdkError::io("write", path, e))?;
    // fdatasync: the data and the size it needs; mtime is not worth a second journal write.
    file.sync_data().map_err(|e| SdkError::io("sync", path, e))
}

/// Syncs a directory so that names created in it survive a power loss (used once per new
/// conversation, not per event).
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| SdkError::io("sync", dir, e))
}
