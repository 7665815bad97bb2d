//! Rewinds with real git and real bash: every checkpoint of a scripted session is restored
//! exactly, every rewind is undone exactly, and the user's repository is never touched.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tandem_checkpoint::{RecordLog, Store, plan_rewind, resolve_event};

#[path = "support/shell.rs"]
mod shell;
use shell::bash;
use tandem_protocol::api::{CheckpointAuthor, PathChange, RewindFiles};

struct Session {
    _home: tempfile::TempDir,
    _conversation: tempfile::TempDir,
    ws: PathBuf,
    store: Arc<Store>,
    log: RecordLog,
    events: Vec<String>,
}

impl Session {
    fn new(ws: &tempfile::TempDir) -> Self {
        let home = tempfile::tempdir().unwrap();
        let conversation = tempfile::tempdir().unwrap();
        let ws = ws.path().canonicalize().unwrap();
        let store = Store::open(home.path(), &ws).unwrap();
        let log = RecordLog::new(conversation.path());
        Self {
            _home: home,
            _conversation: conversation,
            ws,
            store,
            log,
            events: Vec::new(),
        }
    }

    fn event(&mut self) -> String {
        let id = format!("event-{}", self.events.len());
        self.events.push(id.clone());
        id
    }

    /// An agent action: the checkpoint before it (a person's changes since, if any), the
    /// script, the checkpoint after it.
    fn act(&mut self, script: &str) {
        let action = self.event();
        let before = self.store.take("before").unwrap();
        self.log
            .append(&before, &action, CheckpointAuthor::Person, None)
            .unwrap();
        bash(&self.ws, script);
        let observation = self.event();
        let after = self.store.take("after").unwrap();
        self.log
            .append(
                &after,
                &observation,
                CheckpointAuthor::Agent,
                Some("terminal".into()),
            )
            .unwrap();
    }

    /// Rewinds to record `index`; returns the undo checkpoint's record index.
    fn rewind(&mut self, index: usize, files: RewindFiles) -> (usize, Vec<String>) {
        let records = self.log.read().unwrap();
        let plan = plan_rewind(&self.store, &records, index, files).unwrap();
        let leaf = self.events.last().cloned().unwrap();
        let undo = self.store.take("before rewind").unwrap();
        self.log
            .append(&undo, &leaf, CheckpointAuthor::Person, None)
            .unwrap();
        let undo_index = self.log.read().unwrap().len() - 1;
        let restored = self
            .store
            .restore(&plan.target.tree, &plan.restored, &self.log, &leaf)
            .unwrap();
        assert!(restored.failed.is_empty(), "{:?}", restored.failed);
        let skipped = plan.skipped.iter().map(|s| s.path.clone()).collect();
        (undo_index, skipped)
    }

    fn tree_now(&self) -> String {
        self.store.snapshot().unwrap()
    }
}

/// Files (not ignored) with their mode and content, and symlinks with their target.
fn listing(root: &Path) -> BTreeMap<String, (u32, Vec<u8>)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_owned()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            let rel = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            if rel == ".git" || rel.starts_with("node_modules") || rel.starts_with("nested") {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).unwrap();
                out.insert(
                    rel,
                    (0o120000, target.to_string_lossy().as_bytes().to_vec()),
                );
            } else if meta.is_dir() {
                stack.push(path);
            } else {
                out.insert(rel, (meta.mode() & 0o111, std::fs::read(&path).unwrap()));
            }
        }
    }
    out
}

fn user_repo_bytes(ws: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for name in [
        "HEAD",
        "index",
        "refs/heads/main",
        "refs/heads/feature",
        "refs/stash",
        "packed-refs",
    ] {
        if let Ok(bytes) = std::fs::read(ws.join(".git").join(name)) {
            out.insert(name.to_owned(), bytes);
        }
    }
    out
}

const SCRIPTS: &[&str] = &[
    "printf 'one\\ntwo\\n' > a.txt",
    "sed -i 's/two/TWO/' a.txt",
    "mkdir -p src/deep && printf 'fn main() {}\\n' > src/deep/main.rs && cp -r src src2",
    "mv src2 moved",
    "rm -rf moved",
    "printf '\\x00\\x01\\x02binary' > blob.bin && chmod +x blob.bin",
    "ln -s a.txt link && printf 'x' > 'ünïcødé名.txt'",
    "chmod -x blob.bin && rm link && ln -s src link",
    "git checkout -q -b feature && git add -A && git commit -q -m agent && git checkout -q main",
    "mkdir -p node_modules/pkg && printf 'dep' > node_modules/pkg/index.js && printf 'lock' > package-lock.json",
    "git stash -q -u || true; printf 'after stash' > a.txt",
    "rm -f a.txt && mkdir a.txt && printf 'now a dir' > a.txt/inner",
    "rm -rf a.txt && printf 'file again' > a.txt && rm -rf src",
];

fn seeded_workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    bash(
        ws.path(),
        "git init -q -b main && git config user.email u@example.invalid && git config user.name U \
         && printf 'node_modules/\\n' > .gitignore && printf 'readme' > README.md \
         && printf 'keep' > untouched.txt && git add -A && git commit -q -m init",
    );
    ws
}

#[test]
fn every_checkpoint_is_restored_exactly_and_every_rewind_undone() {
    let ws = seeded_workspace();
    let mut s = Session::new(&ws);
    let mut expected = Vec::new();
    for script in SCRIPTS {
        s.act(script);
        expected.push(listing(&s.ws));
    }
    let records = s.log.read().unwrap();
    assert_eq!(records.len(), SCRIPTS.len() * 2);
    let untouched_mtime = std::fs::metadata(s.ws.join("untouched.txt"))
        .unwrap()
        .mtime_nsec();
    let repo = user_repo_bytes(&s.ws);
    let ignored = std::fs::read(s.ws.join("node_modules/pkg/index.js")).unwrap();
    let mut scenarios = 0;
    // Rewind to each "after" checkpoint, newest to oldest and back, checking each.
    let afters: Vec<usize> = (0..records.len()).filter(|i| i % 2 == 1).collect();
    for (step, &index) in afters.iter().rev().chain(afters.iter()).enumerate() {
        let before = listing(&s.ws);
        let before_tree = s.tree_now();
        let (undo, skipped) = s.rewind(index, RewindFiles::All);
        assert!(skipped.is_empty(), "files: all skips nothing: {skipped:?}");
        assert_eq!(
            s.tree_now(),
            records[index].tree,
            "step {step}: the tree of checkpoint {index}"
        );
        assert_eq!(
            listing(&s.ws),
            expected[index / 2],
            "step {step}: the files of checkpoint {index}"
        );
        // Undo the rewind: exactly the workspace before it.
        s.rewind(undo, RewindFiles::Agent);
        assert_eq!(
            s.tree_now(),
            before_tree,
            "step {step}: undo restores the tree"
        );
        assert_eq!(
            listing(&s.ws),
            before,
            "step {step}: undo restores the files"
        );
        // Then go there for the next step.
        s.rewind(index, RewindFiles::All);
        scenarios += 3;
    }
    assert!(scenarios >= 60, "{scenarios} rewinds");
    assert_eq!(
        user_repo_bytes(&s.ws),
        repo,
        "the user's refs, index and stash are untouched"
    );
    assert_eq!(
        std::fs::metadata(s.ws.join("untouched.txt"))
            .unwrap()
            .mtime_nsec(),
        untouched_mtime,
        "a file no rewind had to write keeps its mtime"
    );
    assert_eq!(
        std::fs::read(s.ws.join("node_modules/pkg/index.js")).unwrap(),
        ignored,
        "an ignored tree is never deleted"
    );
    let with_ignored = s.log.read().unwrap();
    assert!(
        with_ignored
            .iter()
            .any(|r| r.ignored.iter().any(|i| i == "node_modules/"))
    );
}

#[test]
fn a_persons_edit_survives_the_default_and_is_named() {
    let ws = seeded_workspace();
    let mut s = Session::new(&ws);
    s.act("printf 'agent 1' > agent.txt && printf 'shared 1' > shared.txt");
    s.act("printf 'agent 2' > agent.txt && printf 'shared 2' > shared.txt");
    // The person edits between two of the agent's actions, and again after the last.
    std::fs::write(s.ws.join("shared.txt"), "person's").unwrap();
    s.act("printf 'agent 3' > agent.txt");
    std::fs::write(s.ws.join("README.md"), "person's readme").unwrap();
    let (_, skipped) = s.rewind(1, RewindFiles::Agent);
    assert_eq!(
        std::fs::read_to_string(s.ws.join("agent.txt")).unwrap(),
        "agent 1"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("shared.txt")).unwrap(),
        "person's"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("README.md")).unwrap(),
        "person's readme"
    );
    assert!(skipped.contains(&"shared.txt".to_owned()), "{skipped:?}");
    assert!(skipped.contains(&"README.md".to_owned()), "{skipped:?}");
    // files: all takes the person's edits back too.
    let (undo, _) = s.rewind(1, RewindFiles::All);
    assert_eq!(
        std::fs::read_to_string(s.ws.join("shared.txt")).unwrap(),
        "shared 1"
    );
    assert_eq!(
        std::fs::read_to_string(s.ws.join("README.md")).unwrap(),
        "readme"
    );
    s.rewind(undo, RewindFiles::Agent);
    assert_eq!(
        std::fs::read_to_string(s.ws.join("shared.txt")).unwrap(),
        "person's"
    );
}

#[test]
fn a_nested_repository_is_named_not_written() {
    let ws = seeded_workspace();
    let mut s = Session::new(&ws);
    s.act("mkdir nested && cd nested && git init -q && printf n > f && git add f && GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@x.invalid GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@x.invalid git commit -q -m n");
    s.act("printf 'top' > top.txt && printf changed > nested/f");
    let (_, _) = s.rewind(0, RewindFiles::All);
    assert!(!s.ws.join("top.txt").exists());
    assert_eq!(
        std::fs::read_to_string(s.ws.join("nested/f")).unwrap(),
        "changed"
    );
}

#[test]
fn an_event_resolves_to_the_newest_checkpoint_at_or_before_it() {
    let ws = seeded_workspace();
    let mut s = Session::new(&ws);
    let message = s.event();
    s.act("printf 1 > one");
    let later = s.event();
    s.act("printf 2 > two");
    let records = s.log.read().unwrap();
    assert_eq!(resolve_event(&records, &s.events, &message), Some(0));
    assert_eq!(resolve_event(&records, &s.events, &later), Some(1));
    assert_eq!(resolve_event(&records, &s.events, "no-such-event"), None);
    let plan = plan_rewind(&s.store, &records, 0, RewindFiles::Agent).unwrap();
    let deletes: Vec<_> = plan
        .restored
        .iter()
        .filter(|p| p.change == PathChange::Delete)
        .map(|p| p.path.as_str())
        .collect();
    assert_eq!(deletes, ["one", "two"]);
}

#[test]
fn a_restore_a_crash_interrupted_is_finished_on_open() {
    let ws = seeded_workspace();
    let home = tempfile::tempdir().unwrap();
    let conversation = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    let log = RecordLog::new(conversation.path());
    {
        let store = Store::open(home.path(), &root).unwrap();
        let first = store.take("first").unwrap();
        log.append(&first, "e0", CheckpointAuthor::Agent, None)
            .unwrap();
        std::fs::write(root.join("README.md"), "changed").unwrap();
        std::fs::write(root.join("new.txt"), "new").unwrap();
        let journal = serde_json::json!({
            "tree": first.tree,
            "paths": [{"path": "README.md", "change": "write"}, {"path": "new.txt", "change": "delete"}],
            "records": log.path(),
            "event_id": "e1",
        });
        // A crash right after the journal was written: nothing applied yet.
        std::fs::write(store.dir().join("restore.json"), journal.to_string()).unwrap();
    }
    let store = Store::open(home.path(), &root).unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("README.md")).unwrap(),
        "readme"
    );
    assert!(!root.join("new.txt").exists());
    assert!(!store.dir().join("restore.json").exists());
    let records = log.read().unwrap();
    assert_eq!(records.last().unwrap().author, CheckpointAuthor::Rewind);
}

#[test]
fn a_deleted_store_starts_again_and_names_what_it_lost() {
    let ws = seeded_workspace();
    // Files older than the index: git trusts their stat data and would not hash them again.
    bash(ws.path(), "find . -exec touch -h -d 2020-01-01 {} +");
    let mut s = Session::new(&ws);
    s.act("printf 1 > one && touch -d 2020-01-01 one");
    std::fs::remove_dir_all(s.store.dir().join("git")).unwrap();
    let records = s.log.read().unwrap();
    let err = plan_rewind(&s.store, &records, 0, RewindFiles::Agent).unwrap_err();
    assert!(err.to_string().contains("lost checkpoint"), "{err}");
    // The next action is checkpointed in a new store.
    s.act("printf 2 > two");
    assert!(s.store.dir().join("git/HEAD").is_file());
}

/// A workspace moves to another machine's store through a bundle: written into a new folder,
/// it has the same tree, files, modes and symlinks — untracked files too, ignored ones not —
/// and the user's repository stays behind.
#[test]
fn a_workspace_moves_through_a_bundle_into_a_new_folder_exactly() {
    let ws = seeded_workspace();
    let mut s = Session::new(&ws);
    for script in &SCRIPTS[..8] {
        s.act(script);
    }
    bash(
        &s.ws,
        "mkdir -p node_modules/pkg && printf 'dep' > node_modules/pkg/index.js && printf 'untracked' > new.txt",
    );
    let taken = s.store.take("moved").unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let bundle = scratch.path().join("ws.bundle");
    assert!(
        s.store
            .bundle(std::slice::from_ref(&taken.commit), &bundle)
            .unwrap()
    );

    let home = tempfile::tempdir().unwrap();
    let target = tempfile::tempdir().unwrap();
    let moved = target.path().join("moved-here");
    std::fs::create_dir(&moved).unwrap();
    let store = Store::open(home.path(), &moved).unwrap();
    store.import_bundle(&bundle).unwrap();
    assert_eq!(store.materialize(&taken.commit).unwrap(), taken.tree);
    assert_eq!(listing(&moved), listing(&s.ws));
    assert!(moved.join("new.txt").is_file(), "untracked files move");
    assert!(!moved.join("node_modules").exists(), "ignored ones do not");
    assert!(
        !moved.join(".git").exists(),
        "the user's repository stays behind"
    );
    assert_eq!(store.snapshot().unwrap(), taken.tree);

    // A folder that already holds something else comes out with another tree: the caller sees
    // the difference and refuses.
    let busy = target.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("other.txt"), "in the way").unwrap();
    let store = Store::open(home.path(), &busy).unwrap();
    store.import_bundle(&bundle).unwrap();
    assert_ne!(store.materialize(&taken.commit).unwrap(), taken.tree);
}
