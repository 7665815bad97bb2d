//! `tandem checkpoints ID` and `tandem rewind ID --to EVENT`: a conversation's checkpoints and
//! the way back, on this machine's conversations (`$TANDEM_HOME`).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use tandem_checkpoint::{RecordLog, RewindTarget, Store};
use tandem_protocol::api::{CheckpointAuthor, PathChange, RewindFiles};
use tandem_protocol::{ConversationState, Event, ExecutionStatus};
use tandem_sdk::{ConversationStore, EventLog};

/// What `tandem rewind` restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Restore {
    /// The workspace's files.
    Code,
    /// The conversation's head.
    Chat,
    /// Both.
    Both,
}

/// A conversation opened from disk: holding it keeps another process from opening it until
/// the rewind is done (files and head alike).
struct Opened {
    dir: PathBuf,
    state: ConversationState,
    log: EventLog,
    events: Vec<Event>,
}

/// Opens the conversation; fails when another process has it open.
fn open(store: &ConversationStore, id: &str) -> Result<Opened> {
    let (state, _meta, log, loaded) = store.load(id).with_context(|| {
        format!("conversation {id}: cannot open it (a running `tandem serve` or the desktop app may have it open: rewind through it, POST /api/conversations/{id}/rewind or /navigate)")
    })?;
    Ok(Opened {
        dir: store.dir_for(id)?,
        state,
        log,
        events: loaded.events,
    })
}

/// `tandem system-checkpoint`: the system store's checkpoint now (its baseline on first use).
pub fn system(home: &Path) -> Result<()> {
    let roots = tandem_checkpoint::system::roots_from_env();
    if roots.is_empty() {
        bail!(
            "{} names no folder (e.g. /usr:/etc:/home)",
            tandem_checkpoint::system::ENV
        );
    }
    let started = std::time::Instant::now();
    let system = Store::open_system(home, &roots)?;
    println!(
        "system checkpoint of {} in {:.1} s: {}",
        roots
            .iter()
            .map(|r| r.display().to_string())
            .collect::<Vec<_>>()
            .join(" "),
        started.elapsed().as_secs_f64(),
        system.dir().display()
    );
    Ok(())
}

/// `tandem checkpoints ID`: one line per checkpoint that changed something.
pub fn list(store: &ConversationStore, id: &str) -> Result<()> {
    let dir = store.dir_for(id)?;
    if !dir.is_dir() {
        bail!("no conversation {id} (see `tandem conversations`)");
    }
    let records = RecordLog::new(&dir).read()?;
    if records.is_empty() {
        println!("no checkpoints: no action that can change files has run in {id}");
        return Ok(());
    }
    for r in records.iter().filter(|r| r.changed()) {
        let who = match (&r.author, &r.tool_name) {
            (CheckpointAuthor::Agent, Some(tool)) => tool.clone(),
            (CheckpointAuthor::Agent, None) => "agent".into(),
            (CheckpointAuthor::Person, _) => "person".into(),
            (CheckpointAuthor::Rewind, _) => "rewind".into(),
        };
        println!(
            "{}  event {}  {who}: {} added, {} modified, {} deleted",
            &r.id[..12.min(r.id.len())],
            r.event_id,
            r.added.len(),
            r.modified.len(),
            r.deleted.len()
        );
        for (mark, paths) in [("+", &r.added), ("~", &r.modified), ("-", &r.deleted)] {
            for p in paths.iter().take(20) {
                println!("    {mark} {p}");
            }
        }
    }
    Ok(())
}

/// `tandem rewind ID --to EVENT`.
pub fn rewind(
    home: &Path,
    store: &ConversationStore,
    id: &str,
    to: &str,
    restore: Restore,
    all: bool,
    dry_run: bool,
) -> Result<()> {
    let mut conv = open(store, id)?;
    let log = RecordLog::new(&conv.dir);
    let records = log.read()?;
    let target = if records
        .iter()
        .any(|r| r.id == to || r.id.starts_with(to) && to.len() >= 7)
    {
        let full = records
            .iter()
            .rev()
            .find(|r| r.id == to || r.id.starts_with(to))
            .map(|r| r.id.clone())
            .unwrap_or_default();
        RewindTarget::Checkpoint(full)
    } else {
        RewindTarget::Event(to.to_owned())
    };
    if restore == Restore::Chat {
        let event = match &target {
            RewindTarget::Event(e) => e.clone(),
            RewindTarget::Checkpoint(c) => records
                .iter()
                .rfind(|r| r.id == *c)
                .map(|r| r.event_id.clone())
                .unwrap_or_default(),
        };
        return navigate(store, id, &mut conv, &event, dry_run);
    }
    let workspace = PathBuf::from(&conv.state.workspace.working_dir);
    let events: Vec<String> = conv.events.iter().map(|e| e.id().to_owned()).collect();
    let checkpoints = Store::open(home, &workspace)?;
    let files = if all {
        RewindFiles::All
    } else {
        RewindFiles::Agent
    };
    let answer = tandem_checkpoint::rewind(&checkpoints, &log, &events, &target, files, dry_run)?;
    if dry_run {
        print!("{}", answer.diff.as_deref().unwrap_or_default());
    }
    let verb = if dry_run { "would" } else { "did" };
    for r in &answer.restored {
        let change = match r.change {
            PathChange::Write => "restore",
            PathChange::Delete => "delete",
        };
        eprintln!("{verb} {change} {}", r.path);
    }
    for s in &answer.skipped {
        eprintln!("skipped {}: {}", s.path, s.reason);
    }
    if restore == Restore::Both {
        let event = match &target {
            RewindTarget::Event(e) => e.clone(),
            RewindTarget::Checkpoint(_) => answer.event_id.clone(),
        };
        navigate(store, id, &mut conv, &event, dry_run)?;
    }
    match &answer.undo_checkpoint_id {
        Some(undo) => eprintln!(
            "· rewound to checkpoint {} (event {}); undo: tandem rewind {id} --to {undo}",
            answer.checkpoint_id, answer.event_id
        ),
        None => eprintln!("· dry run: nothing written"),
    }
    Ok(())
}

/// Moves the conversation's head to `event` (what navigate does in a live conversation): the
/// conversation continues from there, idle; later events stay on disk on their branch. Both
/// changes are events, as the live conversation records them, so a replay of the log (which
/// reads no saved state) reaches the same head and status.
fn navigate(
    store: &ConversationStore,
    id: &str,
    conv: &mut Opened,
    event: &str,
    dry_run: bool,
) -> Result<()> {
    let known = conv
        .events
        .iter()
        .any(|e| e.id() == event && !matches!(e, Event::StateUpdate(_)));
    if !known {
        bail!("no event {event} in conversation {id} (see GET /api/conversations/{id}/events)");
    }
    if dry_run {
        eprintln!("· would move the conversation's head to event {event}");
        return Ok(());
    }
    let head = tandem_sdk::branch::head(&conv.events);
    let moved = Event::state_update(
        tandem_sdk::branch::LEAF_KEY,
        serde_json::Value::String(event.to_owned()),
        head,
    );
    conv.log.append(&moved)?;
    conv.events.push(moved);
    if conv.state.execution_status != ExecutionStatus::Idle {
        let idle = Event::state_update(
            "execution_status",
            serde_json::json!(ExecutionStatus::Idle.as_str()),
            Some(event.to_owned()),
        );
        conv.log.append(&idle)?;
        conv.events.push(idle);
    }
    conv.state.leaf_event_id = Some(event.to_owned());
    conv.state.execution_status = ExecutionStatus::Idle;
    store.save_state(&conv.dir, &conv.state)?;
    eprintln!("· the conversation's head is now event {event}; later events stay on their branch");
    Ok(())
}
