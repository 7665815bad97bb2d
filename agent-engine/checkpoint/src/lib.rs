//! `tandem-checkpoint`: the workspace as it was at every action, and the way back.
//!
//! A [`Store`] keeps a workspace's checkpoints outside it, in `$TANDEM_HOME/checkpoints/`: a
//! shadow git repository whose work tree is the workspace and whose index is its own, so the
//! user's repository (refs, index, stash, hooks, config) is never read or written. Taking a
//! checkpoint is `git add -A` against that persistent index (a stat walk once warm) and a commit
//! on the store's one chain, made only when the tree changed. Ignored trees (`node_modules/`,
//! `target/`) are named in the checkpoint and never restored or deleted.
//!
//! [`RecordLog`] is a conversation's list of its checkpoints, each tied to an event and to who
//! made its changes; [`plan_rewind`] turns it into the paths a rewind writes and the paths it
//! leaves alone; [`Store::restore`] writes them through a journal, so a crash in the middle is
//! finished on the next open — the workspace ends as it was before or after, never between.

mod error;
mod git;
pub mod outside;
mod plan;
mod records;
mod restore;
mod store;
pub mod system;
mod worktree;

pub use error::{CheckpointError, Result};
pub use plan::{RewindPlan, RewindTarget, plan_rewind, resolve_event, rewind};
pub use records::RecordLog;
pub use restore::recover_all;
pub use store::{Changes, EMPTY_TREE, Store, Taken, store_dir};
pub use worktree::Worktree;
