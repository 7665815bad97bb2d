//! A fork's own worktree (`workspace: worktree` on fork): a checkpoint's tree in a new git
//! worktree of the user's repository, on a branch of its own, so two branches of a conversation
//! can run side by side without touching each other's files.
//!
//! The user's git only adds the worktree (`--no-checkout`: no hook, no filter of the
//! repository's config runs) and sets its index to `HEAD`; the files are written by the
//! store's git, which reads the user's objects through an alternate and has no config of the
//! user's. The fork's changes against `HEAD` show as uncommitted changes on its branch.

use std::path::{Path, PathBuf};

use crate::error::{CheckpointError, Result};
use crate::store::Store;

/// A fork's worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// The worktree's root.
    pub root: PathBuf,
    /// The fork's workspace in it (the root, or the same folder below it as the source's
    /// workspace in its repository).
    pub workspace: PathBuf,
    /// Its branch.
    pub branch: String,
    /// The user's repository it belongs to (its main work tree).
    pub repository: PathBuf,
}

fn failed(what: &str, e: CheckpointError) -> CheckpointError {
    let detail = match e {
        CheckpointError::Git { stderr, .. } => stderr,
        e => e.to_string(),
    };
    CheckpointError::Worktree(format!("{what}: {detail}"))
}

impl Store {
    /// Creates the worktree at `dest` on a new branch `branch` from the user's `HEAD` and makes
    /// the workspace's part of it equal to `tree` (a checkpoint's tree). Nothing is left
    /// behind when it fails.
    pub fn worktree(&self, tree: &str, dest: &Path, branch: &str) -> Result<Worktree> {
        let _lock = self.lock()?;
        self.prepare()?;
        let ws = self.workspace().to_path_buf();
        let out = self
            .git
            .run_user(
                &ws,
                &[
                    "rev-parse",
                    "--show-toplevel",
                    "--show-prefix",
                    "--git-common-dir",
                ],
            )
            .map_err(|e| match e {
                CheckpointError::Git { stderr, .. } if stderr.contains("dubious ownership") => {
                    CheckpointError::Worktree(format!(
                        "the repository at {} belongs to another user, and git works only in repositories of the user it runs as",
                        ws.display()
                    ))
                }
                _ => CheckpointError::NotARepository(ws.clone()),
            })?;
        let text = String::from_utf8_lossy(&out).into_owned();
        let lines: Vec<&str> = text.lines().collect();
        let [top, prefix, common] = lines.as_slice() else {
            return Err(CheckpointError::NotARepository(ws));
        };
        let (top, prefix) = (PathBuf::from(top), prefix.trim_end_matches('/').to_owned());
        let common = match Path::new(common) {
            p if p.is_absolute() => p.to_path_buf(),
            p => ws.join(p),
        };
        self.supported(&top)?;
        if dest.exists() {
            return Err(CheckpointError::Worktree(format!(
                "{} already exists",
                dest.display()
            )));
        }
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| CheckpointError::io("create", parent, e))?;
        }
        let dest_str = dest.to_string_lossy().into_owned();
        self.git
            .run_user(
                &top,
                &[
                    "worktree",
                    "add",
                    "--quiet",
                    "--no-checkout",
                    "-b",
                    branch,
                    &dest_str,
                    "HEAD",
                ],
            )
            .map_err(|e| match e {
                CheckpointError::Git { stderr, .. } if stderr.contains("invalid reference") => {
                    CheckpointError::Worktree(
                        "the repository has no commit yet; a worktree starts from one".into(),
                    )
                }
                e => failed("git worktree add", e),
            })?;
        let made = Worktree {
            root: dest.to_path_buf(),
            workspace: if prefix.is_empty() {
                dest.to_path_buf()
            } else {
                dest.join(&prefix)
            },
            branch: branch.to_owned(),
            repository: top,
        };
        if let Err(e) = self.fill(tree, dest, &prefix, &common) {
            self.remove_worktree(&made);
            return Err(e);
        }
        Ok(made)
    }

    /// Refuses repositories whose worktree would not hold the checkpoint's files as they
    /// were: another object format than the store's (sha1), a partial clone (blobs of `HEAD`
    /// may be missing), Git LFS (files outside the workspace would be pointers, since no
    /// filter of the user's runs).
    fn supported(&self, top: &Path) -> Result<()> {
        let text = |args: &[&str]| {
            self.git
                .run_user(top, args)
                .map(|o| String::from_utf8_lossy(&o).trim().to_owned())
        };
        let format = text(&["rev-parse", "--show-object-format"]).unwrap_or_default();
        if !format.is_empty() && format != "sha1" {
            return Err(CheckpointError::Worktree(format!(
                "the repository uses {format} object names; a worktree fork needs a sha1 repository (fork with workspace: keep or restore)"
            )));
        }
        if text(&["config", "--get", "extensions.partialClone"]).is_ok_and(|v| !v.is_empty()) {
            return Err(CheckpointError::Worktree(
                "the repository is a partial clone (some files of HEAD are not on this machine); fork with workspace: keep or restore".into(),
            ));
        }
        if text(&["cat-file", "-p", "HEAD:.gitattributes"]).is_ok_and(|a| a.contains("filter=lfs"))
        {
            return Err(CheckpointError::Worktree(
                "the repository keeps files in Git LFS, which a worktree fork would check out as pointer files; fork with workspace: keep or restore".into(),
            ));
        }
        Ok(())
    }

    /// Takes back a worktree [`Store::worktree`] made just now, and its branch (`-b` created it:
    /// it held no one else's commits), when the fork it was made for could not be created.
    /// Other worktrees of the repository are left as they are (no prune).
    pub fn remove_worktree(&self, w: &Worktree) {
        let root = w.root.to_string_lossy().into_owned();
        let top = &w.repository;
        let _ = self
            .git
            .run_user(top, &["worktree", "remove", "--force", &root]);
        let _ = std::fs::remove_dir_all(&w.root);
        let _ = self.git.run_user(top, &["branch", "-D", &w.branch]);
    }

    /// Writes `tree` at `prefix` of the worktree `dest` (the rest as the user's `HEAD`) with
    /// the store's git, then points the worktree's index at `HEAD`.
    fn fill(&self, tree: &str, dest: &Path, prefix: &str, common: &Path) -> Result<()> {
        let index = self
            .dir()
            .join(format!("worktree-{}.index", std::process::id()));
        let alternates = common.join("objects");
        let run = |args: &[&str]| {
            let mut c = self.git.command_on(dest, &index, args);
            c.env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &alternates);
            self.git.output(c, args, None)
        };
        let result = (|| -> Result<()> {
            if prefix.is_empty() {
                run(&["read-tree", tree])?;
            } else {
                let head = self.git.run_user(dest, &["rev-parse", "HEAD^{tree}"])?;
                let head = String::from_utf8_lossy(&head).trim().to_owned();
                run(&["read-tree", &head])?;
                run(&[
                    "rm",
                    "--cached",
                    "-r",
                    "-q",
                    "--ignore-unmatch",
                    "--",
                    prefix,
                ])?;
                run(&["read-tree", &format!("--prefix={prefix}/"), tree])?;
            }
            run(&["checkout-index", "--all", "--force"])?;
            self.git.run_user(dest, &["read-tree", "HEAD"])?;
            Ok(())
        })();
        let _ = std::fs::remove_file(&index);
        result.map_err(|e| failed("writing the checkpoint into the worktree", e))
    }
}
