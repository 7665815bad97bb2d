//! One workspace's store: open it, take checkpoints, compare them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, Weak};

use crate::error::{CheckpointError, Result};
use crate::git::{Git, nul_fields};

/// The ref the store's chain of checkpoints hangs from.
pub(crate) const HEAD_REF: &str = "refs/tandem/checkpoints";

/// What changed between two trees (workspace-relative, `/`-separated paths, sorted).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Changes {
    /// Paths that exist only in the newer tree.
    pub added: Vec<String>,
    /// Paths whose content, mode or type differ.
    pub modified: Vec<String>,
    /// Paths that exist only in the older tree.
    pub deleted: Vec<String>,
}

impl Changes {
    /// No path changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.deleted.is_empty()
    }

    /// Every changed path.
    pub fn paths(&self) -> impl Iterator<Item = &String> {
        self.added
            .iter()
            .chain(self.modified.iter())
            .chain(self.deleted.iter())
    }
}

/// A checkpoint just taken.
#[derive(Debug, Clone)]
pub struct Taken {
    /// Its commit in the store (the checkpoint's id).
    pub commit: String,
    /// Its tree.
    pub tree: String,
    /// What changed since the store's previous checkpoint.
    pub changes: Changes,
    /// Ignored trees present, by name (`node_modules/`).
    pub ignored: Vec<String>,
    /// What changed outside the workspace (see [`Store::take_after`]).
    pub outside: Vec<tandem_protocol::api::OutsideChange>,
    /// The watched folders outside the workspace when it was taken (when watched).
    pub(crate) scan: Option<Arc<crate::outside::OutsideScan>>,
    /// The system store's checkpoint at the same moment (in a sandbox; see
    /// [`Store::watch_system`]).
    pub system: Option<String>,
}

/// One path of a raw diff.
#[derive(Debug, Clone)]
pub(crate) struct RawChange {
    pub path: String,
    pub old_mode: String,
    pub new_mode: String,
    /// A, M, D or T.
    pub status: char,
}

/// One path of a tree.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub path: String,
    pub mode: String,
    pub id: String,
}

/// A nested repository's entry in a tree.
pub(crate) const GITLINK: &str = "160000";

impl Taken {
    /// Its record, at `event_id`, with its changes ascribed to `author`.
    pub fn record(
        &self,
        event_id: &str,
        author: tandem_protocol::api::CheckpointAuthor,
        tool_name: Option<String>,
    ) -> tandem_protocol::api::Checkpoint {
        tandem_protocol::api::Checkpoint {
            id: self.commit.clone(),
            event_id: event_id.to_owned(),
            tree: self.tree.clone(),
            author,
            tool_name,
            added: self.changes.added.clone(),
            modified: self.changes.modified.clone(),
            deleted: self.changes.deleted.clone(),
            ignored: self.ignored.clone(),
            timestamp: tandem_protocol::now_timestamp(),
            outside: self.outside.clone(),
            system: self.system.clone(),
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Head {
    pub commit: Option<String>,
    pub tree: Option<String>,
}

/// A workspace's checkpoint store. One per workspace per process ([`Store::open`] hands out
/// the same one); another process on the same workspace is kept out by a file lock for the
/// length of each operation.
#[derive(Debug)]
pub struct Store {
    pub(crate) git: Git,
    pub(crate) head: Mutex<Head>,
    /// The folders outside the workspace watched around actions (none unless asked).
    pub(crate) outside: Mutex<Option<crate::outside::OutsideWatch>>,
    /// What a checkpoint covers: pathspecs below the work tree (the system store's roots);
    /// empty: all of it.
    pub(crate) scope: Vec<String>,
    /// The system store checkpointed with this one (in a sandbox), restorable outside effects.
    pub(crate) system: Mutex<Option<Arc<Store>>>,
}

/// The directory of `workspace`'s store under `home` (`$TANDEM_HOME`).
pub fn store_dir(home: &Path, workspace: &Path) -> PathBuf {
    let name = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into());
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    home.join("checkpoints").join(format!(
        "{name}-{:016x}",
        fnv1a(workspace.as_os_str().as_encoded_bytes())
    ))
}

/// FNV-1a 64: a hash that stays the same across builds (the store's name must).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

pub(crate) fn open_stores() -> &'static Mutex<HashMap<PathBuf, Weak<Store>>> {
    static STORES: OnceLock<Mutex<HashMap<PathBuf, Weak<Store>>>> = OnceLock::new();
    STORES.get_or_init(Default::default)
}

impl Store {
    /// The store of `workspace` under `home`, created on first use. A restore a crash
    /// interrupted is finished first.
    pub fn open(home: &Path, workspace: &Path) -> Result<Arc<Self>> {
        let workspace = workspace
            .canonicalize()
            .map_err(|e| CheckpointError::io("open", workspace, e))?;
        if !workspace.is_dir() {
            return Err(CheckpointError::NotADirectory(workspace));
        }
        let dir = store_dir(home, &workspace);
        let mut stores = open_stores().lock().unwrap_or_else(|p| p.into_inner());
        if let Some(store) = stores.get(&dir).and_then(Weak::upgrade) {
            return Ok(store);
        }
        let store = Arc::new(Self {
            git: Git {
                store: dir.clone(),
                workspace,
                extra: &[],
            },
            head: Mutex::new(Head::default()),
            outside: Mutex::new(None),
            scope: Vec::new(),
            system: Mutex::new(None),
        });
        {
            let _lock = store.lock()?;
            store.git.clear_stale_locks();
            store.prepare()?;
            store.recover_locked()?;
        }
        stores.retain(|_, s| s.strong_count() > 0);
        stores.insert(dir, Arc::downgrade(&store));
        Ok(store)
    }

    /// The workspace.
    pub fn workspace(&self) -> &Path {
        &self.git.workspace
    }

    /// The store's directory.
    pub fn dir(&self) -> &Path {
        &self.git.store
    }

    /// Creates the repository when it is missing (first use, or deleted under us) and reads
    /// the chain's head.
    pub(crate) fn prepare(&self) -> Result<()> {
        if !self.git.exists() {
            if self.git.store.exists() {
                tracing::warn!(store = %self.git.store.display(), "the checkpoint store's repository is missing: starting a new one (older checkpoints are lost)");
            }
            // The index names objects of the lost repository: a file whose stat data still
            // matches would not be hashed again and the tree could not be written.
            self.git.drop_index();
            self.git.init()?;
            std::fs::write(
                self.git.store.join("workspace"),
                self.git.workspace.as_os_str().as_encoded_bytes(),
            )
            .map_err(|e| CheckpointError::io("write", &self.git.store, e))?;
            let mut head = self.head.lock().unwrap_or_else(|p| p.into_inner());
            *head = Head::default();
            return Ok(());
        }
        let mut head = self.head.lock().unwrap_or_else(|p| p.into_inner());
        if head.commit.is_none() {
            let out = self
                .git
                .run(&["rev-parse", "--verify", "--quiet", HEAD_REF])
                .unwrap_or_default();
            let commit = String::from_utf8_lossy(&out).trim().to_owned();
            if !commit.is_empty() {
                head.tree = Some(
                    self.git
                        .line(&["rev-parse", &format!("{commit}^{{tree}}")])?,
                );
                head.commit = Some(commit);
            }
        }
        Ok(())
    }

    /// Holds the store's file lock (other processes) for one operation.
    pub(crate) fn lock(&self) -> Result<nix::fcntl::Flock<std::fs::File>> {
        std::fs::create_dir_all(&self.git.store)
            .map_err(|e| CheckpointError::io("create", &self.git.store, e))?;
        let path = self.git.store.join("lock");
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(|e| CheckpointError::io("open", &path, e))?;
        nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusive)
            .map_err(|(_, e)| CheckpointError::io("lock", &path, e.into()))
    }

    /// Takes a checkpoint of the workspace now. `message` describes it in the store's log. A
    /// new commit is made only when the tree changed since the store's last checkpoint;
    /// otherwise that one is returned with no changes.
    pub fn take(&self, message: &str) -> Result<Taken> {
        let scan = self.scan_outside();
        let _lock = self.lock()?;
        let mut taken = self.take_locked(message, scan)?;
        drop(_lock);
        taken.system = self.system().and_then(|s| s.head_commit());
        Ok(taken)
    }

    /// The newest checkpoint of the store's chain.
    pub(crate) fn head_commit(&self) -> Option<String> {
        self.head
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .commit
            .clone()
    }

    /// The watched folders outside the workspace stamped now (none unwatched). It runs before
    /// the store's lock is taken: other conversations on the workspace do not wait for it.
    fn scan_outside(&self) -> Option<Arc<crate::outside::OutsideScan>> {
        if self.system().is_some() {
            return None;
        }
        let watch = self
            .outside
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        watch.map(|w| Arc::new(w.scan()))
    }

    /// Watches `roots` outside the workspace (e.g. [`crate::outside::default_roots`]) around
    /// actions: [`Store::take_after`] names what changed there. The workspace and the
    /// checkpoint home are never walked.
    pub fn watch_outside(&self, roots: Vec<PathBuf>) {
        let mut skip = vec![self.git.workspace.clone()];
        if let Some(home) = self.git.store.parent().and_then(Path::parent) {
            skip.push(home.to_path_buf());
        }
        let watch = crate::outside::OutsideWatch::new(roots, skip);
        *self.outside.lock().unwrap_or_else(|p| p.into_inner()) = Some(watch);
    }

    /// Takes the checkpoint after an action whose checkpoint before was `before`: its changes
    /// are counted from that tree, and what changed outside the workspace since is named.
    pub fn take_after(&self, before: &Taken, message: &str) -> Result<Taken> {
        let mut taken = self.take_since(&before.tree, message)?;
        if let (Some(a), Some(b)) = (&before.scan, &taken.scan) {
            taken.outside = crate::outside::changes(a, b);
        }
        if let Some(system) = self.system() {
            // Never the agent's failure: without it the action's outside effects go unnamed.
            match system.take(message) {
                Ok(after) => {
                    taken.outside = crate::system::outside_changes(&after.changes);
                    taken.system = Some(after.commit);
                }
                Err(e) => tracing::warn!("the system checkpoint after an action failed: {e}"),
            }
        }
        Ok(taken)
    }

    /// Takes a checkpoint whose changes are counted from `base` (the tree of an earlier
    /// checkpoint) rather than from the store's last one: what one action changed, even when
    /// other conversations on the workspace checkpointed meanwhile.
    pub fn take_since(&self, base: &str, message: &str) -> Result<Taken> {
        let scan = self.scan_outside();
        let _lock = self.lock()?;
        let mut taken = self.take_locked(message, scan)?;
        taken.changes = if taken.tree == base {
            Changes::default()
        } else {
            self.diff(base, &taken.tree)?
        };
        Ok(taken)
    }

    /// Takes a checkpoint with the store's lock held; `scan` is what the watched folders
    /// outside looked like just before (none for a rewind's own checkpoint).
    pub(crate) fn take_locked(
        &self,
        message: &str,
        scan: Option<Arc<crate::outside::OutsideScan>>,
    ) -> Result<Taken> {
        self.prepare()?;
        let tree = self.write_tree()?;
        let ignored = self.ignored()?;
        let mut head = self.head.lock().unwrap_or_else(|p| p.into_inner());
        if let (Some(commit), Some(old)) = (&head.commit, &head.tree)
            && *old == tree
        {
            return Ok(Taken {
                commit: commit.clone(),
                tree,
                changes: Changes::default(),
                ignored,
                outside: Vec::new(),
                scan,
                system: None,
            });
        }
        let changes = match &head.tree {
            Some(old) => self.diff(old, &tree)?,
            None => self.diff(EMPTY_TREE, &tree)?,
        };
        let mut args = vec!["commit-tree", tree.as_str(), "-m", message];
        if let Some(parent) = &head.commit {
            args.extend(["-p", parent.as_str()]);
        }
        let commit = self.git.line(&args)?;
        let mut update = vec!["update-ref", HEAD_REF, commit.as_str()];
        if let Some(parent) = &head.commit {
            update.push(parent.as_str());
        }
        self.git.run(&update)?;
        head.commit = Some(commit.clone());
        head.tree = Some(tree.clone());
        Ok(Taken {
            commit,
            tree,
            changes,
            ignored,
            outside: Vec::new(),
            scan,
            system: None,
        })
    }

    /// The workspace's tree now (the store's index brought up to date).
    pub fn snapshot(&self) -> Result<String> {
        let _lock = self.lock()?;
        self.prepare()?;
        self.write_tree()
    }

    fn write_tree(&self) -> Result<String> {
        match self.add_and_write_tree() {
            // The index names objects the repository no longer has (objects removed or
            // damaged under us): rebuild it from the workspace once.
            Err(CheckpointError::Git { stderr, .. }) if stderr.contains("invalid object") => {
                tracing::warn!(store = %self.git.store.display(), "the checkpoint index names missing objects: rebuilding it");
                self.git.drop_index();
                self.add_and_write_tree()
            }
            other => other,
        }
    }

    fn add_and_write_tree(&self) -> Result<String> {
        // --ignore-errors: an unreadable file is left out, not the whole checkpoint.
        let mut args = vec!["add", "--all", "--ignore-errors", "--"];
        if self.scope.is_empty() {
            args.push(".");
        } else {
            args.extend(self.scope.iter().map(String::as_str));
        }
        self.git.run(&args).or_else(|e| match &e {
            // What add could not read it reports and skips; the tree is still written.
            CheckpointError::Git { stderr, .. } if stderr.contains("unable to index") => {
                tracing::warn!("checkpoint: {e}");
                Ok(Vec::new())
            }
            _ => Err(e),
        })?;
        if self.scope.is_empty() {
            self.git.line(&["write-tree"])
        } else {
            // The system store's baseline names the image's files without keeping them.
            self.git.line(&["write-tree", "--missing-ok"])
        }
    }

    /// Ignored trees and files at the workspace's top levels, by name.
    fn ignored(&self) -> Result<Vec<String>> {
        if !self.scope.is_empty() {
            return Ok(Vec::new());
        }
        let out = self.git.run(&[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
            "--no-empty-directory",
        ])?;
        Ok(nul_fields(&out).take(200).collect())
    }

    /// What changed from tree (or commit) `from` to `to`.
    pub fn diff(&self, from: &str, to: &str) -> Result<Changes> {
        let mut changes = Changes::default();
        for c in self.raw_diff(from, to)? {
            match c.status {
                'A' => changes.added.push(c.path),
                'D' => changes.deleted.push(c.path),
                _ => changes.modified.push(c.path),
            }
        }
        Ok(changes)
    }

    /// Every path that differs from `from` to `to`, with its modes.
    pub(crate) fn raw_diff(&self, from: &str, to: &str) -> Result<Vec<RawChange>> {
        let out = self
            .git
            .run(&["diff-tree", "-r", "-z", "--no-renames", "--raw", from, to])?;
        let mut changes = Vec::new();
        let mut fields = nul_fields(&out);
        while let (Some(meta), Some(path)) = (fields.next(), fields.next()) {
            // ":OLDMODE NEWMODE OLDSHA NEWSHA STATUS"
            let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
            let [old_mode, new_mode, _, _, status] = parts.as_slice() else {
                continue;
            };
            changes.push(RawChange {
                path,
                old_mode: (*old_mode).to_owned(),
                new_mode: (*new_mode).to_owned(),
                status: status.chars().next().unwrap_or('M'),
            });
        }
        Ok(changes)
    }

    /// Mode and blob of each of `paths` in `tree` (paths it does not have are left out).
    pub(crate) fn entries(&self, tree: &str, paths: &[String]) -> Result<Vec<Entry>> {
        let mut entries = Vec::new();
        for chunk in paths.chunks(500) {
            let mut args = vec!["ls-tree", "-z", "--full-tree", tree, "--"];
            args.extend(chunk.iter().map(String::as_str));
            let out = self.git.run(&args)?;
            for field in nul_fields(&out) {
                // "MODE TYPE ID\tPATH"
                let Some((meta, path)) = field.split_once('\t') else {
                    continue;
                };
                let parts: Vec<&str> = meta.split(' ').collect();
                if let [mode, _, id] = parts.as_slice() {
                    entries.push(Entry {
                        path: path.to_owned(),
                        mode: (*mode).to_owned(),
                        id: (*id).to_owned(),
                    });
                }
            }
        }
        Ok(entries)
    }

    /// The unified diff from tree `from` to tree `to`, limited to `paths` (all when empty);
    /// binary files are named, not shown.
    pub fn unified_diff(&self, from: &str, to: &str, paths: &[String]) -> Result<String> {
        let mut args: Vec<&str> = vec![
            "diff-tree",
            "-r",
            "-p",
            "--no-renames",
            "--no-color",
            from,
            to,
            "--",
        ];
        args.extend(paths.iter().map(String::as_str));
        if paths.len() > 2000 {
            args.truncate(8);
        }
        let out = self.git.run(&args)?;
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    /// The tree of checkpoint (commit) `id`.
    pub fn tree_of(&self, id: &str) -> Result<String> {
        self.git
            .line(&["rev-parse", "--verify", &format!("{id}^{{tree}}")])
            .map_err(|e| CheckpointError::Lost {
                id: id.to_owned(),
                detail: e.to_string(),
            })
    }

    /// Writes a git bundle of `commits` (checkpoints, and what they reach) to `out`, for a
    /// trace; `false` (nothing written) when none of them is in the store.
    pub fn bundle(&self, commits: &[String], out: &Path) -> Result<bool> {
        self.bundle_since(commits, None, out)
    }

    /// [`bundle`](Self::bundle) without what `base` holds (a commit the reader has: the
    /// bundle then needs it, and carries only what changed since).
    pub fn bundle_since(&self, commits: &[String], base: Option<&str>, out: &Path) -> Result<bool> {
        let _lock = self.lock()?;
        let mut query = String::new();
        for c in commits {
            query.push_str(c);
            query.push('\n');
        }
        let found = self
            .git
            .run_with_input(&["cat-file", "--batch-check"], Some(query.as_bytes()))?;
        let mut present: Vec<String> = String::from_utf8_lossy(&found)
            .lines()
            .filter_map(|l| {
                let mut parts = l.split(' ');
                let (id, kind) = (parts.next()?, parts.next()?);
                (kind == "commit").then(|| id.to_owned())
            })
            .collect();
        present.sort();
        present.dedup();
        if present.is_empty() {
            return Ok(false);
        }
        const PREFIX: &str = "refs/tandem-trace/";
        let refs: Vec<String> = (0..present.len()).map(|n| format!("{PREFIX}{n}")).collect();
        let mut create = String::new();
        for (name, id) in refs.iter().zip(&present) {
            create.push_str(&format!("update {name} {id}\n"));
        }
        self.git
            .run_with_input(&["update-ref", "--stdin"], Some(create.as_bytes()))?;
        let mut listed = refs.join("\n") + "\n";
        let mut carrier = None;
        if let Some(base) = base {
            // git leaves out what `base` holds only for the commits it is a parent of: one
            // commit (of the empty tree) with `base` and every bundled commit as parents
            // makes it the edge of them all.
            let mut args = vec!["commit-tree".to_owned(), EMPTY_TREE.to_owned()];
            args.extend(["-p".to_owned(), base.to_owned()]);
            for id in &present {
                args.extend(["-p".to_owned(), id.clone()]);
            }
            args.extend([
                "-m".to_owned(),
                "tandem: what changed since the base".to_owned(),
            ]);
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let made = self.git.line(&args)?;
            let name = format!("{PREFIX}since");
            self.git.run(&["update-ref", &name, &made])?;
            listed.push_str(&format!("{name}\n^{base}\n"));
            carrier = Some(name);
        }
        let out_arg = out.to_string_lossy();
        // Fast over small: big files (media, data, builds) are not searched for deltas and
        // everything is deflated at the fastest level; text keeps its deltas between
        // checkpoints. The default (level 6, deltas for all) takes 7 s for 100 MB of data
        // where this takes 2.6 s.
        let bundled = self.git.run_with_input(
            &[
                "-c",
                "pack.compression=1",
                "-c",
                "core.bigFileThreshold=512k",
                "bundle",
                "create",
                "--quiet",
                &out_arg,
                "--stdin",
            ],
            Some(listed.as_bytes()),
        );
        // The refs go whatever the bundle did: they would keep objects from gc.
        let mut delete = String::new();
        for name in refs.iter().chain(&carrier) {
            delete.push_str(&format!("delete {name}\n"));
        }
        let deleted = self
            .git
            .run_with_input(&["update-ref", "--stdin"], Some(delete.as_bytes()));
        bundled?;
        deleted?;
        Ok(true)
    }

    /// Brings the commits of a bundle written by [`bundle`](Self::bundle) (a trace's
    /// checkpoints, a capsule's workspace) into the store, so their trees and diffs can be
    /// read.
    pub fn import_bundle(&self, bundle: &Path) -> Result<()> {
        let _lock = self.lock()?;
        let path = bundle.to_string_lossy();
        self.git.run(&[
            "fetch",
            "--quiet",
            "--no-write-fetch-head",
            &path,
            "refs/tandem-trace/*:refs/tandem-trace/*",
        ])?;
        Ok(())
    }

    /// Writes the files of `commit` (a checkpoint, or a commit a bundle brought in) into the
    /// workspace — a new folder for a conversation that moved here — and returns the
    /// workspace's tree afterwards: the commit's tree when the folder held nothing else.
    pub fn materialize(&self, commit: &str) -> Result<String> {
        let _lock = self.lock()?;
        self.prepare()?;
        self.git.run(&["read-tree", commit])?;
        self.git.run(&["checkout-index", "--all", "--force"])?;
        self.write_tree()
    }

    /// Whether `commit` is a commit of this store.
    pub fn has_commit(&self, commit: &str) -> bool {
        self.git
            .run(&["cat-file", "-e", &format!("{commit}^{{commit}}")])
            .is_ok()
    }

    /// Brings the workspace from `base` (a commit whose files it holds) to `commit`, writing
    /// only what changed (files added, changed and removed); `None` when the workspace no
    /// longer holds `base`'s files (nothing is written then). Answers the tree afterwards.
    pub fn advance(&self, base: &str, commit: &str) -> Result<Option<String>> {
        let _lock = self.lock()?;
        self.prepare()?;
        // The index as the files are now, so the merge below knows them.
        let now = self.write_tree()?;
        let base_tree = self.tree_of(base)?;
        if now != base_tree {
            return Ok(None);
        }
        self.git.run(&["read-tree", "-m", "-u", base, commit])?;
        Ok(Some(self.write_tree()?))
    }

    /// Packs the store's objects and drops what no checkpoint reaches.
    pub fn gc(&self) -> Result<()> {
        let _lock = self.lock()?;
        self.git.run(&["gc", "--quiet", "--prune=now"])?;
        Ok(())
    }
}

/// git's empty tree.
pub const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
