//! Where a path a command names lies relative to the workspace, judged from its text alone
//! (symbolic links are not followed: the rules see what the command says, not the disk).

use std::path::{Component, Path, PathBuf};

/// Where a path lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// Inside the workspace.
    Inside,
    /// In a scratch directory (`/tmp`, `/var/tmp`): outside, but meant for throwaway files.
    Scratch,
    /// Anywhere else, including the home directory (`~`, `$HOME`).
    Outside,
    /// Cannot tell: the path comes from a variable or a command substitution.
    Unknown,
}

/// The directory relative paths resolve against: a known directory, or somewhere unknown
/// (after `cd ~`, `cd $DIR`, `cd -`), which counts as outside.
pub type Cwd = Option<PathBuf>;

/// Scratch directories: writes there are outside the workspace but not treated as high risk.
pub const SCRATCH_DIRS: [&str; 2] = ["/tmp", "/var/tmp"];

/// The workspace as written and, when it exists, with symbolic links resolved.
#[derive(Debug, Clone)]
pub struct Workspace {
    roots: Vec<PathBuf>,
}

impl Workspace {
    /// The workspace at `root`.
    pub fn new(root: &Path) -> Self {
        let mut roots = vec![lexical_normalize(root)];
        if let Ok(real) = std::fs::canonicalize(root)
            && !roots.contains(&real)
        {
            roots.push(real);
        }
        Self { roots }
    }

    /// The workspace root as written.
    pub fn root(&self) -> &Path {
        &self.roots[0]
    }

    /// Whether `path` (absolute, normalised) is the workspace root itself.
    pub fn is_root(&self, path: &Path) -> bool {
        self.roots.iter().any(|r| r == path)
    }

    /// Where the absolute, normalised `path` lies.
    pub fn locate_absolute(&self, path: &Path) -> Location {
        if self.roots.iter().any(|r| path.starts_with(r)) {
            Location::Inside
        } else if SCRATCH_DIRS
            .iter()
            .any(|d| path.starts_with(d) && path != Path::new(d))
        {
            Location::Scratch
        } else {
            Location::Outside
        }
    }

    /// Where the path written as `text` lies, relative paths resolving against `cwd`.
    pub fn locate(&self, text: &str, cwd: &Cwd) -> Location {
        match self.resolve(text, cwd) {
            Resolved::Path(p) => self.locate_absolute(&p),
            Resolved::Home => Location::Outside,
            Resolved::Unknown => Location::Unknown,
        }
    }

    /// The absolute, normalised path `text` names.
    pub fn resolve(&self, text: &str, cwd: &Cwd) -> Resolved {
        if is_home(text) {
            return Resolved::Home;
        }
        if text.contains('$') || text.contains('`') {
            return Resolved::Unknown;
        }
        let path = Path::new(text);
        if path.is_absolute() {
            return Resolved::Path(lexical_normalize(path));
        }
        match cwd {
            Some(dir) => Resolved::Path(lexical_normalize(&dir.join(path))),
            None => Resolved::Home,
        }
    }
}

/// What a path text resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A known absolute path.
    Path(PathBuf),
    /// Somewhere in (or relative to) the home directory.
    Home,
    /// Unknown (a variable or substitution).
    Unknown,
}

/// Whether `text` names the home directory or something in it.
pub fn is_home(text: &str) -> bool {
    text == "~"
        || text.starts_with("~/")
        || (text.starts_with('~') && !text.contains('/'))
        || ["$HOME", "${HOME}"].iter().any(|h| {
            text.strip_prefix(h)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
}

/// `path` with `.` dropped and `..` applied lexically, without touching the file system; `..`
/// never climbs above `/` (at the root it stays at the root, as the kernel does). The file
/// editor resolves its paths with it too.
pub fn lexical_normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() && !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
