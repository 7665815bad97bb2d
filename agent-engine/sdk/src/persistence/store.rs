//! The directory of all conversations: one sub-directory per conversation, upstream's layout.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tandem_protocol::ConversationState;

use super::atomic::{atomic_write, sync_dir};
use super::event_log::{EventLog, LoadedLog, lock};
use super::meta::{ConversationMeta, hex_id, parse_time};
use crate::{Result, SdkError};

/// `base_state.json`: the conversation state.
const BASE_STATE: &str = "base_state.json";
/// `meta.json`: the catalog entry.
const META: &str = "meta.json";
/// `events/`: the event log.
const EVENTS: &str = "events";

/// What a redacted secret value is written as (pydantic's rendering of a `SecretStr`).
const REDACTED: &str = "**********";

/// Fields of an LLM configuration that hold credentials; never written to disk.
const LLM_SECRET_FIELDS: &[&str] = &[
    "api_key",
    "aws_access_key_id",
    "aws_secret_access_key",
    "aws_session_token",
];

/// The conversations under one root directory (upstream's `conversations_path`).
///
/// Each conversation lives in `<root>/<id as 32 hex>/`. The store itself holds no state: it
/// names paths and reads and writes whole files atomically. The one writer of a
/// conversation's events is the [`EventLog`] that [`create`](Self::create) or
/// [`load`](Self::load) hands back.
#[derive(Debug, Clone)]
pub struct ConversationStore {
    root: PathBuf,
}

impl ConversationStore {
    /// A store rooted at `root` (created on the first [`create`](Self::create)).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The directory of conversation `id`, given dashed (`53b0201b-2388-...`) or as 32 hex.
    /// Anything that is not a UUID is refused, so an id can never name a path outside the root.
    pub fn dir_for(&self, id: &str) -> Result<PathBuf> {
        let hex = hex_id(id);
        let dashes_ok = !id.contains('-') || id.len() == 36;
        if hex.len() != 32 || !dashes_ok || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(SdkError::InvalidState(format!(
                "{id:?} is not a conversation id"
            )));
        }
        Ok(self.root.join(hex))
    }

    /// Creates conversation `meta.id` (which must be `state.id`): its directory,
    /// `base_state.json`, `meta.json` and an empty event log. Fails if it already exists.
    /// Returns the conversation's directory and the log's writer.
    pub fn create(
        &self,
        state: &ConversationState,
        meta: &ConversationMeta,
    ) -> Result<(PathBuf, EventLog)> {
        if hex_id(&state.id) != hex_id(&meta.id) {
            return Err(SdkError::InvalidState(format!(
                "state id {} and meta id {} differ",
                state.id, meta.id
            )));
        }
        let dir = self.dir_for(&meta.id)?;
        std::fs::create_dir_all(&self.root)
            .map_err(|e| SdkError::io("create dir", &self.root, e))?;
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(SdkError::InvalidState(format!(
                    "conversation {} already exists",
                    meta.id
                )));
            }
            Err(e) => return Err(SdkError::io("create dir", &dir, e)),
        }
        let log = EventLog::create(dir.join(EVENTS))?;
        self.save_state(&dir, state)?;
        let meta = ConversationMeta {
            id: hex_id(&meta.id),
            ..meta.clone()
        };
        self.save_meta(&dir, &meta)?;
        // The new directory's name must survive a power loss like its files do.
        sync_dir(&dir)?;
        sync_dir(&self.root)?;
        Ok((dir, log))
    }

    /// The catalog: the `meta.json` of every conversation, oldest first; a missing root is an
    /// empty catalog. A conversation without a `meta.json` (as upstream wrote some) is listed
    /// with an entry rebuilt from its `base_state.json` and events, written back atomically
    /// unless a writer has it open (one being created has no `meta.json` yet for a moment); an
    /// unreadable `meta.json` is rebuilt the same way but left on disk as it is. A directory
    /// without a readable `base_state.json` is skipped with a warning.
    pub fn list(&self) -> Vec<ConversationMeta> {
        let entries = match std::fs::read_dir(&self.root) {
            Ok(entries) => entries,
            Err(e) => {
                if e.kind() != std::io::ErrorKind::NotFound {
                    tracing::warn!("cannot list conversations in {}: {e}", self.root.display());
                }
                return Vec::new();
            }
        };
        let mut metas = Vec::new();
        for entry in entries.flatten() {
            let dir = entry.path();
            let is_conversation = entry.file_type().is_ok_and(|t| t.is_dir())
                && entry
                    .file_name()
                    .to_str()
                    .is_some_and(|n| self.dir_for(n).is_ok());
            if !is_conversation {
                continue;
            }
            let found = match read_json::<ConversationMeta>(&dir.join(META)) {
                Ok(meta) => Ok(meta),
                Err(e) => {
                    let missing = !dir.join(META).exists();
                    if !missing {
                        tracing::warn!("{e}; listing {} from its state", dir.display());
                    }
                    self.rebuild_meta(&dir, missing)
                }
            };
            match found {
                Ok(meta) => metas.push(meta),
                Err(e) => tracing::warn!("skipped conversation {}: {e}", dir.display()),
            }
        }
        metas.sort_by(|a, b| {
            a.created_at
                .cmp(&b.created_at)
                .then_with(|| a.id.cmp(&b.id))
        });
        metas
    }

    /// The catalog entry of the conversation in `dir`, rebuilt from `base_state.json` and the
    /// events: created at its first event and updated at its last (the state file's time when
    /// there are none), its metrics from the state's stats, no title. With `write_back` it is
    /// saved as `meta.json` (atomically, while holding the event log's lock, and only if no
    /// `meta.json` appeared meanwhile); a writer holding the log leaves the disk untouched.
    fn rebuild_meta(&self, dir: &Path, write_back: bool) -> Result<ConversationMeta> {
        let state: ConversationState = read_json(&dir.join(BASE_STATE))?;
        let events_dir = dir.join(EVENTS);
        let events = if events_dir.is_dir() {
            EventLog::read(&events_dir)?.events
        } else {
            Vec::new()
        };
        let modified = std::fs::metadata(dir.join(BASE_STATE))
            .and_then(|m| m.modified())
            .map(chrono::DateTime::<chrono::Utc>::from)
            .unwrap_or_else(|_| chrono::Utc::now());
        let at = |event: Option<&tandem_protocol::Event>| {
            event
                .and_then(|e| parse_time(e.timestamp()))
                .unwrap_or(modified)
        };
        let id = dir
            .file_name()
            .and_then(|n| n.to_str())
            .map_or_else(|| hex_id(&state.id), str::to_owned);
        let mut meta = ConversationMeta::new(&id, None, at(events.first()));
        meta.updated_at = at(events.last()).max(meta.created_at);
        meta.metrics = serde_json::to_value(&state.stats).ok();
        if write_back {
            // No writer may be creating it (its meta.json comes right after the state).
            let guard = if events_dir.is_dir() {
                lock(&events_dir).ok()
            } else {
                None
            };
            let free = guard.is_some() || !events_dir.is_dir();
            if free && !dir.join(META).exists() {
                self.save_meta(dir, &meta)?;
                tracing::info!("rebuilt the catalog entry of conversation {id}");
            }
            drop(guard);
        }
        Ok(meta)
    }

    /// Loads conversation `id`: its state, its catalog entry, the writer of its event log and
    /// the events. A missing or unreadable `meta.json` is rebuilt from the state (with a
    /// warning in the [`LoadedLog`]); a missing or unreadable `base_state.json` is an error.
    /// Fails if another writer has the conversation open.
    pub fn load(
        &self,
        id: &str,
    ) -> Result<(ConversationState, ConversationMeta, EventLog, LoadedLog)> {
        let dir = self.dir_for(id)?;
        if !dir.is_dir() {
            return Err(SdkError::NotFound(id.to_owned()));
        }
        let state: ConversationState = read_json(&dir.join(BASE_STATE))?;
        let (log, mut loaded) = EventLog::open(dir.join(EVENTS))?;
        let meta = match read_json::<ConversationMeta>(&dir.join(META)) {
            Ok(meta) => meta,
            Err(e) => {
                let warning = format!("{e}; rebuilt the conversation's catalog entry");
                tracing::warn!("{warning}");
                loaded.warnings.push(warning);
                let modified = std::fs::metadata(dir.join(BASE_STATE))
                    .and_then(|m| m.modified())
                    .map(chrono::DateTime::<chrono::Utc>::from)
                    .unwrap_or_else(|_| chrono::Utc::now());
                ConversationMeta::new(&state.id, None, modified)
            }
        };
        Ok((state, meta, log, loaded))
    }

    /// Writes `dir/base_state.json` atomically. Credentials never reach the disk: every LLM
    /// key in the agent (its `llm`, the condenser's, any other nested one) is left out, and the
    /// values of the secret registry are written as `**********`.
    pub fn save_state(&self, dir: &Path, state: &ConversationState) -> Result<()> {
        let mut value = serde_json::to_value(state)?;
        if let Some(agent) = value.get_mut("agent") {
            strip_llm_secrets(agent);
        }
        if let Some(registry) = value.get_mut("secret_registry") {
            redact_secret_values(registry);
        }
        atomic_write(&dir.join(BASE_STATE), &serde_json::to_vec(&value)?)
    }

    /// Writes `dir/meta.json` atomically.
    pub fn save_meta(&self, dir: &Path, meta: &ConversationMeta) -> Result<()> {
        atomic_write(&dir.join(META), &serde_json::to_vec(meta)?)
    }

    /// Deletes conversation `id` and everything in its directory. Fails while its event log is
    /// open for writing (close the conversation first).
    pub fn delete(&self, id: &str) -> Result<()> {
        let dir = self.dir_for(id)?;
        if !dir.is_dir() {
            return Err(SdkError::NotFound(id.to_owned()));
        }
        let events = dir.join(EVENTS);
        // Holding the writer's lock proves no one is appending while the files go.
        let guard = if events.is_dir() {
            Some(lock(&events)?)
        } else {
            None
        };
        let removed = std::fs::remove_dir_all(&dir).map_err(|e| SdkError::io("delete", &dir, e));
        drop(guard);
        removed
    }
}

/// Reads and parses a JSON file.
fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = std::fs::read(path).map_err(|e| SdkError::io("read", path, e))?;
    serde_json::from_slice(&bytes).map_err(|e| SdkError::Corrupt {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

/// Removes credential fields from every object under `value` (the agent: its LLM, the
/// condenser's LLM, routers' LLMs, ...).
fn strip_llm_secrets(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for field in LLM_SECRET_FIELDS {
                map.remove(*field);
            }
            map.values_mut().for_each(strip_llm_secrets);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_llm_secrets),
        _ => {}
    }
}

/// Replaces the secret values of a `secret_registry` (`secret_sources.<name>.value`, and the
/// header values of lookup secrets) with `**********`, keeping names and kinds.
fn redact_secret_values(registry: &mut Value) {
    let Some(sources) = registry
        .get_mut("secret_sources")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    for source in sources.values_mut() {
        match source {
            Value::Object(fields) => {
                if let Some(v) = fields.get_mut("value").filter(|v| !v.is_null()) {
                    *v = Value::String(REDACTED.to_owned());
                }
                if let Some(Value::Object(headers)) = fields.get_mut("headers") {
                    headers
                        .values_mut()
                        .for_each(|v| *v = Value::String(REDACTED.to_owned()));
                }
            }
            // A bare value (older layouts map the name straight to the secret).
            other => *other = Value::String(REDACTED.to_owned()),
        }
    }
}

/// How to fork a conversation ([`ConversationStore::fork`]).
#[derive(Debug, Clone, Default)]
pub struct ForkOptions {
    /// The fork's id (dashed UUID); a new one when `None`.
    pub id: Option<String>,
    /// Its title (default: the source's).
    pub title: Option<String>,
    /// Its tags (default: the source's).
    pub tags: Option<std::collections::BTreeMap<String, String>>,
    /// Start cost and token counts afresh (otherwise they are copied).
    pub reset_metrics: bool,
    /// Copy only the branch up to and including this event, and put the fork's head there
    /// (default: the whole conversation).
    pub from_event_id: Option<String>,
    /// The fork's workspace when it is not the source's (its own worktree); the source's
    /// checkpoint records then stay behind, as they name another workspace's checkpoints.
    pub working_dir: Option<String>,
}

/// The meta field naming the conversation a fork was made from.
pub const FORKED_FROM: &str = "forked_from_conversation_id";
/// The meta field naming the event a fork was made at.
pub const FORKED_AT: &str = "forked_from_event_id";

impl ConversationStore {
    /// Copies conversation `source` into a new one, idle, with the same events (ids and
    /// content) and the same agent; its checkpoints' record comes along, so a rewind in the
    /// fork finds them. Returns the fork's dashed id.
    pub fn fork(&self, source: &str, options: &ForkOptions) -> Result<String> {
        let src = self.dir_for(source)?;
        if !src.is_dir() {
            return Err(SdkError::NotFound(source.to_owned()));
        }
        let mut state: ConversationState = read_json(&src.join(BASE_STATE))?;
        let source_meta: Option<ConversationMeta> = read_json(&src.join(META)).ok();
        let loaded = EventLog::read(&src.join(EVENTS))?;
        let events: Vec<&tandem_protocol::Event> = match &options.from_event_id {
            Some(e) => crate::conversation::branch::branch_to(&loaded.events, e)
                .ok_or_else(|| SdkError::NotFound(format!("event {e}")))?,
            None => loaded.events.iter().collect(),
        };
        let id = options
            .id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        state.id = id.clone();
        state.execution_status = tandem_protocol::ExecutionStatus::Idle;
        if let Some(dir) = &options.working_dir {
            state.workspace.working_dir = dir.clone();
        }
        if options.reset_metrics {
            state.stats = Default::default();
        }
        if let Some(tags) = &options.tags {
            state.tags = tags.clone();
        }
        let now = chrono::Utc::now();
        let title = options
            .title
            .clone()
            .or_else(|| source_meta.as_ref().and_then(|m| m.title.clone()));
        let mut meta = ConversationMeta::new(&id, title, now);
        meta.extra.insert(
            FORKED_FROM.into(),
            Value::String(crate::subagent::dashed(source)),
        );
        if let Some(e) = &options.from_event_id {
            meta.extra
                .insert(FORKED_AT.into(), Value::String(e.clone()));
        }
        let (dir, mut log) = self.create(&state, &meta)?;
        let copied = (|| -> Result<()> {
            for e in events {
                let skip = options.reset_metrics
                    && matches!(e, tandem_protocol::Event::StateUpdate(u) if u.key == "stats");
                if !skip {
                    log.append(e)?;
                }
            }
            // Whatever the source's log ended with, the fork starts idle.
            log.append(&tandem_protocol::Event::state_update(
                "execution_status",
                Value::String("idle".into()),
                None,
            ))?;
            if options.working_dir.is_none()
                && let Ok(records) = std::fs::read(src.join("checkpoints.jsonl"))
            {
                atomic_write(&dir.join("checkpoints.jsonl"), &records)?;
            }
            Ok(())
        })();
        drop(log);
        if let Err(e) = copied {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
        Ok(id)
    }
}
