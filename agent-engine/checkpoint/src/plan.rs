//! What a rewind writes and what it leaves alone, decided before anything is written.

use std::collections::{BTreeSet, HashMap};

use tandem_protocol::api::{
    Checkpoint, CheckpointAuthor, PathChange, PathChangeKind, RestoredPath, RewindFiles,
    SkippedPath,
};

use crate::error::{CheckpointError, Result};
use crate::store::{GITLINK, Store};

/// A rewind decided: the checkpoint it returns to, the paths it writes and the paths it skips.
#[derive(Debug, Clone)]
pub struct RewindPlan {
    /// The checkpoint rewound to.
    pub target: Checkpoint,
    /// The workspace's tree when the plan was made.
    pub now_tree: String,
    /// Paths to write or delete.
    pub restored: Vec<RestoredPath>,
    /// Paths that differ and are left alone, with why.
    pub skipped: Vec<SkippedPath>,
}

/// The index in `records` of the checkpoint that holds the workspace as it was when
/// `event_id` was recorded: the newest one at or before it in `order` (the conversation's
/// event ids, oldest first). Before the first checkpoint the workspace is the first one's.
/// `None` when `event_id` is not in `order` or there is no checkpoint.
pub fn resolve_event(records: &[Checkpoint], order: &[String], event_id: &str) -> Option<usize> {
    let position: HashMap<&str, usize> = order
        .iter()
        .enumerate()
        .map(|(i, id)| (id.as_str(), i))
        .collect();
    let target = *position.get(event_id)?;
    if records.is_empty() {
        return None;
    }
    let at_or_before = records.iter().rposition(|r| {
        position
            .get(r.event_id.as_str())
            .is_some_and(|p| *p <= target)
    });
    Some(at_or_before.unwrap_or(0))
}

/// Plans a rewind of the workspace to `records[target]`.
///
/// Every path that differs between that checkpoint and the workspace now is either restored or
/// skipped with its reason. With [`RewindFiles::Agent`] only paths the agent (or an earlier
/// rewind) changed since are restored; a path a person changed since — in a checkpoint
/// recorded as theirs, or since the last checkpoint — is skipped and named. A nested
/// repository is never written.
pub fn plan_rewind(
    store: &Store,
    records: &[Checkpoint],
    target: usize,
    files: RewindFiles,
) -> Result<RewindPlan> {
    let record = records[target].clone();
    let target_tree = store.tree_of(&record.id)?;
    let now_tree = store.snapshot()?;
    let mut agent = BTreeSet::new();
    let mut person = BTreeSet::new();
    for r in &records[target + 1..] {
        let paths = r.added.iter().chain(&r.modified).chain(&r.deleted).cloned();
        match r.author {
            CheckpointAuthor::Agent | CheckpointAuthor::Rewind => agent.extend(paths),
            CheckpointAuthor::Person => person.extend(paths),
        }
    }
    if let Some(last) = records.last() {
        person.extend(store.diff(&last.tree, &now_tree)?.paths().cloned());
    }
    let mut restored = Vec::new();
    let mut skipped = Vec::new();
    for change in store.raw_diff(&target_tree, &now_tree)? {
        let path = change.path;
        if change.old_mode == GITLINK || change.new_mode == GITLINK {
            skipped.push(SkippedPath {
                path,
                reason: "a nested repository: its files are its own git history's, not restored"
                    .into(),
            });
            continue;
        }
        if files == RewindFiles::Agent {
            if person.contains(&path) {
                skipped.push(SkippedPath {
                    path,
                    reason: "edited by a person since this checkpoint (rewind with files: all to restore it too)".into(),
                });
                continue;
            }
            if !agent.contains(&path) {
                skipped.push(SkippedPath {
                    path,
                    reason: "not changed by the agent since this checkpoint (rewind with files: all to restore it too)".into(),
                });
                continue;
            }
        }
        // Present now but not at the checkpoint: delete; otherwise write its old content.
        let change = if change.status == 'A' {
            PathChange::Delete
        } else {
            PathChange::Write
        };
        restored.push(RestoredPath { path, change });
    }
    // What the agent changed outside the workspace since, where it cannot be taken back.
    let mut named = BTreeSet::new();
    for r in &records[target + 1..] {
        for o in r.outside.iter().filter(|o| !o.restorable) {
            if named.insert(o.path.clone()) {
                let how = match o.change {
                    PathChangeKind::Added => "added",
                    PathChangeKind::Modified => "changed",
                    PathChangeKind::Deleted => "deleted",
                };
                let by = r.tool_name.as_deref().unwrap_or("the agent");
                skipped.push(SkippedPath {
                    path: o.path.clone(),
                    reason: format!(
                        "outside the workspace, {how} by {by}: not in any checkpoint, so not restorable here; undo it by hand"
                    ),
                });
            }
        }
    }
    Ok(RewindPlan {
        target: record,
        now_tree,
        restored,
        skipped,
    })
}

/// What to rewind to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RewindTarget {
    /// The workspace as it was when this event was recorded.
    Event(String),
    /// This checkpoint (e.g. a rewind's undo checkpoint).
    Checkpoint(String),
}

/// Rewinds the workspace of a conversation whose events are `events` (ids, oldest first) and
/// whose checkpoints are in `log`: plans it, and unless `dry_run` takes the undo checkpoint
/// (recorded at the newest event) and restores. The answer lists what was (or would be)
/// restored and skipped, with the diff from now to the checkpoint's content.
pub fn rewind(
    store: &Store,
    log: &crate::RecordLog,
    events: &[String],
    to: &RewindTarget,
    files: RewindFiles,
    dry_run: bool,
) -> Result<tandem_protocol::api::RewindResponse> {
    let records = log.read()?;
    let target = match to {
        RewindTarget::Event(e) => {
            if !events.contains(e) {
                return Err(CheckpointError::UnknownEvent(e.clone()));
            }
            resolve_event(&records, events, e).ok_or(CheckpointError::Empty)?
        }
        RewindTarget::Checkpoint(c) => records
            .iter()
            .rposition(|r| r.id == *c)
            .ok_or_else(|| CheckpointError::UnknownCheckpoint(c.clone()))?,
    };
    let plan = plan_rewind(store, &records, target, files)?;
    // The sandbox's system store, to its checkpoint at the target (the newest one recorded at
    // or before it); older records, taken before it was on, leave it alone.
    let system = store.system().and_then(|system| {
        let commit = records[..=target]
            .iter()
            .rev()
            .find_map(|r| r.system.clone())?;
        Some((system, commit))
    });
    // A system store that lost the checkpoint (or cannot be read) leaves the workspace's
    // rewind to go ahead, with what it cannot do named.
    let mut system_error = None;
    let system_plan = match &system {
        Some((system, commit)) => match crate::system::plan(system, commit) {
            Ok(plan) => Some(plan),
            Err(e) => {
                system_error = Some(SkippedPath {
                    path: "/".into(),
                    reason: format!("outside the workspace: not restored: {e}"),
                });
                None
            }
        },
        None => None,
    };
    let system = system.filter(|_| system_plan.is_some());
    let paths: Vec<String> = plan.restored.iter().map(|p| p.path.clone()).collect();
    let diff = if paths.is_empty() {
        String::new()
    } else {
        store.unified_diff(&plan.now_tree, &plan.target.tree, &paths)?
    };
    let mut response = tandem_protocol::api::RewindResponse {
        checkpoint_id: plan.target.id.clone(),
        event_id: plan.target.event_id.clone(),
        restored: plan.restored.clone(),
        skipped: plan.skipped.clone(),
        undo_checkpoint_id: None,
        diff: Some(diff),
        leaf_event_id: None,
        dry_run,
    };
    response.skipped.extend(system_error);
    if let Some(sp) = &system_plan {
        // Outside the workspace: absolute paths.
        response
            .restored
            .extend(sp.restored.iter().map(|r| RestoredPath {
                path: format!("/{}", r.path),
                change: r.change,
            }));
        response.skipped.extend(sp.skipped.iter().cloned());
    }
    if dry_run {
        return Ok(response);
    }
    let leaf = events.last().map(String::as_str).unwrap_or_default();
    let mut undo = store.take("before a rewind")?;
    if let Some((system, _)) = &system {
        undo.system = Some(system.take("before a rewind")?.commit);
    }
    let undo = log.append(&undo, leaf, CheckpointAuthor::Person, None)?;
    // The system first: the workspace's checkpoint after the rewind then records where the
    // system ended.
    let mut failed = Vec::new();
    if let (Some((system, _)), Some(sp)) = (&system, &system_plan)
        && !sp.restored.is_empty()
    {
        let done = system.restore_to(&sp.tree, &sp.restored, None, leaf)?;
        failed.extend(done.failed.into_iter().map(|f| SkippedPath {
            path: format!("/{}", f.path),
            reason: f.reason,
        }));
    }
    let restored = store.restore(&plan.target.tree, &plan.restored, log, leaf)?;
    failed.extend(restored.failed);
    response.undo_checkpoint_id = Some(undo.id);
    if !failed.is_empty() {
        let names: BTreeSet<&str> = failed.iter().map(|f| f.path.as_str()).collect();
        response
            .restored
            .retain(|r| !names.contains(r.path.as_str()));
        response.skipped.extend(failed);
    }
    Ok(response)
}
