//! Small JSON files only this user may read: written to a temporary sibling with mode 0600,
//! fsynced, then renamed over the old one, so a crash leaves either the old or the new file.

use std::io::Write;
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
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut file = opts
        .open(&tmp)
        .map_err(|e| Error::io(ctx("creating a temporary file for"), e))?;
    file.write_all(&bytes)
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(ctx("writing"), e))?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(|e| Error::io(ctx("replacing"), e))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
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
}
