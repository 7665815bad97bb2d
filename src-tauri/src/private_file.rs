//! Small JSON files only this user may read, in a folder only this user may list: written with
//! [`tandem_fs::atomic_write`] (a temporary sibling with mode 0600, fsynced, then renamed over
//! the old one), so a crash leaves either the old or the new file.

use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// Reads `path` as JSON; a missing file is `None`.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<Option<T>> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|source| Error::Json {
                context: path.display().to_string(),
                source,
            }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("reading {}", path.display()), e)),
    }
}

/// Writes `value` as pretty JSON to `path` atomically with mode 0600 (its folder 0700 when
/// this creates it).
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let ctx = |what: &str| format!("{what} {}", path.display());
    let dir = path.parent().ok_or_else(|| {
        Error::io(
            ctx("no folder for"),
            std::io::ErrorKind::InvalidInput.into(),
        )
    })?;
    create_private_dir(dir)?;
    let bytes = serde_json::to_vec_pretty(value).map_err(|source| Error::Json {
        context: path.display().to_string(),
        source,
    })?;
    tandem_fs::atomic_write(path, &bytes).map_err(|e| file_error(ctx("writing"), e))?;
    // Saved sessions and backends should survive a power loss right after they change.
    let _ = tandem_fs::sync_dir(dir);
    Ok(())
}

/// The step of an atomic write that failed, in the app's error.
fn file_error(context: String, error: tandem_fs::Error) -> Error {
    let tandem_fs::Error::Io { op, path, source } = error;
    Error::io(format!("{context} ({op} {})", path.display()), source)
}

/// Creates `dir` (and its parents) with mode 0700 for the last component when missing.
pub fn create_private_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut b, 0o700);
    b.create(dir)
        .map_err(|e| Error::io(format!("creating {}", dir.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/x.json");
        assert_eq!(read_json::<Vec<u32>>(&path).unwrap(), None);
        write_json(&path, &vec![1u32, 2]).unwrap();
        write_json(&path, &vec![3u32]).unwrap();
        assert_eq!(read_json::<Vec<u32>>(&path).unwrap(), Some(vec![3]));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600
            );
            assert_eq!(
                std::fs::metadata(path.parent().unwrap())
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o777,
                0o700
            );
        }
        std::fs::write(&path, b"{not json").unwrap();
        assert_eq!(read_json::<Vec<u32>>(&path).unwrap_err().code(), "bad_json");
    }

    /// Windows of one app saving the session at once each write their own temp file (it was
    /// named by the process id, so two threads clobbered each other's and one save failed).
    #[test]
    fn concurrent_saves_all_succeed_and_leave_one_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.json");
        std::thread::scope(|scope| {
            for i in 0..8u32 {
                let path = &path;
                scope.spawn(move || {
                    for _ in 0..20 {
                        write_json(path, &vec![i; 4096]).unwrap();
                    }
                });
            }
        });
        let saved: Vec<u32> = read_json(&path).unwrap().unwrap();
        assert_eq!(saved.len(), 4096);
        assert!(saved.iter().all(|v| *v == saved[0]), "one save, whole");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1, "no temp file is left");
    }
}
