//! Resolving the path the model gave and keeping it inside the workspace.
//!
//! The path must be absolute. It is resolved component by component: every existing prefix is
//! canonicalised (so symbolic links are followed wherever they point), `..` steps back from the
//! resolved prefix, and the part that does not exist yet is appended as written. The result must
//! lie inside the canonical workspace root; anything else is refused, since the terminal is the
//! tool for files outside the workspace.

use std::path::{Component, Path, PathBuf};

use tandem_sdk::lexical_normalize;

use super::error::EditorError;

/// The real location of `given` if it is absolute and lies inside `root`.
pub fn resolve_in_workspace(given: &str, root: &Path) -> Result<PathBuf, EditorError> {
    let path = Path::new(given);
    if !path.is_absolute() {
        let mut hint = "The path should be an absolute path, starting with `/`.".to_owned();
        let suggestion = root.join(path);
        if suggestion.exists() {
            hint.push_str(&format!(" Maybe you meant {}?", suggestion.display()));
        }
        return Err(EditorError::invalid("path", given, hint));
    }
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| lexical_normalize(root));
    let resolved = resolve(path).map_err(|why| EditorError::invalid("path", given, why))?;
    if !resolved.starts_with(&root) {
        let shown = if resolved == lexical_normalize(path) {
            String::new()
        } else {
            format!(" (it resolves to {})", resolved.display())
        };
        return Err(EditorError::invalid(
            "path",
            given,
            format!(
                "The path is outside the workspace {}{shown}. The file editor only works on files \
                 inside the workspace; use the terminal for files outside it.",
                root.display()
            ),
        ));
    }
    Ok(resolved)
}

/// Why a path cannot be resolved (the text is a sentence).
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unresolvable {
    /// A symbolic link on the way points nowhere.
    #[error("{} is a symbolic link whose target does not exist.", .0.display())]
    DanglingLink(PathBuf),
    /// A prefix exists but cannot be canonicalised.
    #[error("Cannot resolve {}: {source}.", path.display())]
    Io {
        /// The prefix.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// Follows symbolic links in the existing prefix of an absolute `path` and applies `..`.
pub(crate) fn resolve(path: &Path) -> Result<PathBuf, Unresolvable> {
    let mut resolved = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => resolved = PathBuf::from("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                resolved.pop();
            }
            Component::Normal(name) => {
                resolved.push(name);
                match std::fs::symlink_metadata(&resolved) {
                    Err(_) => {}
                    Ok(meta) => match std::fs::canonicalize(&resolved) {
                        Ok(real) => resolved = real,
                        Err(_) if meta.file_type().is_symlink() => {
                            return Err(Unresolvable::DanglingLink(resolved));
                        }
                        Err(source) => {
                            return Err(Unresolvable::Io {
                                path: resolved,
                                source,
                            });
                        }
                    },
                }
            }
        }
    }
    Ok(resolved)
}
