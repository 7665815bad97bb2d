//! A trace: one file (`*.tandem-trace`, a tar archive) holding what a conversation's replay
//! needs — its events and state, the terminal casts, the browser frames, the checkpoint list
//! and, as a git bundle, the checkpoints' trees — so it opens anywhere with no server state
//! and no network.
//!
//! Layout: `trace.json` (the [`Manifest`], first), `conversation/…` (the conversation's own
//! files: `base_state.json`, `meta.json`, `events/`, `checkpoints.jsonl`, `replay/`), and
//! `checkpoints.bundle` when there are checkpoints. Every text file is passed through the
//! exporter's mask on the way in (the conversation's secrets are masked where they were written
//! already; this is the second line). Frames are copied as they are.
//!
//! Opening extracts what it can: a truncated or damaged trace gives the files before the
//! damage and a note naming it.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::{ReplayError, Result};

/// The manifest's format name.
pub const FORMAT: &str = "tandem-trace";
/// The version this build writes and reads.
pub const VERSION: u32 = 1;
/// The manifest's name in the archive.
pub const MANIFEST: &str = "trace.json";
/// The conversation's files' folder in the archive.
pub const CONVERSATION: &str = "conversation";
/// The checkpoint bundle's name in the archive.
pub const BUNDLE: &str = "checkpoints.bundle";

/// What a trace holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The format's version.
    pub version: u32,
    /// The conversation's id.
    pub conversation_id: String,
    /// When it was exported (ISO 8601).
    pub exported_at: String,
    /// The workspace the conversation ran in (where the checkpoints' trees come from).
    pub workspace: String,
    /// Files in the archive besides the manifest.
    pub files: usize,
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    /// The manifest written.
    pub manifest: Manifest,
    /// Bytes written.
    pub bytes: u64,
}

/// Whether the conversation's file at `rel` (relative to its folder) belongs in a trace.
fn wanted(rel: &Path) -> bool {
    let mut parts = rel.components().filter_map(|c| match c {
        Component::Normal(p) => p.to_str(),
        _ => None,
    });
    let Some(first) = parts.next() else {
        return false;
    };
    if rel
        .components()
        .any(|c| matches!(c, Component::Normal(p) if p.to_string_lossy().starts_with('.')))
    {
        return false;
    }
    matches!(
        first,
        "base_state.json" | "meta.json" | "events" | "checkpoints.jsonl" | "replay"
    )
}

fn is_text(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("json" | "jsonl" | "cast" | "idx")
    )
}

fn walk(dir: &Path, base: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(base) else {
            continue;
        };
        if !wanted(rel) {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&path, base, out)?;
        } else if kind.is_file() {
            out.push(rel.to_path_buf());
        }
    }
    Ok(())
}

fn append(
    tar: &mut tar::Builder<BufWriter<File>>,
    name: &str,
    bytes: &[u8],
    out: &Path,
) -> Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_size(bytes.len() as u64);
    header.set_mode(0o644);
    header.set_mtime(0);
    header.set_cksum();
    tar.append_data(&mut header, name, bytes)
        .map_err(|e| ReplayError::io("write", out, e))
}

/// Writes the trace of the conversation in `conversation_dir` to `out`: its files, each text
/// one passed through `mask`, and `bundle` (a git bundle of its checkpoints) when given.
pub fn export(
    conversation_dir: &Path,
    conversation_id: &str,
    workspace: &str,
    bundle: Option<&Path>,
    mask: &dyn Fn(&str) -> String,
    out: &Path,
) -> Result<Exported> {
    let mut files = Vec::new();
    walk(conversation_dir, conversation_dir, &mut files)
        .map_err(|e| ReplayError::io("read", conversation_dir, e))?;
    let manifest = Manifest {
        format: FORMAT.into(),
        version: VERSION,
        conversation_id: conversation_id.into(),
        exported_at: now_iso(),
        workspace: workspace.into(),
        files: files.len() + usize::from(bundle.is_some()),
    };
    let file = File::create(out).map_err(|e| ReplayError::io("create", out, e))?;
    let mut tar = tar::Builder::new(BufWriter::new(file));
    let body = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
    append(&mut tar, MANIFEST, &body, out)?;
    for rel in &files {
        let path = conversation_dir.join(rel);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            // Gone since the walk (a rotated file): the trace goes on without it.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(ReplayError::io("read", &path, e)),
        };
        let bytes = if is_text(rel) {
            mask(&String::from_utf8_lossy(&bytes)).into_bytes()
        } else {
            bytes
        };
        let name = format!("{CONVERSATION}/{}", rel.to_string_lossy());
        append(&mut tar, &name, &bytes, out)?;
    }
    if let Some(bundle) = bundle {
        let bytes = std::fs::read(bundle).map_err(|e| ReplayError::io("read", bundle, e))?;
        append(&mut tar, BUNDLE, &bytes, out)?;
    }
    let mut writer = tar
        .into_inner()
        .map_err(|e| ReplayError::io("write", out, e))?;
    writer
        .flush()
        .map_err(|e| ReplayError::io("write", out, e))?;
    let bytes = std::fs::metadata(out).map_or(0, |m| m.len());
    Ok(Exported { manifest, bytes })
}

fn now_iso() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// What [`open`] extracted.
#[derive(Debug)]
pub struct Opened {
    /// The manifest.
    pub manifest: Manifest,
    /// The conversation's files.
    pub conversation_dir: PathBuf,
    /// The checkpoint bundle, when the trace has one.
    pub bundle: Option<PathBuf>,
    /// What could not be read, in words.
    pub notes: Vec<String>,
}

/// Extracts the trace at `path` into `into`. A trace of another format or a newer version is
/// refused; a damaged one gives what comes before the damage, named in the notes.
pub fn open(path: &Path, into: &Path) -> Result<Opened> {
    let not_a_trace = |detail: String| ReplayError::NotATrace {
        path: path.to_path_buf(),
        detail,
    };
    let file = File::open(path).map_err(|e| ReplayError::io("open", path, e))?;
    let mut archive = tar::Archive::new(file);
    let mut entries = archive
        .entries()
        .map_err(|e| not_a_trace(format!("not a tar archive: {e}")))?;
    let mut manifest: Option<Manifest> = None;
    let mut notes = Vec::new();
    let conversation_dir = into.join(CONVERSATION);
    let mut bundle = None;
    loop {
        let mut entry = match entries.next() {
            None => break,
            Some(Ok(entry)) => entry,
            Some(Err(e)) => {
                if manifest.is_none() {
                    return Err(not_a_trace(format!("not a tar archive: {e}")));
                }
                notes.push(format!(
                    "the trace is damaged after its readable files: {e}"
                ));
                break;
            }
        };
        let name = match entry.path() {
            Ok(p) => p.into_owned(),
            Err(e) => {
                notes.push(format!("an entry with an unreadable name was skipped: {e}"));
                continue;
            }
        };
        let mut bytes = Vec::new();
        if let Err(e) = entry.read_to_end(&mut bytes) {
            notes.push(format!(
                "{} is cut off ({e}): the trace ends there",
                name.display()
            ));
            break;
        }
        if manifest.is_none() {
            if name != Path::new(MANIFEST) {
                return Err(not_a_trace(format!(
                    "it starts with {} instead of {MANIFEST}",
                    name.display()
                )));
            }
            let m: Manifest = serde_json::from_slice(&bytes)
                .map_err(|e| not_a_trace(format!("{MANIFEST}: {e}")))?;
            if m.format != FORMAT {
                return Err(not_a_trace(format!("format {:?}", m.format)));
            }
            if m.version > VERSION {
                return Err(not_a_trace(format!(
                    "version {} is newer than this Tandem reads ({VERSION}): update Tandem",
                    m.version
                )));
            }
            manifest = Some(m);
            continue;
        }
        // Only plain relative names inside the trace's own folders.
        let safe = name.components().all(|c| matches!(c, Component::Normal(_)));
        let target = if name == Path::new(BUNDLE) {
            into.join(BUNDLE)
        } else if safe && name.starts_with(CONVERSATION) {
            into.join(&name)
        } else {
            notes.push(format!(
                "{} was skipped: not a file of a trace",
                name.display()
            ));
            continue;
        };
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| ReplayError::io("create", parent, e))?;
        }
        std::fs::write(&target, &bytes).map_err(|e| ReplayError::io("write", &target, e))?;
        if name == Path::new(BUNDLE) {
            bundle = Some(target);
        }
    }
    let manifest = manifest.ok_or_else(|| not_a_trace("it is empty".into()))?;
    if manifest.files > 0 && !conversation_dir.join("events").is_dir() {
        notes.push("the trace has no events".into());
    }
    Ok(Opened {
        manifest,
        conversation_dir,
        bundle,
        notes,
    })
}
