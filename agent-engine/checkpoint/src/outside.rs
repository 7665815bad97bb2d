//! Effects outside the workspace, found where they can be: folders under a few roots (the
//! home folder, `/usr/local`, `/opt`, `/etc`) stamped before and after an action, so a
//! `pip install --user`, an `npm install -g` or an edited `~/.bashrc` is named on the action
//! that did it. They are not in any checkpoint and so named as not restorable.
//!
//! A folder's modification time changes when an entry is added, removed or renamed in it, so
//! folders are stamped to a depth and files only at a root's top level (`~/.bashrc`); caches
//! (`.cache`, cargo's registry) are left out, large trees (`node_modules`, `target`,
//! `site-packages`) stamped but not walked into, and each root's walk (breadth first, in name
//! order) stops after a bounded number of entries; an entry is named added or deleted only when
//! its folder was listed whole by both walks, so the cap never reads as a change. A walk stays
//! on its root's file system and never enters `/proc`, `/sys` or `/dev`; `/` itself is never a
//! root.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use tandem_protocol::api::{OutsideChange, PathChangeKind};

/// Levels of folders below a root stamped (`~/.local/lib/python3.11/site-packages` is 4).
const MAX_DEPTH: usize = 4;
/// Entries stamped at most per root and scan.
const MAX_ENTRIES_PER_ROOT: usize = 10_000;
/// Changes named at most per action.
const MAX_CHANGES: usize = 100;
/// Folders stamped but never walked into (large trees whose own stamp says enough).
const NO_DESCEND: &[&str] = &[
    "node_modules",
    ".git",
    "target",
    "__pycache__",
    "site-packages",
];
/// Folders never stamped, anywhere: caches that change on their own, and repositories' own
/// folders (git rewrites them on every command; the files of the work tree tell what changed).
const SKIP_NAMES: &[&str] = &[".cache", ".git"];
/// Folders never walked: they are not files of anyone's.
const NEVER: &[&str] = &["/proc", "/sys", "/dev", "/run"];
/// Folders below a root never stamped (caches that change on their own).
const SKIP_BELOW_ROOT: &[&str] = &[
    ".cargo/registry",
    ".cargo/git",
    ".rustup",
    ".npm/_cacache",
    ".npm/_logs",
    ".local/share/Trash",
    ".local/state",
];

/// The default roots on this machine: the home folder (and the agent's, when its commands run
/// as another user: `TANDEM_AGENT_HOME`), `/usr/local`, `/opt` and `/etc`.
pub fn default_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["HOME", "TANDEM_AGENT_HOME"]
        .iter()
        .filter_map(std::env::var_os)
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .collect();
    roots.extend(["/usr/local", "/opt", "/etc"].map(PathBuf::from));
    roots
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    mtime_ns: i128,
    ino: u64,
    size: u64,
    dir: bool,
}

/// What the watched roots looked like at one moment.
#[derive(Debug, Clone, Default)]
pub struct OutsideScan {
    entries: HashMap<PathBuf, Stamp>,
    /// Folders whose every entry was stamped (a capped walk lists some only in part).
    listed: HashSet<PathBuf>,
    /// The roots themselves: their own stamp is never named.
    roots: HashSet<PathBuf>,
}

/// The roots to watch and what never to walk (the workspace, the checkpoint home).
#[derive(Debug, Clone)]
pub struct OutsideWatch {
    roots: Vec<PathBuf>,
    skip: Vec<PathBuf>,
}

impl OutsideWatch {
    /// Watches `roots` (those that exist), never walking into `skip`.
    pub fn new(roots: Vec<PathBuf>, skip: Vec<PathBuf>) -> Self {
        let canon = |p: &PathBuf| p.canonicalize().unwrap_or_else(|_| p.clone());
        let skip: Vec<PathBuf> = skip.iter().map(canon).collect();
        let mut roots: Vec<PathBuf> = roots
            .iter()
            .map(canon)
            .filter(|r| {
                r.is_dir()
                    && r.parent().is_some()
                    && !NEVER.iter().any(|n| r.starts_with(n))
                    && !skip.iter().any(|s| r.starts_with(s))
            })
            .collect();
        roots.sort();
        roots.dedup();
        // A root inside another is walked as part of it.
        let all = roots.clone();
        roots.retain(|r| !all.iter().any(|o| o != r && r.starts_with(o)));
        Self { roots, skip }
    }

    /// Stamps the watched folders now.
    pub fn scan(&self) -> OutsideScan {
        let mut scan = OutsideScan::default();
        for root in &self.roots {
            let Ok(meta) = std::fs::symlink_metadata(root) else {
                continue;
            };
            let device = meta.dev();
            scan.roots.insert(root.clone());
            scan.entries.insert(root.clone(), stamp(&meta));
            let mut budget = MAX_ENTRIES_PER_ROOT;
            let mut queue = VecDeque::from([(root.clone(), 0usize)]);
            while let Some((dir, depth)) = queue.pop_front() {
                let Ok(read) = std::fs::read_dir(&dir) else {
                    continue;
                };
                let mut names: Vec<PathBuf> = read.flatten().map(|e| e.path()).collect();
                names.sort();
                let mut whole = true;
                for path in names {
                    if budget == 0 {
                        whole = false;
                        break;
                    }
                    let Ok(meta) = std::fs::symlink_metadata(&path) else {
                        continue;
                    };
                    if meta.is_dir() {
                        if self.skipped(root, &path) {
                            continue;
                        }
                        budget -= 1;
                        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                        let descend = depth + 1 < MAX_DEPTH
                            && !NO_DESCEND.contains(&name)
                            && meta.dev() == device;
                        scan.entries.insert(path.clone(), stamp(&meta));
                        if descend {
                            queue.push_back((path, depth + 1));
                        }
                    } else if depth == 0 {
                        budget -= 1;
                        scan.entries.insert(path, stamp(&meta));
                    }
                }
                if whole {
                    scan.listed.insert(dir);
                }
            }
        }
        scan
    }

    fn skipped(&self, root: &Path, path: &Path) -> bool {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        SKIP_NAMES.contains(&name)
            || NEVER.iter().any(|n| path == Path::new(n))
            || self.skip.iter().any(|s| path == s)
            || path
                .strip_prefix(root)
                .is_ok_and(|rel| SKIP_BELOW_ROOT.iter().any(|s| rel == Path::new(s)))
    }
}

fn stamp(meta: &std::fs::Metadata) -> Stamp {
    Stamp {
        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        ino: meta.ino(),
        size: if meta.is_dir() { 0 } else { meta.len() },
        dir: meta.is_dir(),
    }
}

/// What changed outside the workspace from `before` to `after`: the topmost added and deleted
/// entries (of folders both scans listed whole), and folders (or top-level files) modified
/// where no added or deleted entry in them says why; a root's own stamp is never named. None
/// of it is restorable.
pub fn changes(before: &OutsideScan, after: &OutsideScan) -> Vec<OutsideChange> {
    let listed_by_both = |p: &Path| {
        p.parent()
            .is_some_and(|d| before.listed.contains(d) && after.listed.contains(d))
    };
    let added: BTreeSet<&PathBuf> = after
        .entries
        .keys()
        .filter(|p| !before.entries.contains_key(*p) && listed_by_both(p))
        .collect();
    let deleted: BTreeSet<&PathBuf> = before
        .entries
        .keys()
        .filter(|p| !after.entries.contains_key(*p) && listed_by_both(p))
        .collect();
    let parents: BTreeSet<&Path> = added
        .iter()
        .chain(&deleted)
        .filter_map(|p| p.parent())
        .collect();
    let mut out = Vec::new();
    let mut push = |path: &Path, change| {
        out.push(OutsideChange {
            path: path.to_string_lossy().into_owned(),
            change,
            restorable: false,
        });
    };
    for p in &added {
        if !p.parent().is_some_and(|d| added.contains(&d.to_path_buf())) {
            push(p, PathChangeKind::Added);
        }
    }
    for p in &deleted {
        if !p
            .parent()
            .is_some_and(|d| deleted.contains(&d.to_path_buf()))
        {
            push(p, PathChangeKind::Deleted);
        }
    }
    let mut modified: Vec<&PathBuf> = after
        .entries
        .iter()
        .filter(|(p, s)| {
            before.entries.get(*p).is_some_and(|b| b != *s)
                && !parents.contains(p.as_path())
                && !after.roots.contains(*p)
        })
        .map(|(p, _)| p)
        .collect();
    modified.sort();
    for p in modified {
        push(p, PathChangeKind::Modified);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.truncate(MAX_CHANGES);
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn installs_and_edits_are_named_and_the_skipped_places_are_not() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        let ws = h.join("projects/app");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(h.join(".local/lib/python3/site-packages/old")).unwrap();
        std::fs::write(h.join(".bashrc"), "a").unwrap();
        std::fs::create_dir_all(h.join(".cache/pip")).unwrap();
        std::fs::create_dir_all(h.join("gone/deep")).unwrap();
        let watch = OutsideWatch::new(vec![h.clone()], vec![ws.clone()]);
        let before = watch.scan();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::create_dir_all(h.join(".local/lib/python3/site-packages/newpkg/sub")).unwrap();
        std::fs::write(h.join(".bashrc"), "ab").unwrap();
        std::fs::create_dir_all(h.join(".cache/pip/wheels")).unwrap();
        std::fs::create_dir_all(ws.join("build")).unwrap();
        std::fs::remove_dir_all(h.join("gone")).unwrap();
        let after = watch.scan();
        let got: Vec<(String, PathChangeKind)> = changes(&before, &after)
            .into_iter()
            .map(|c| (c.path.replace(&*h.to_string_lossy(), "~"), c.change))
            .collect();
        assert_eq!(
            got,
            [
                ("~/.bashrc".to_owned(), PathChangeKind::Modified),
                (
                    "~/.local/lib/python3/site-packages".to_owned(),
                    PathChangeKind::Modified
                ),
                ("~/gone".to_owned(), PathChangeKind::Deleted),
            ]
        );
        assert!(
            changes(&after, &watch.scan()).is_empty(),
            "nothing changed since"
        );
    }

    #[test]
    fn a_capped_walk_never_reads_as_a_change_and_slash_is_no_root() {
        let home = tempfile::tempdir().unwrap();
        let h = home.path().canonicalize().unwrap();
        let many = h.join("many");
        std::fs::create_dir_all(&many).unwrap();
        for i in 0..(MAX_ENTRIES_PER_ROOT + 50) {
            std::fs::create_dir(many.join(format!("d{i:05}"))).unwrap();
        }
        let watch = OutsideWatch::new(vec![h.clone()], vec![]);
        let before = watch.scan();
        // A new entry that sorts first pushes the last one out of the capped walk.
        std::fs::create_dir(many.join("a-first")).unwrap();
        std::fs::create_dir(h.join(".git")).unwrap();
        let got = changes(&before, &watch.scan());
        assert!(
            got.iter().all(|c| c.change == PathChangeKind::Modified),
            "no add or delete in a folder listed in part: {got:?}"
        );
        assert!(
            !got.iter()
                .any(|c| c.path.ends_with(".git") || Path::new(&c.path) == h),
            "{got:?}"
        );
        assert!(
            OutsideWatch::new(vec!["/".into(), "/proc".into()], vec![])
                .roots
                .is_empty()
        );
    }
}
