//! Atomic file replacement, as [`tandem_fs`] does it for every Tandem crate, with the SDK's
//! error type.

use std::path::Path;

use crate::{Result, SdkError};

/// Mode of every file Tandem persists: readable by the owner only.
pub(crate) use tandem_fs::FILE_MODE;

/// Replaces `path` with `bytes` atomically: a reader (or a crash) sees the old content or the
/// new, never a mix. The bytes go to a temp file `.<name>.<random>` in the same directory (mode
/// 0600), are synced to disk (`fdatasync`), and the temp file is renamed over `path`. The
/// directory itself is not synced, as upstream does: the new name survives a killed process
/// at once and a power loss once the kernel writes the directory back.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    tandem_fs::atomic_write(path, bytes).map_err(into_sdk)
}

/// Syncs a directory so that names created in it survive a power loss (used once per new
/// conversation, not per event).
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    tandem_fs::sync_dir(dir).map_err(into_sdk)
}

fn into_sdk(error: tandem_fs::Error) -> SdkError {
    let tandem_fs::Error::Io { op, path, source } = error;
    SdkError::io(op, path, source)
}
