//! Paths that arrive in requests (`?path=`, a body's `path`, a bash `cwd`): checked for shape
//! before the file system sees them (empty, NUL bytes, names longer than the file system
//! takes), confined to the workspace, and file-system errors on them turned into answers that
//! name the field instead of a 500.

use std::path::{Component, Path, PathBuf};

use serde_json::Value;

use crate::error::{ApiError, Result};

/// Longest file or folder name most file systems take, in bytes.
const MAX_NAME_BYTES: usize = 255;
/// Longest path the kernel takes, in bytes (`PATH_MAX` less the final NUL).
const MAX_PATH_BYTES: usize = 4095;

/// A path from a request and where it was in it (`["query", "path"]`, `["body", "cwd"]`),
/// so that an error can name the field.
#[derive(Debug, Clone, Copy)]
pub struct PathArg<'a> {
    /// The path as sent.
    pub raw: &'a str,
    /// Where it was: `["body", "path"]` and the like.
    pub loc: &'a [&'a str],
}

impl<'a> PathArg<'a> {
    /// The path `raw` found at `loc`.
    pub fn new(raw: &'a str, loc: &'a [&'a str]) -> Self {
        Self { raw, loc }
    }

    /// A 422 about this field.
    pub fn invalid(&self, msg: impl Into<String>) -> ApiError {
        ApiError::field(self.loc, "value_error", msg, Value::from(self.raw))
    }

    /// The path, when it is one the file system can take: not empty, no NUL byte, no name
    /// over 255 bytes, 4095 bytes at most in all.
    pub fn checked(&self) -> Result<&'a Path> {
        let raw = self.raw;
        if raw.is_empty() {
            return Err(self.invalid("the path is empty"));
        }
        if raw.contains('\0') {
            return Err(self.invalid("the path contains a NUL byte"));
        }
        if raw.len() > MAX_PATH_BYTES {
            return Err(self.invalid(format!(
                "the path is {} bytes long; paths are {MAX_PATH_BYTES} bytes at most",
                raw.len()
            )));
        }
        let path = Path::new(raw);
        if let Some(long) = path.components().find_map(|c| match c {
            Component::Normal(n) if n.len() > MAX_NAME_BYTES => Some(n.len()),
            _ => None,
        }) {
            return Err(self.invalid(format!(
                "a name in the path is {long} bytes long; names are {MAX_NAME_BYTES} bytes at most"
            )));
        }
        Ok(path)
    }

    /// The answer for the file-system error `e` met while `doing` (e.g. "writing") this path:
    /// missing is 404, a folder where a file belongs (or the other way round) and names the
    /// file system refuses are 422 naming the field; the rest stays a 500 that says what broke.
    pub fn io_error(&self, doing: &str, e: &std::io::Error) -> ApiError {
        use std::io::ErrorKind as K;
        let raw = self.raw;
        match e.kind() {
            K::NotFound => ApiError::NotFound,
            K::IsADirectory => self.invalid(format!("`{raw}` is a folder, not a file")),
            K::NotADirectory => self.invalid(format!("a part of `{raw}` is a file, not a folder")),
            K::AlreadyExists => self.invalid(format!("`{raw}` already exists as a file")),
            K::InvalidFilename | K::InvalidInput => {
                self.invalid(format!("`{raw}` is not a valid path here: {e}"))
            }
            K::PermissionDenied | K::ReadOnlyFilesystem => {
                ApiError::Unprocessable(format!("no permission for {doing} `{raw}`: {e}"))
            }
            _ => ApiError::Internal(format!("{doing} `{raw}`: {e}")),
        }
    }
}

/// Resolves `arg` (relative to `root`, or absolute inside it) to a path inside the workspace.
/// A malformed path is a 422 naming the field; `..`, absolute paths elsewhere and symlinks
/// leading out are 403.
pub fn confine(root: &Path, arg: PathArg<'_>) -> Result<PathBuf> {
    let raw = arg.raw;
    let p = arg.checked()?;
    let root = root.canonicalize().map_err(|e| {
        tracing::debug!("workspace {}: {e}", root.display());
        ApiError::NotFound
    })?;
    if p.components().any(|c| matches!(c, Component::ParentDir)) {
        return Err(ApiError::Forbidden(format!(
            "`{raw}` leaves the workspace (`..` is not allowed)"
        )));
    }
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        root.join(p)
    };
    // The deepest existing ancestor, resolved with symlinks, must stay inside.
    let mut existing = joined.as_path();
    let mut rest = Vec::new();
    while !existing.exists() && existing.symlink_metadata().is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                existing = parent;
            }
            _ => break,
        }
    }
    let resolved = existing
        .canonicalize()
        .map_err(|_| ApiError::Forbidden(format!("`{raw}` is outside the workspace")))?;
    if !resolved.starts_with(&root) {
        return Err(ApiError::Forbidden(format!(
            "`{raw}` is outside the workspace {}",
            root.display()
        )));
    }
    let mut full = resolved;
    for name in rest.into_iter().rev() {
        full.push(name);
    }
    Ok(full)
}

/// Checks that `path` (from `arg`) can be written as a file: it is not a folder (the
/// workspace root included) and no part of its parent is a file. A missing file is fine.
pub async fn writable_file(arg: PathArg<'_>, path: &Path) -> Result<()> {
    match tokio::fs::metadata(path).await {
        Ok(meta) if meta.is_dir() => Err(arg.invalid(format!(
            "`{}` is a folder; give the path of a file",
            arg.raw
        ))),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            // Walk up: the first existing ancestor must be a folder.
            let mut up = path.parent();
            while let Some(dir) = up {
                match tokio::fs::metadata(dir).await {
                    Ok(meta) if meta.is_dir() => return Ok(()),
                    Ok(_) => {
                        return Err(
                            arg.invalid(format!("`{}` is under a file, not a folder", arg.raw))
                        );
                    }
                    Err(_) => up = dir.parent(),
                }
            }
            Ok(())
        }
        Err(e) => Err(arg.io_error("reading", &e)),
    }
}

/// The metadata of an existing file at `path` (from `arg`): 404 when missing, 422 when it is
/// a folder (the workspace root included).
pub async fn existing_file(arg: PathArg<'_>, path: &Path) -> Result<std::fs::Metadata> {
    let meta = tokio::fs::metadata(path)
        .await
        .map_err(|e| arg.io_error("reading", &e))?;
    if meta.is_dir() {
        return Err(arg.invalid(format!(
            "`{}` is a folder; give the path of a file",
            arg.raw
        )));
    }
    if !meta.is_file() {
        return Err(arg.invalid(format!("`{}` is not a regular file", arg.raw)));
    }
    Ok(meta)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    const LOC: &[&str] = &["body", "path"];

    fn loc_of(e: &ApiError) -> Vec<Value> {
        match e {
            ApiError::Validation(items) => items[0].loc.clone(),
            other => panic!("not a 422: {other:?}"),
        }
    }

    #[test]
    fn malformed_paths_are_422_naming_the_field() {
        let long_name = "n".repeat(256);
        let long_path = "d/".repeat(2100);
        for raw in ["", "a\0b", long_name.as_str(), long_path.as_str()] {
            let e = PathArg::new(raw, LOC).checked().unwrap_err();
            assert_eq!(loc_of(&e), vec![Value::from("body"), Value::from("path")]);
        }
        assert!(PathArg::new(&"n".repeat(255), LOC).checked().is_ok());
        assert!(PathArg::new(" ", LOC).checked().is_ok());
    }

    #[test]
    fn confine_keeps_paths_inside_and_names_bad_ones() {
        let root = tempfile::tempdir().unwrap();
        let inside = confine(root.path(), PathArg::new("a/b.txt", LOC)).unwrap();
        assert!(inside.ends_with("a/b.txt"));
        assert!(matches!(
            confine(root.path(), PathArg::new("../x", LOC)),
            Err(ApiError::Forbidden(_))
        ));
        assert!(matches!(
            confine(root.path(), PathArg::new("", LOC)),
            Err(ApiError::Validation(_))
        ));
        let root_itself = confine(root.path(), PathArg::new(".", LOC)).unwrap();
        assert_eq!(root_itself, root.path().canonicalize().unwrap());
    }

    #[tokio::test]
    async fn folders_and_files_in_the_wrong_place_are_422() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("f.txt");
        std::fs::write(&file, "x").unwrap();
        let arg = PathArg::new("p", LOC);
        assert!(matches!(
            writable_file(arg, root.path()).await,
            Err(ApiError::Validation(_))
        ));
        assert!(matches!(
            writable_file(arg, &file.join("under/deeper.txt")).await,
            Err(ApiError::Validation(_))
        ));
        assert!(
            writable_file(arg, &root.path().join("new/n.txt"))
                .await
                .is_ok()
        );
        assert!(writable_file(arg, &file).await.is_ok());
        assert!(matches!(
            existing_file(arg, root.path()).await,
            Err(ApiError::Validation(_))
        ));
        assert!(matches!(
            existing_file(arg, &root.path().join("missing")).await,
            Err(ApiError::NotFound)
        ));
        assert!(matches!(
            existing_file(arg, &file.join("x")).await,
            Err(ApiError::Validation(_))
        ));
    }
}
