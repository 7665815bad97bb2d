//! Per-file undo history: the contents a file had before each edit, newest last.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// How many earlier versions are kept per file.
pub const MAX_VERSIONS_PER_FILE: usize = 10;

/// The earlier versions of every file this editor changed. `None` records that the file did
/// not exist before (it was created), so undoing that edit removes it.
#[derive(Debug, Default)]
pub struct FileHistory {
    versions: HashMap<PathBuf, Vec<Option<String>>>,
}

impl FileHistory {
    /// Remembers what `path` held before an edit, dropping the oldest version beyond the cap.
    pub fn record(&mut self, path: &Path, previous: Option<String>) {
        let versions = self.versions.entry(path.to_path_buf()).or_default();
        versions.push(previous);
        if versions.len() > MAX_VERSIONS_PER_FILE {
            versions.remove(0);
        }
    }

    /// Takes the most recent earlier version of `path`: `Some(None)` means "did not exist".
    pub fn pop(&mut self, path: &Path) -> Option<Option<String>> {
        let versions = self.versions.get_mut(path)?;
        let last = versions.pop();
        if versions.is_empty() {
            self.versions.remove(path);
        }
        last
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_newest_versions_up_to_the_cap() {
        let mut h = FileHistory::default();
        let p = Path::new("/w/a");
        for i in 0..(MAX_VERSIONS_PER_FILE + 3) {
            h.record(p, Some(i.to_string()));
        }
        let mut popped = Vec::new();
        while let Some(v) = h.pop(p) {
            popped.push(v);
        }
        assert_eq!(popped.len(), MAX_VERSIONS_PER_FILE);
        assert_eq!(popped[0], Some((MAX_VERSIONS_PER_FILE + 2).to_string()));
        assert_eq!(h.pop(p), None);
    }
}
