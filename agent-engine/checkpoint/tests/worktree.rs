//! A fork's worktree with real git: a checkpoint's tree on a new branch beside the source,
//! which is left as it was; the user's hooks and filters never run; failures leave nothing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use tandem_checkpoint::{CheckpointError, Store};

#[path = "support/shell.rs"]
mod shell;
use shell::bash as sh;

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    sh(
        dir.path(),
        "git init -q -b main && git config user.email u@example.invalid && git config user.name U \
         && mkdir -p app docs && printf 'one\\n' > app/a.txt && printf 'gone\\n' > app/old.txt \
         && printf 'docs\\n' > docs/d.txt && printf 'x\\n' > app/run.sh && chmod +x app/run.sh \
         && git add -A && git commit -q -m init",
    );
    dir
}

#[test]
fn a_checkpoint_becomes_a_worktree_on_its_own_branch() {
    let repo = repo();
    let ws = repo.path().canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = Store::open(home.path(), &ws).unwrap();
    sh(
        &ws,
        "printf 'two\\n' > app/a.txt && rm app/old.txt && printf 'new\\n' > app/new.txt && ln -s a.txt app/link",
    );
    let at = store.take("after the agent").unwrap();
    sh(&ws, "printf 'three\\n' > app/a.txt && rm app/new.txt");
    let main_before = sh(&ws, "git rev-parse main && git status --porcelain");

    let dest = home.path().join("worktrees/fork-1");
    let w = store.worktree(&at.tree, &dest, "tandem/fork-1").unwrap();
    assert_eq!(w.workspace, dest);
    assert_eq!(
        std::fs::read_to_string(dest.join("app/a.txt")).unwrap(),
        "two\n"
    );
    assert_eq!(
        std::fs::read_to_string(dest.join("app/new.txt")).unwrap(),
        "new\n"
    );
    assert!(
        !dest.join("app/old.txt").exists(),
        "deleted at the checkpoint"
    );
    assert_eq!(
        std::fs::read_link(dest.join("app/link")).unwrap(),
        Path::new("a.txt")
    );
    assert_eq!(
        sh(&dest, "stat -c %a app/run.sh").trim(),
        "755",
        "the exec bit comes along"
    );
    assert_eq!(
        sh(&dest, "git branch --show-current").trim(),
        "tandem/fork-1"
    );
    let status = sh(&dest, "git status --porcelain");
    assert!(
        status.contains(" M app/a.txt")
            && status.contains(" D app/old.txt")
            && status.contains("?? app/new.txt"),
        "{status}"
    );
    // The source is as it was: files, branch, index.
    assert_eq!(
        std::fs::read_to_string(ws.join("app/a.txt")).unwrap(),
        "three\n"
    );
    assert_eq!(
        sh(&ws, "git rev-parse main && git status --porcelain"),
        main_before
    );
    assert_eq!(sh(&ws, "git branch --show-current").trim(), "main");

    // The same destination again is refused, and nothing changes.
    let err = store
        .worktree(&at.tree, &dest, "tandem/fork-2")
        .unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    assert!(!sh(&ws, "git branch --list").contains("fork-2"));
}

#[test]
fn a_workspace_below_the_repository_root_keeps_the_rest_as_head() {
    let repo = repo();
    let ws = repo.path().join("app").canonicalize().unwrap();
    let home = tempfile::tempdir().unwrap();
    let store = Store::open(home.path(), &ws).unwrap();
    sh(
        &ws,
        "printf 'two\\n' > a.txt && printf 'edited docs\\n' > ../docs/d.txt",
    );
    let at = store.take("after").unwrap();
    let dest = home.path().join("wt");
    let w = store.worktree(&at.tree, &dest, "tandem/sub").unwrap();
    assert_eq!(w.workspace, dest.join("app"));
    assert_eq!(
        std::fs::read_to_string(dest.join("app/a.txt")).unwrap(),
        "two\n"
    );
    assert_eq!(
        std::fs::read_to_string(dest.join("docs/d.txt")).unwrap(),
        "docs\n",
        "outside the workspace the worktree is HEAD's"
    );
}

#[test]
fn the_users_hooks_and_filters_never_run() {
    let repo = repo();
    let ws = repo.path().canonicalize().unwrap();
    let marker = ws
        .parent()
        .unwrap()
        .join(format!("hook-ran-{}", std::process::id()));
    let m = marker.to_string_lossy();
    sh(
        &ws,
        &format!(
            "printf '*.txt filter=evil\\n' > .gitattributes && git add .gitattributes && git commit -q -m attrs \
             && printf '#!/bin/sh\\ntouch {m}\\n' > .git/hooks/post-checkout && chmod +x .git/hooks/post-checkout \
             && git config filter.evil.smudge 'touch {m}; cat' && git config filter.evil.clean cat \
             && git config filter.evil.required true && git config core.fsmonitor 'touch {m}'"
        ),
    );
    let home = tempfile::tempdir().unwrap();
    let store = Store::open(home.path(), &ws).unwrap();
    let at = store.take("now").unwrap();
    let dest = home.path().join("wt");
    store.worktree(&at.tree, &dest, "tandem/safe").unwrap();
    assert_eq!(
        std::fs::read_to_string(dest.join("app/a.txt")).unwrap(),
        "one\n"
    );
    assert!(
        !marker.exists(),
        "a hook, filter or fsmonitor of the user's ran"
    );
}

#[test]
fn no_repository_or_no_commit_is_a_clear_error_that_leaves_nothing() {
    let plain = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let ws = plain.path().canonicalize().unwrap();
    std::fs::write(ws.join("f"), "f").unwrap();
    let store = Store::open(home.path(), &ws).unwrap();
    let at = store.take("now").unwrap();
    let dest = home.path().join("wt");
    let err = store.worktree(&at.tree, &dest, "tandem/x").unwrap_err();
    assert!(matches!(err, CheckpointError::NotARepository(_)), "{err}");
    assert!(!dest.exists());

    sh(&ws, "git init -q -b main");
    let err = store.worktree(&at.tree, &dest, "tandem/x").unwrap_err();
    assert!(err.to_string().contains("no commit yet"), "{err}");
    assert!(!dest.exists());
    assert!(sh(&ws, "git branch --list").is_empty());
}
