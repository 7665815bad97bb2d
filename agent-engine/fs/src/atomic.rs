//! Atomic file replacement: write a temp file beside the target, sync it, rename it over.

use std::fs::{File, OpenOptions};
use std::io::Write;
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// Mode of every file Tandem persists: readable by the owner only (it may hold conversation
/// content, tool output, completion logs or saved sessions).
pub const FILE_MODE: u32 = 0o600;

/// Replaces `path` with `bytes` atomically: a reader (or a crash) sees the old content or the
/// new, never a mix. The bytes go to a temp file `.<name>.<random>` in the same directory (mode
/// 0600), are synced to disk (`fdatasync`), and the temp file is renamed over `path`.
///
/// The temp file is created exclusively (`O_EXCL`): it never follows a link planted at its
/// name, and its random name lets writers of the same file (threads of one process, or two
/// processes) never collide. A link at `path` is replaced, not written through. The directory
/// itself is not synced, as upstream does: the new name survives a killed process at once and a
/// power loss once the kernel writes the directory back ([`sync_dir`] when that matters).
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<()> {
    let temp = temp_path(path)?;
    let written = write_synced(&temp, bytes)
        .and_then(|()| std::fs::rename(&temp, path).map_err(|e| Error::io("rename", path, e)));
    if written.is_err() {
        // Best effort: a leftover temp file is a dot-file every loader ignores.
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// `.<name>.<random>` beside `path`.
fn temp_path(path: &Path) -> Result<PathBuf> {
    let name = path.file_name().and_then(|n| n.to_str()).ok_or_else(|| {
        Error::io(
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
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    options.mode(FILE_MODE);
    let mut file = options
        .open(path)
        .map_err(|e| Error::io("create", path, e))?;
    file.write_all(bytes)
        .map_err(|e| Error::io("write", path, e))?;
    // fdatasync: the data and the size it needs; mtime is not worth a second journal write.
    file.sync_data().map_err(|e| Error::io("sync", path, e))
}

/// Syncs a directory so that names created or replaced in it survive a power loss.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io("sync", dir, e))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn replaces_the_file_with_mode_0600_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        atomic_write(&path, b"old").unwrap();
        atomic_write(&path, b"new").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, FILE_MODE);
        assert_eq!(names(dir.path()), vec!["state.json"]);
        sync_dir(dir.path()).unwrap();
    }

    /// Writers of one file each get their own temp name: none fails, and the file ends whole,
    /// as one of them wrote it (a fixed temp name made concurrent writers clobber each other's
    /// temp file and fail the rename).
    #[test]
    fn concurrent_writers_of_one_file_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.json");
        let contents: Vec<Vec<u8>> = (0..8u8).map(|i| vec![b'a' + i; 64 * 1024]).collect();
        std::thread::scope(|scope| {
            for bytes in &contents {
                let path = &path;
                scope.spawn(move || {
                    for _ in 0..20 {
                        atomic_write(path, bytes).unwrap();
                    }
                });
            }
        });
        let last = std::fs::read(&path).unwrap();
        assert!(contents.contains(&last), "the file is one writer's bytes");
        assert_eq!(names(dir.path()), vec!["tasks.json"]);
    }

    #[test]
    fn a_link_at_the_target_is_replaced_not_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, b"untouched").unwrap();
        let path = dir.path().join("session.json");
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        atomic_write(&path, b"{}").unwrap();
        assert_eq!(std::fs::read(&elsewhere).unwrap(), b"untouched");
        assert!(!std::fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
    }

    #[test]
    fn a_failed_write_names_the_step_and_leaves_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        // A directory cannot be replaced by a file: the rename fails after the temp was written.
        let path = dir.path().join("taken");
        std::fs::create_dir(&path).unwrap();
        std::fs::write(path.join("inside"), b"kept").unwrap();
        let err = atomic_write(&path, b"x").unwrap_err();
        let Error::Io {
            op, path: failed, ..
        } = &err;
        assert_eq!((*op, failed.as_path()), ("rename", path.as_path()));
        assert!(err.to_string().starts_with("rename "), "{err}");
        assert_eq!(names(dir.path()), vec!["taken"]);

        let err = atomic_write(Path::new("/"), b"x").unwrap_err();
        assert!(err.to_string().contains("not a file name"), "{err}");
        let missing = dir.path().join("no-such-dir").join("f.json");
        let Error::Io { op, .. } = atomic_write(&missing, b"x").unwrap_err();
        assert_eq!(op, "create");
    }
}
