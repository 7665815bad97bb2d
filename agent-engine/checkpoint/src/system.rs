//! The sandbox's system store: the container's own folders outside the workspace (`/usr`,
//! `/etc`, `/opt`, dpkg's and apt's state, the homes) checkpointed around every action like the
//! workspace, so an `apt-get install` or a `pip install --user` is named on the action that did
//! it and a rewind takes it back.
//!
//! It is a [`Store`] whose work tree is `/`, limited to its roots, in `$TANDEM_HOME/checkpoints/system`.
//! Its first checkpoint (the baseline, taken when the image is built: `tandem system-checkpoint`)
//! names the image's files under `/usr` by their hashes without copying them (`git update-index
//! --info-only`), so the store stays small; what an action adds or changes afterwards is kept in
//! full. A rewind therefore deletes what was added since and writes back what changed since, except
//! a file of the image's `/usr` that an action changed (its original was never copied): that one is
//! named as not restorable. A rewind writes no more than [`RESTORE_CAP`] bytes of content back;
//! beyond it nothing outside the workspace is written and the reason is given.
//!
//! Index entries compare by size and mtime seconds only (`core.checkStat=minimal`): a container's
//! files keep those from the image, while inode numbers and ctimes differ from the build's.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use tandem_protocol::api::{OutsideChange, PathChange, PathChangeKind, RestoredPath, SkippedPath};

use crate::error::{CheckpointError, Result};
use crate::git::Git;
use crate::store::{Changes, GITLINK, Head, Store};

/// The environment variable naming the system store's roots (`:`-separated absolute folders);
/// set in the sandbox image.
pub const ENV: &str = "TANDEM_SYSTEM_CHECKPOINTS";

/// Bytes of content a rewind writes back outside the workspace at most.
pub const RESTORE_CAP: u64 = 512 << 20;

/// Outside changes named on one action at most (a rewind uses the whole checkpoint).
const MAX_NAMED: usize = 200;

/// Roots whose baseline names files by hash without keeping them (the image's bulk): those
/// with this last name (`/usr`).
const HASH_ONLY: &[&str] = &["usr"];

/// Settings of the system store on top of every store's.
const SYSTEM_CONFIG: &[&str] = &["core.checkStat=minimal", "core.trustCtime=false"];

/// Never checkpointed: caches, locks, histories, the browser's profile and the X cookie.
const EXCLUDE: &str = "\
.cache/
.config/chromium/
.pki/
.Xauthority
.bash_history
.python_history
.lesshst
.wget-hsts
.viminfo
/var/lib/dpkg/lock
/var/lib/dpkg/lock-frontend
/var/lib/dpkg/triggers/Lock
/var/lib/apt/lists/
/var/lib/apt/periodic/
";

/// The roots `TANDEM_SYSTEM_CHECKPOINTS` names (empty when unset).
pub fn roots_from_env() -> Vec<PathBuf> {
    std::env::var_os(ENV)
        .map(|v| std::env::split_paths(&v).collect())
        .unwrap_or_default()
}

fn open_systems() -> &'static Mutex<HashMap<PathBuf, Arc<Store>>> {
    static STORES: OnceLock<Mutex<HashMap<PathBuf, Arc<Store>>>> = OnceLock::new();
    STORES.get_or_init(Default::default)
}

/// The folders `roots` names, as pathspecs below `/`: absolute, not `/`, existing folders.
fn scope_of(roots: &[PathBuf]) -> Result<Vec<String>> {
    let mut scope = Vec::new();
    for root in roots {
        let bad = |why: &str| CheckpointError::Config(format!("{ENV}: {}: {why}", root.display()));
        if !root.is_absolute() {
            return Err(bad("not an absolute path"));
        }
        let rel = root
            .strip_prefix("/")
            .map_err(|_| bad("not an absolute path"))?
            .to_string_lossy()
            .trim_end_matches('/')
            .to_owned();
        if rel.is_empty() || rel.split('/').any(|p| p == "..") {
            return Err(bad("`/` and paths with `..` cannot be roots"));
        }
        if root.is_dir() {
            scope.push(rel);
        }
    }
    scope.sort();
    scope.dedup();
    Ok(scope)
}

impl Store {
    /// The system store over `roots` under `home`, opened once per process: created with its
    /// baseline on first use; on a later open a rewind a crash interrupted is finished and a
    /// checkpoint is taken, so what changed while no server ran (the sandbox's start) is never
    /// ascribed to an action.
    pub fn open_system(home: &Path, roots: &[PathBuf]) -> Result<Arc<Self>> {
        let dir = home.join("checkpoints").join("system");
        let mut stores = open_systems().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(store) = stores.get(&dir) {
            return Ok(Arc::clone(store));
        }
        let store = Arc::new(Self {
            git: Git {
                store: dir.clone(),
                workspace: PathBuf::from("/"),
                extra: SYSTEM_CONFIG,
            },
            head: Mutex::new(Head::default()),
            outside: Mutex::new(None),
            scope: scope_of(roots)?,
            system: Mutex::new(None),
        });
        {
            let _lock = store.lock()?;
            store.git.clear_stale_locks();
            if store.git.exists() {
                store.prepare()?;
                store.recover_locked()?;
                store.take_locked("when the server started", None)?;
            } else {
                store.baseline()?;
            }
        }
        stores.insert(dir, Arc::clone(&store));
        Ok(store)
    }

    /// Creates the store and its first checkpoint, naming the bulk roots' files by hash only.
    fn baseline(&self) -> Result<()> {
        self.git.drop_index();
        self.prepare()?;
        let info = self.git.git_dir().join("info");
        std::fs::create_dir_all(&info).map_err(|e| CheckpointError::io("create", &info, e))?;
        std::fs::write(info.join("exclude"), EXCLUDE)
            .map_err(|e| CheckpointError::io("write", info.join("exclude"), e))?;
        let hash_only = |r: &&String| HASH_ONLY.contains(&r.rsplit('/').next().unwrap_or_default());
        for root in self.scope.iter().filter(hash_only) {
            let files = self.git.run(&[
                "ls-files",
                "-z",
                "--others",
                "--exclude-standard",
                "--",
                root,
            ])?;
            let named = self.git.run_with_input(
                &["update-index", "--add", "--info-only", "-z", "--stdin"],
                Some(&files),
            );
            if let Err(e) = named {
                // The add below then keeps those files' content: a bigger store, still right.
                tracing::warn!("the system baseline could not name /{root} by hash: {e}");
            }
        }
        self.take_locked("the system as the image was built", None)?;
        Ok(())
    }

    /// Checkpoints `system` (the sandbox's system store) with this store from now on: the
    /// checkpoint after each action names what it changed there as restorable, and a rewind
    /// returns it too. The stamped folders of [`Store::watch_outside`] are then not walked.
    pub fn watch_system(&self, system: Arc<Store>) {
        *self.system.lock().unwrap_or_else(|p| p.into_inner()) = Some(system);
    }

    /// The system store checkpointed with this one, if any.
    pub fn system(&self) -> Option<Arc<Store>> {
        self.system
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// What one action changed in the system store, as outside changes (absolute paths).
pub(crate) fn outside_changes(changes: &Changes) -> Vec<OutsideChange> {
    let kinds = [
        (&changes.added, PathChangeKind::Added),
        (&changes.modified, PathChangeKind::Modified),
        (&changes.deleted, PathChangeKind::Deleted),
    ];
    kinds
        .into_iter()
        .flat_map(|(paths, change)| {
            paths.iter().map(move |p| OutsideChange {
                path: format!("/{p}"),
                change,
                restorable: true,
            })
        })
        .take(MAX_NAMED)
        .collect()
}

/// A rewind of the system store to checkpoint `target`: the tree, the paths to write or delete
/// (relative to `/`) and what is left alone and why (absolute paths).
pub(crate) struct SystemPlan {
    pub tree: String,
    pub restored: Vec<RestoredPath>,
    pub skipped: Vec<SkippedPath>,
}

/// Plans the system store's part of a rewind to its checkpoint `target`.
pub(crate) fn plan(system: &Store, target: &str) -> Result<SystemPlan> {
    let tree = system.tree_of(target)?;
    let now = system.snapshot()?;
    let mut restored = Vec::new();
    let mut skipped = Vec::new();
    let mut writes = Vec::new();
    for change in system.raw_diff(&tree, &now)? {
        if change.old_mode == GITLINK || change.new_mode == GITLINK {
            skipped.push(SkippedPath {
                path: format!("/{}", change.path),
                reason: "a repository outside the workspace: its files are its own git history's, not restored".into(),
            });
        } else if change.status == 'A' {
            restored.push(RestoredPath {
                path: change.path,
                change: PathChange::Delete,
            });
        } else {
            writes.push(change.path);
        }
    }
    let entries = system.entries(&tree, &writes)?;
    let sizes = system
        .git
        .sizes(&entries.iter().map(|e| e.id.clone()).collect::<Vec<_>>())?;
    let mut total = 0u64;
    for (entry, size) in entries.into_iter().zip(sizes) {
        match size {
            Some(size) => {
                total += size;
                restored.push(RestoredPath {
                    path: entry.path,
                    change: PathChange::Write,
                });
            }
            None => skipped.push(SkippedPath {
                path: format!("/{}", entry.path),
                reason: "outside the workspace, changed since: a file of the sandbox image whose original is not kept, so not restorable".into(),
            }),
        }
    }
    if total > RESTORE_CAP {
        let why = format!(
            "outside the workspace: the rewind would write back {} MB there, more than its cap of {} MB; nothing outside the workspace is restored",
            total >> 20,
            RESTORE_CAP >> 20
        );
        skipped.extend(restored.drain(..).map(|r| SkippedPath {
            path: format!("/{}", r.path),
            reason: why.clone(),
        }));
    }
    Ok(SystemPlan {
        tree,
        restored,
        skipped,
    })
}
