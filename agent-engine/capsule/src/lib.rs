//! A conversation capsule: one file (`*.tandem-capsule`, a tar archive) holding everything a
//! conversation needs to continue on another backend, checked end to end.
//!
//! Layout, in this order:
//! - `capsule.json`: the [`Manifest`] (format, version, the conversation's id, its workspace's
//!   commit and tree, what its LLM and secrets are called — never their values);
//! - `conversation/…`: the conversation's own files byte for byte (`base_state.json`,
//!   `meta.json`, `events/`, `checkpoints.jsonl`, its tasks, tags and observations; the replay
//!   lanes when asked for), each passed through the exporter's `transform` (which redacts
//!   credentials a file may hold);
//! - `workspace.bundle`: a git bundle of the workspace's commit and the checkpoints;
//! - `capsule.sums.json` last: the [`Sums`], a SHA-256 of every entry, and the event count.
//!
//! [`open`] is strict: a capsule of another format or a newer version, a damaged or truncated
//! one, an entry whose checksum differs or that is missing, or a name outside the capsule's
//! folders is refused with the reason, and nothing it extracted is kept by the caller.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The manifest's format name.
pub const FORMAT: &str = "tandem-capsule";
/// The version this build writes and reads.
pub const VERSION: u32 = 1;
/// The manifest's name in the archive.
pub const MANIFEST: &str = "capsule.json";
/// The conversation's files' folder in the archive.
pub const CONVERSATION: &str = "conversation";
/// The workspace bundle's name in the archive.
pub const BUNDLE: &str = "workspace.bundle";
/// The checksums' name in the archive (its last entry).
pub const SUMS: &str = "capsule.sums.json";
/// The media type of a capsule.
pub const MEDIA_TYPE: &str = "application/x-tandem-capsule";

/// What went wrong with a capsule.
#[derive(Debug, thiserror::Error)]
pub enum CapsuleError {
    /// The file is not a capsule this build can open.
    #[error("{path} is not a Tandem capsule this version can open: {detail}")]
    NotACapsule {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// The capsule is damaged or incomplete.
    #[error("the capsule {path} is damaged: {detail}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A file could not be read or written.
    #[error("cannot {op} {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

impl CapsuleError {
    fn io(op: &'static str, path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A capsule's result.
pub type Result<T> = std::result::Result<T, CapsuleError>;

/// The workspace as it was exported: a commit (in the bundle) whose tree is the workspace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkspaceRef {
    /// The commit holding the workspace's files (untracked ones included, ignored ones not).
    pub commit: String,
    /// Its tree: the target's workspace must come out with this tree.
    pub tree: String,
    /// The folder it was in on the source.
    pub source_dir: String,
    /// A commit the target has (the workspace as it left that server): the bundle carries only
    /// what changed since, and the target brings that folder up to `commit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
}

/// The conversation's LLM, by reference: the target resolves it from its own profiles (or an
/// LLM given with the import). Never a key.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LlmRef {
    /// The model.
    pub model: String,
    /// The provider's address, when not the model's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The source's profile of that model, by name, when it had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}

/// What a capsule holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always [`FORMAT`].
    pub format: String,
    /// The format's version.
    pub version: u32,
    /// The conversation's id.
    pub conversation_id: String,
    /// The conversation's title, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When it was exported (ISO 8601).
    pub exported_at: String,
    /// The address of the server it was exported from, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_url: Option<String>,
    /// The workspace, when it travels with the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<WorkspaceRef>,
    /// The LLM, by reference.
    pub llm: LlmRef,
    /// The names of the conversation's secrets (their values stay behind).
    #[serde(default)]
    pub secrets: Vec<String>,
    /// Fields of the agent's spec whose credentials were left out (MCP servers' environment
    /// and headers), as JSON pointers.
    #[serde(default)]
    pub redacted: Vec<String>,
    /// The agent's terminal: its working directory and the environment it had changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminal: Option<serde_json::Value>,
    /// The agent's browser: its tabs, cookies and storage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<serde_json::Value>,
    /// Whether the replay lanes came along.
    #[serde(default)]
    pub replay: bool,
}

/// The capsule's last entry: a checksum of every entry before it (but the manifest), and the
/// events it carries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sums {
    /// SHA-256 (hex) of each entry, by name.
    pub files: BTreeMap<String, String>,
    /// SHA-256 of the manifest.
    pub manifest: String,
    /// How many events.
    pub events: usize,
    /// The newest event's id.
    #[serde(default)]
    pub last_event_id: Option<String>,
}

/// What an export is given.
pub struct ExportInput<'a> {
    /// The manifest to write (its format and version are set by [`export`]).
    pub manifest: Manifest,
    /// The conversation's folder.
    pub conversation_dir: &'a Path,
    /// The workspace bundle, when the workspace travels.
    pub bundle: Option<&'a Path>,
    /// Rewrites a file on its way in (by its path in the conversation's folder), e.g. to leave
    /// credentials out of `base_state.json`.
    pub transform: &'a dyn Fn(&Path, Vec<u8>) -> Vec<u8>,
}

impl std::fmt::Debug for ExportInput<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExportInput")
            .field("manifest", &self.manifest)
            .field("conversation_dir", &self.conversation_dir)
            .field("bundle", &self.bundle)
            .finish_non_exhaustive()
    }
}

/// What an export wrote.
#[derive(Debug, Clone)]
pub struct Exported {
    /// The manifest written.
    pub manifest: Manifest,
    /// Its checksums.
    pub sums: Sums,
    /// Bytes written.
    pub bytes: u64,
}

/// Folders and files of a conversation that stay behind: the browser's profile (the browser's
/// state travels in the manifest), the server's bash log, the move fence, and the replay lanes
/// unless asked for.
fn wanted(rel: &Path, replay: bool) -> bool {
    if rel
        .components()
        .any(|c| matches!(c, Component::Normal(p) if p.to_string_lossy().starts_with('.')))
    {
        return false;
    }
    let first = rel
        .components()
        .next()
        .and_then(|c| match c {
            Component::Normal(p) => p.to_str(),
            _ => None,
        })
        .unwrap_or_default();
    match first {
        "browser-profile" | "bash_events" | MOVED_FILE | ARRIVING_FILE | EXPORTED_FILE
        | "tandem_shell.json" => false,
        "replay" => replay,
        "" => false,
        _ => true,
    }
}

/// The file that marks a conversation as moved elsewhere (written by the server that fences
/// it); never part of a capsule.
pub const MOVED_FILE: &str = "tandem_moved.json";

/// The file recording the workspace a conversation's last export carried (`{commit,
/// working_dir}`): a later move back here needs only what changed since.
pub const EXPORTED_FILE: &str = "tandem_exported.json";

/// The file that marks a conversation as arriving here from another server (imported with
/// `pending`): read-only until the move ends.
pub const ARRIVING_FILE: &str = "tandem_arriving.json";

fn walk(dir: &Path, base: &Path, replay: bool, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.filter_map(|e| e.ok()).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        let path = entry.path();
        let Ok(rel) = path.strip_prefix(base) else {
            continue;
        };
        if !wanted(rel, replay) {
            continue;
        }
        let kind = entry.file_type()?;
        if kind.is_dir() {
            walk(&path, base, replay, out)?;
        } else if kind.is_file() {
            out.push(rel.to_path_buf());
        }
    }
    Ok(())
}

fn sha256(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    hex
}

/// The index and id of an event file's name (`events/event-NNNNN-<id>.json`).
fn event_file(rel: &str) -> Option<(u64, &str)> {
    let name = rel.strip_prefix("events/")?.strip_suffix(".json")?;
    let rest = name.strip_prefix("event-")?;
    let (index, id) = rest.split_once('-')?;
    let index = index.parse().ok()?;
    (!id.is_empty()).then_some((index, id))
}

struct Writer {
    tar: tar::Builder<BufWriter<File>>,
    out: PathBuf,
}

impl Writer {
    fn append(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_cksum();
        self.tar
            .append_data(&mut header, name, bytes)
            .map_err(|e| CapsuleError::io("write", &self.out, e))
    }
}

/// Writes the capsule of `input` to `out`.
pub fn export(mut input: ExportInput<'_>, out: &Path) -> Result<Exported> {
    let dir = input.conversation_dir;
    let mut files = Vec::new();
    walk(dir, dir, input.manifest.replay, &mut files)
        .map_err(|e| CapsuleError::io("read", dir, e))?;
    input.manifest.format = FORMAT.into();
    input.manifest.version = VERSION;
    if input.manifest.exported_at.is_empty() {
        input.manifest.exported_at =
            chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    }
    let file = File::create(out).map_err(|e| CapsuleError::io("create", out, e))?;
    let mut writer = Writer {
        tar: tar::Builder::new(BufWriter::new(file)),
        out: out.to_path_buf(),
    };
    let manifest_bytes = serde_json::to_vec_pretty(&input.manifest).unwrap_or_default();
    writer.append(MANIFEST, &manifest_bytes)?;
    let mut sums = Sums {
        manifest: sha256(&manifest_bytes),
        ..Sums::default()
    };
    let mut newest: Option<(u64, String)> = None;
    for rel in &files {
        let path = dir.join(rel);
        let bytes = std::fs::read(&path).map_err(|e| CapsuleError::io("read", &path, e))?;
        let bytes = (input.transform)(rel, bytes);
        let rel_name = rel.to_string_lossy().replace('\\', "/");
        if let Some((index, id)) = event_file(&rel_name) {
            sums.events += 1;
            if newest.as_ref().is_none_or(|(n, _)| index > *n) {
                newest = Some((index, id.to_owned()));
            }
        }
        let name = format!("{CONVERSATION}/{rel_name}");
        sums.files.insert(name.clone(), sha256(&bytes));
        writer.append(&name, &bytes)?;
    }
    sums.last_event_id = newest.map(|(_, id)| id);
    if let Some(bundle) = input.bundle {
        let bytes = std::fs::read(bundle).map_err(|e| CapsuleError::io("read", bundle, e))?;
        sums.files.insert(BUNDLE.into(), sha256(&bytes));
        writer.append(BUNDLE, &bytes)?;
    }
    let sums_bytes = serde_json::to_vec_pretty(&sums).unwrap_or_default();
    writer.append(SUMS, &sums_bytes)?;
    let mut buffered = writer
        .tar
        .into_inner()
        .map_err(|e| CapsuleError::io("write", out, e))?;
    // Not synced: a capsule is a file in passing (streamed out, or read back at once); what
    // must last is the conversation the target places, synced there.
    buffered
        .flush()
        .map_err(|e| CapsuleError::io("write", out, e))?;
    let bytes = std::fs::metadata(out).map_or(0, |m| m.len());
    Ok(Exported {
        manifest: input.manifest,
        sums,
        bytes,
    })
}

/// What [`open`] extracted.
#[derive(Debug)]
pub struct Opened {
    /// The manifest.
    pub manifest: Manifest,
    /// The checksums, all verified.
    pub sums: Sums,
    /// The conversation's files.
    pub conversation_dir: PathBuf,
    /// The workspace bundle, when the capsule has one.
    pub bundle: Option<PathBuf>,
}

/// Reads just the manifest of the capsule at `path` (its first entry), checking its format
/// and version.
pub fn manifest(path: &Path) -> Result<Manifest> {
    let file = File::open(path).map_err(|e| CapsuleError::io("open", path, e))?;
    let mut archive = tar::Archive::new(file);
    let mut entries = archive.entries().map_err(|e| not_a_capsule(path, e))?;
    let mut entry = match entries.next() {
        Some(Ok(entry)) => entry,
        Some(Err(e)) => return Err(not_a_capsule(path, e)),
        None => return Err(not_a_capsule(path, "it is empty")),
    };
    let mut bytes = Vec::new();
    entry
        .read_to_end(&mut bytes)
        .map_err(|e| not_a_capsule(path, e))?;
    let name = entry.path().map(|p| p.into_owned()).unwrap_or_default();
    parse_manifest(path, &name, &bytes)
}

fn not_a_capsule(path: &Path, detail: impl std::fmt::Display) -> CapsuleError {
    CapsuleError::NotACapsule {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    }
}

fn damaged(path: &Path, detail: impl std::fmt::Display) -> CapsuleError {
    CapsuleError::Damaged {
        path: path.to_path_buf(),
        detail: detail.to_string(),
    }
}

fn parse_manifest(path: &Path, name: &Path, bytes: &[u8]) -> Result<Manifest> {
    if name != Path::new(MANIFEST) {
        return Err(not_a_capsule(
            path,
            format!("it starts with {} instead of {MANIFEST}", name.display()),
        ));
    }
    // The format and version first, so a newer capsule is named as such even when the rest
    // of its manifest is unknown here.
    let head: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| not_a_capsule(path, format!("{MANIFEST}: {e}")))?;
    if head.get("format").and_then(|f| f.as_str()) != Some(FORMAT) {
        return Err(not_a_capsule(
            path,
            format!(
                "format {}",
                head.get("format").unwrap_or(&serde_json::Value::Null)
            ),
        ));
    }
    let version = head.get("version").and_then(|v| v.as_u64()).unwrap_or(0);
    if version > u64::from(VERSION) {
        return Err(not_a_capsule(
            path,
            format!(
                "it is version {version}, newer than this Tandem reads ({VERSION}): update Tandem on this side"
            ),
        ));
    }
    serde_json::from_value(head).map_err(|e| not_a_capsule(path, format!("{MANIFEST}: {e}")))
}

/// Extracts the capsule at `path` into `into` (an empty folder) and checks it: every entry's
/// checksum, nothing missing, nothing extra, nothing outside the capsule's folders.
pub fn open(path: &Path, into: &Path) -> Result<Opened> {
    let file = File::open(path).map_err(|e| CapsuleError::io("open", path, e))?;
    let mut archive = tar::Archive::new(file);
    let mut entries = archive.entries().map_err(|e| not_a_capsule(path, e))?;
    let mut manifest: Option<(Manifest, String)> = None;
    let mut sums: Option<Sums> = None;
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let conversation_dir = into.join(CONVERSATION);
    let mut bundle = None;
    loop {
        let mut entry = match entries.next() {
            None => break,
            Some(Ok(entry)) => entry,
            Some(Err(e)) if manifest.is_none() => return Err(not_a_capsule(path, e)),
            Some(Err(e)) => return Err(damaged(path, format!("it is cut off or corrupt: {e}"))),
        };
        let name = entry
            .path()
            .map_err(|e| damaged(path, format!("an entry's name is unreadable: {e}")))?
            .into_owned();
        let mut bytes = Vec::new();
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| damaged(path, format!("{} is cut off: {e}", name.display())))?;
        let Some((_, manifest_sum)) = &manifest else {
            let m = parse_manifest(path, &name, &bytes)?;
            manifest = Some((m, sha256(&bytes)));
            continue;
        };
        if sums.is_some() {
            return Err(damaged(
                path,
                format!("{} comes after {SUMS}, which must be last", name.display()),
            ));
        }
        let name_str = name.to_string_lossy().into_owned();
        if name == Path::new(SUMS) {
            let s: Sums = serde_json::from_slice(&bytes)
                .map_err(|e| damaged(path, format!("{SUMS}: {e}")))?;
            if s.manifest != *manifest_sum {
                return Err(damaged(
                    path,
                    format!("{MANIFEST} does not match its checksum"),
                ));
            }
            sums = Some(s);
            continue;
        }
        let safe = name.components().all(|c| matches!(c, Component::Normal(_)));
        let target = if name == Path::new(BUNDLE) {
            into.join(BUNDLE)
        } else if safe && name.starts_with(CONVERSATION) && name.components().count() > 1 {
            into.join(&name)
        } else {
            return Err(damaged(
                path,
                format!("{} is not a file of a capsule", name.display()),
            ));
        };
        if seen.insert(name_str.clone(), sha256(&bytes)).is_some() {
            return Err(damaged(path, format!("{name_str} appears twice")));
        }
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).map_err(|e| CapsuleError::io("create", parent, e))?;
        }
        std::fs::write(&target, &bytes).map_err(|e| CapsuleError::io("write", &target, e))?;
        if name == Path::new(BUNDLE) {
            bundle = Some(target);
        }
    }
    let Some((manifest, _)) = manifest else {
        return Err(not_a_capsule(path, "it is empty"));
    };
    let Some(sums) = sums else {
        return Err(damaged(
            path,
            format!("it is truncated: its last entry, {SUMS}, is missing"),
        ));
    };
    for (name, sum) in &sums.files {
        match seen.get(name) {
            None => return Err(damaged(path, format!("{name} is missing"))),
            Some(s) if s != sum => {
                return Err(damaged(path, format!("{name} does not match its checksum")));
            }
            Some(_) => {}
        }
    }
    if let Some(extra) = seen.keys().find(|n| !sums.files.contains_key(*n)) {
        return Err(damaged(path, format!("{extra} is not in its checksums")));
    }
    let events = seen.keys().filter_map(|n| {
        n.strip_prefix(&format!("{CONVERSATION}/"))
            .and_then(event_file)
    });
    if events.count() != sums.events {
        return Err(damaged(
            path,
            "its event count does not match its checksums",
        ));
    }
    Ok(Opened {
        manifest,
        sums,
        conversation_dir,
        bundle,
    })
}

#[cfg(test)]
mod tests;
