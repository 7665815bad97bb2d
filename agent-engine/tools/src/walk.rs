//! The file walk that `glob` and `grep` share: ripgrep's own walker (the `ignore` crate) on all
//! cores, skipping what `rg` skips (hidden files, `.gitignore`, `.ignore`, `.git/info/exclude`
//! and the global git excludes), confined to the workspace and stopped on interrupt.
//!
//! Both tools list files newest first, as upstream's `rg --sortr=modified` does, but without
//! giving up the parallel walk as `rg` does for sorting: each walker thread keeps what it found
//! with its modification time and the lists are merged and sorted once.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkBuilder, WalkState};
use tokio_util::sync::CancellationToken;

use crate::file_editor::paths;

/// How many files a search lists; more are cut and the result says `truncated`.
pub const MAX_RESULTS: usize = 100;

/// What the model reads when the user interrupted a search.
pub const CANCELLED: &str = "The search was interrupted.";

/// A file the walk found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its absolute path (the search directory joined with the path below it).
    pub path: PathBuf,
    /// When it was last modified (the epoch when unknown).
    pub modified: SystemTime,
}

/// The walk was interrupted through the tool's cancellation token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

/// The directory a search runs in: `given` (absolute, or relative to the workspace) or the
/// workspace itself, with symbolic links resolved. Refused with a message naming the path when
/// it lies outside the workspace or is not a directory.
pub fn search_dir(given: Option<&str>, workspace: &Path) -> Result<PathBuf, SearchError> {
    let root = std::fs::canonicalize(workspace).map_err(|source| SearchError::Workspace {
        workspace: workspace.to_path_buf(),
        source,
    })?;
    let given = given.map(str::trim).filter(|g| !g.is_empty());
    let Some(given) = given else {
        return Ok(root);
    };
    let absolute = root.join(given);
    let resolved = paths::resolve(&absolute).map_err(|why| SearchError::InvalidPath {
        given: given.to_owned(),
        why,
    })?;
    if !resolved.starts_with(&root) {
        return Err(SearchError::OutsideWorkspace {
            given: given.to_owned(),
            root,
        });
    }
    if !resolved.is_dir() {
        return Err(SearchError::NotADirectory(given.to_owned()));
    }
    Ok(resolved)
}

/// Why a search cannot start; the text is what the model reads.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The workspace itself cannot be read.
    #[error("The workspace {} cannot be read: {source}", workspace.display())]
    Workspace {
        /// The workspace.
        workspace: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The search path cannot be resolved.
    #[error("Invalid path '{given}': {why}")]
    InvalidPath {
        /// The path as given.
        given: String,
        /// Why it cannot be resolved.
        why: paths::Unresolvable,
    },
    /// The search path lies outside the workspace.
    #[error(
        "Search path '{given}' is outside the workspace {}; only files inside the workspace \
         can be searched.",
        root.display()
    )]
    OutsideWorkspace {
        /// The path as given.
        given: String,
        /// The workspace's real path.
        root: PathBuf,
    },
    /// The search path is not a directory.
    #[error("Search path '{0}' is not a valid directory")]
    NotADirectory(String),
    /// The file name pattern is not a glob.
    #[error("Invalid glob pattern '{pattern}': {kind}")]
    BadPattern {
        /// The pattern as given.
        pattern: String,
        /// What is wrong with it.
        kind: globset::ErrorKind,
    },
}

/// A file name pattern as `rg -g` reads one: `*.rs` or `*.{ts,tsx}` (no `/`) matches the file
/// name at any depth; a pattern with a `/` (`src/**/*.ts`, `**/*.js`) matches the path below
/// the search directory. `*` never crosses a `/`; `**` does.
#[derive(Debug, Clone)]
pub struct NamePattern {
    matcher: GlobMatcher,
    whole_path: bool,
}

impl NamePattern {
    /// Compiles `pattern`; the error names the pattern and what is wrong with it.
    pub fn new(pattern: &str) -> Result<Self, SearchError> {
        // `./src/*.rs` and `/src/*.rs` (gitignore's anchored form) mean `src/*.rs`.
        let trimmed = pattern.strip_prefix("./").unwrap_or(pattern);
        let trimmed = trimmed.strip_prefix('/').unwrap_or(trimmed);
        let glob = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .build()
            .map_err(|e| SearchError::BadPattern {
                pattern: pattern.to_owned(),
                kind: e.kind().clone(),
            })?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            whole_path: trimmed.contains('/'),
        })
    }

    /// Whether the file at `relative` (below the search directory) matches.
    pub fn matches(&self, relative: &Path) -> bool {
        if self.whole_path {
            self.matcher.is_match(relative)
        } else {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        }
    }
}

/// Every file below `dir` that `rg --files` would list and `pattern` (if any) matches, with its
/// modification time, in no particular order. Runs on the calling thread plus the walker's
/// threads; checks `cancel` at every entry.
pub fn files(
    dir: &Path,
    pattern: Option<&NamePattern>,
    cancel: &CancellationToken,
) -> Result<Vec<Found>, Cancelled> {
    let collected = Mutex::new(Vec::new());
    let mut builder = Collector {
        dir,
        pattern,
        cancel,
        collected: &collected,
    };
    walker(dir).visit(&mut builder);
    if cancel.is_cancelled() {
        return Err(Cancelled);
    }
    Ok(collected.into_inner().unwrap_or_else(|e| e.into_inner()))
}

/// The walker `rg` would use on `dir`, except that `.gitignore` counts outside git repositories
/// too (a workspace need not be one).
fn walker(dir: &Path) -> ignore::WalkParallel {
    WalkBuilder::new(dir)
        .standard_filters(true)
        .require_git(false)
        .build_parallel()
}

/// Newest first; equal times by path, so the order is stable.
pub fn sort_newest_first(found: &mut [Found]) {
    found.sort_unstable_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
}

/// The first [`MAX_RESULTS`] of `found` (newest first) as text, and whether more were found.
pub fn newest(mut found: Vec<Found>) -> (Vec<String>, bool) {
    let truncated = found.len() > MAX_RESULTS;
    if truncated {
        // Only the newest need sorting.
        found.select_nth_unstable_by(MAX_RESULTS, |a, b| {
            b.modified
                .cmp(&a.modified)
                .then_with(|| a.path.cmp(&b.path))
        });
        found.truncate(MAX_RESULTS);
    }
    sort_newest_first(&mut found);
    let shown = found
        .into_iter()
        .map(|f| f.path.to_string_lossy().into_owned())
        .collect();
    (shown, truncated)
}

struct Collector<'a> {
    dir: &'a Path,
    pattern: Option<&'a NamePattern>,
    cancel: &'a CancellationToken,
    collected: &'a Mutex<Vec<Found>>,
}

impl<'s> ParallelVisitorBuilder<'s> for Collector<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            dir: self.dir,
            pattern: self.pattern,
            cancel: self.cancel,
            collected: self.collected,
            found: Vec::new(),
        })
    }
}

/// One walker thread: keeps its finds to itself and hands them over when it is done.
struct Visitor<'a> {
    dir: &'a Path,
    pattern: Option<&'a NamePattern>,
    cancel: &'a CancellationToken,
    collected: &'a Mutex<Vec<Found>>,
    found: Vec<Found>,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.cancel.is_cancelled() {
            return WalkState::Quit;
        }
        // Unreadable entries are skipped, as `rg` skips them (it only warns).
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        // Files only: not directories, and not symbolic links, which may lead out of the
        // workspace (the walk does not follow them either).
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return WalkState::Continue;
        }
        let relative = entry.path().strip_prefix(self.dir).unwrap_or(entry.path());
        if self.pattern.is_some_and(|p| !p.matches(relative)) {
            return WalkState::Continue;
        }
        let modified = entry
            .metadata()
            .ok()
            .and_then(|m| m.modified().ok())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        self.found.push(Found {
            path: entry.into_path(),
            modified,
        });
        WalkState::Continue
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let mut collected = self.collected.lock().unwrap_or_else(|e| e.into_inner());
        collected.append(&mut self.found);
    }
}
