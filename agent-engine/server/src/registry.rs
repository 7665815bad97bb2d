//! The registry of conversations: live actors by id, opened on access and closed when idle;
//! conversation creation (the posted agent's LLM and tools built in memory); the run limit;
//! and crash recovery at startup (conversations persisted as `running` are opened at once so
//! the engine records what the crash interrupted).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use serde_json::Value;
use tandem_browser::{Browser, BrowserSlot};
use tandem_llm::{Llm, LlmError, LlmRequest, LlmResponse};
use tandem_protocol::{
    AgentSpec, ConversationInfo, ConversationState, ExecutionStatus, LlmConfig,
    StartConversationRequest,
};
use tandem_sdk::{
    Conversation, ConversationHandle, ConversationMeta, ConversationOptions, ConversationStore,
    Runtime, SecretSource, Tool, ToolEnv,
};
use tandem_tools::terminal::{Lane, Recorder, TerminalTool};
use tokio_util::sync::CancellationToken;

use crate::bash_commands::BashService;
use crate::config::ServerConfig;
use crate::error::{ApiError, Result};
use crate::info::conversation_info;
use crate::workspace::Baseline;
use tandem_host::env::env_key_for;

mod sub_agents;

pub use sub_agents::ServerSubAgents;

/// Tags set through PATCH (the engine keeps the ones given at creation).
const TAGS_FILE: &str = "tandem_tags.json";

/// A conversation whose actor is running in this server.
pub struct Live {
    /// The actor's handle.
    pub handle: ConversationHandle,
    /// The agent's terminal (for `/sockets/pty`).
    pub terminal: Arc<TerminalTool>,
    /// The agent's browser, when its spec has the browser tools (for `/sockets/browser`).
    pub browser: Option<Browser>,
    /// The tools the agent runs with (for `ask_agent`'s tool list).
    pub tools: Vec<Arc<dyn Tool>>,
    /// The agent's LLM (for `ask_agent`).
    pub llm: Arc<dyn Llm>,
    /// Whether the LLM has a key (shown as `**********` in socket frames).
    pub has_key: bool,
    /// The workspace root.
    pub workspace: PathBuf,
    /// Per-conversation bash commands.
    pub bash: Arc<BashService>,
    /// Records the conversation's replay lanes until it leaves memory: its terminals (the
    /// agent's, and shells a person opens beside it), each event marked in them, and the
    /// browser.
    pub recording: ReplayRecording,
    last_access: Mutex<Instant>,
    watchers: AtomicUsize,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("id", &self.handle.id())
            .finish_non_exhaustive()
    }
}

impl Live {
    /// Marks a socket or stream attached until the guard drops (an attached conversation is
    /// never evicted).
    pub fn watch(self: &Arc<Self>) -> WatchGuard {
        self.watchers.fetch_add(1, Ordering::SeqCst);
        WatchGuard(Arc::clone(self))
    }

    /// Whether the run loop is active.
    pub fn running(&self) -> bool {
        self.handle.run_state().borrow().active
    }

    fn touch(&self) {
        *self.last_access.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn idle_for(&self) -> Duration {
        self.last_access
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
    }

    /// Closes the conversation and its browser.
    pub async fn close(&self) -> tandem_sdk::Result<()> {
        let closed = self.handle.close().await;
        if let Some(b) = &self.browser {
            b.close().await;
        }
        closed
    }

    /// The tags set through PATCH, if any.
    pub fn tags(&self) -> Option<BTreeMap<String, String>> {
        read_tags(self.handle.dir())
    }

    /// `ConversationInfo` now.
    pub fn info(&self) -> ConversationInfo {
        let view = self.handle.view();
        let mut info = conversation_info(&view.state, &view.meta, self.tags(), self.has_key);
        info.sub_conversation_ids = sub_agents::children_of(self.handle.dir());
        info
    }
}

/// Keeps a conversation in memory while a watcher is attached.
#[derive(Debug)]
pub struct WatchGuard(Arc<Live>);

impl Drop for WatchGuard {
    fn drop(&mut self) {
        self.0.watchers.fetch_sub(1, Ordering::SeqCst);
        self.0.touch();
    }
}

fn read_tags(dir: &Path) -> Option<BTreeMap<String, String>> {
    let text = std::fs::read_to_string(dir.join(TAGS_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// A conversation's replay lanes being recorded (see [`record_replay`]); recording stops when
/// it is dropped or the conversation's events end.
pub struct ReplayRecording {
    /// The terminals' recorder (the agent's, and shells a person opens beside it).
    pub recorder: Arc<Recorder>,
    _browser: Option<crate::replay_browser::BrowserRecording>,
}

impl std::fmt::Debug for ReplayRecording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReplayRecording")
            .field("browser", &self._browser.is_some())
            .finish_non_exhaustive()
    }
}

/// Records the replay lanes of the conversation of `handle` into its folder's `replay/`: the
/// agent's terminal with each event marked in it, and `browser` (a frame after each browser
/// action, and the live view while someone watches it). `tandem serve` does it for every
/// conversation it runs, `tandem run` for its one. Needs a Tokio runtime.
pub fn record_replay(
    handle: &ConversationHandle,
    terminal: &TerminalTool,
    browser: Option<Browser>,
) -> ReplayRecording {
    let dir = crate::replay_routes::replay_dir(handle.dir());
    let recorder = Recorder::new(dir.clone());
    terminal.record_to(Arc::clone(&recorder), Lane::Agent);
    mark_events(&recorder, handle.subscribe_live());
    let browser = browser.map(|b| crate::replay_browser::record(b, handle, dir));
    ReplayRecording {
        recorder,
        _browser: browser,
    }
}

/// Marks each event of the conversation in its recorded terminals, from a thread of its own
/// (a marker waits for the output queued before it), until the conversation's events end.
fn mark_events(
    recorder: &Arc<Recorder>,
    mut events: tokio::sync::broadcast::Receiver<tandem_protocol::Event>,
) {
    use tokio::sync::broadcast::error::RecvError;
    let recorder = Arc::clone(recorder);
    let spawned = std::thread::Builder::new()
        .name("replay-markers".into())
        .spawn(move || {
            loop {
                match events.blocking_recv() {
                    Ok(event) => recorder.mark(event.id()),
                    Err(RecvError::Lagged(n)) => {
                        tracing::warn!("{n} events were not marked in the terminal's recording");
                    }
                    Err(RecvError::Closed) => break,
                }
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("the terminal's recording gets no event markers: {e}");
    }
}

/// Live conversations and the store behind them.
pub struct Registry {
    store: ConversationStore,
    config: Arc<ServerConfig>,
    live: tokio::sync::Mutex<HashMap<String, Arc<Live>>>,
    /// The `task` tool's host, given to every conversation's tools.
    sub_agents: std::sync::OnceLock<Arc<dyn tandem_sdk::SubAgents>>,
    /// LLMs given with an imported conversation (their keys in memory only), used whenever it
    /// opens.
    imported_llms: Mutex<HashMap<String, LlmConfig>>,
    /// The `max_concurrent_runs` slots conversations' runs share; a run beyond them waits its
    /// turn. Sub-agents run on their parent's slot (a parent waiting on a queued child could
    /// otherwise hold every slot).
    gate: Arc<tandem_sdk::RunGate>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("root", &self.store.root())
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// A registry over `config.conversations_path`.
    pub fn new(config: Arc<ServerConfig>) -> Self {
        Self {
            store: ConversationStore::new(config.conversations_path.clone()),
            live: Default::default(),
            sub_agents: std::sync::OnceLock::new(),
            imported_llms: Mutex::new(HashMap::new()),
            gate: tandem_sdk::RunGate::new(config.max_concurrent_runs),
            config,
        }
    }

    /// The slots runs share.
    pub fn run_gate(&self) -> &Arc<tandem_sdk::RunGate> {
        &self.gate
    }

    /// The store of the conversations' folders.
    pub fn store(&self) -> &ConversationStore {
        &self.store
    }

    /// Runs conversation `id` (dashed) on `llm` whenever it opens (an imported conversation's
    /// LLM given with the import; its key stays in memory).
    pub fn use_llm(&self, id: &str, llm: LlmConfig) {
        tandem_sdk::known_credentials().add(llm.api_key.iter());
        self.imported_llms
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_owned(), llm);
    }

    /// Closes conversation `id` and takes it out of memory, leaving its files (a conversation
    /// that moved to another server stays here as a read-only record).
    pub async fn retire(&self, id: &str) -> Result<()> {
        let removed = self.live.lock().await.remove(id);
        if let Some(l) = removed {
            l.close().await?;
        }
        Ok(())
    }

    /// Opens every conversation persisted as `running`: the engine records an error for each
    /// tool the crash interrupted and leaves it `error`, resumable with `run`.
    pub async fn recover(&self) {
        for meta in self.store.list() {
            let Ok(dir) = self.store.dir_for(&meta.id) else {
                continue;
            };
            // A conversation that moved away is a record here: it never runs again; one that
            // is arriving runs once its move ends.
            let running = read_state(&dir)
                .is_some_and(|s| s.execution_status == ExecutionStatus::Running)
                && !dir.join(tandem_capsule::MOVED_FILE).exists()
                && !dir.join(tandem_capsule::ARRIVING_FILE).exists();
            if running {
                match self.get(&crate::info_id(&meta.id)).await {
                    Ok(_) => {
                        tracing::info!(conversation = %meta.id, "recovered a conversation that was running")
                    }
                    Err(e) => tracing::warn!(conversation = %meta.id, "could not recover: {e}"),
                }
            }
        }
    }

    /// The live conversation `id` (dashed), opening it from disk if needed.
    pub async fn get(&self, id: &str) -> Result<Arc<Live>> {
        let mut live = self.live.lock().await;
        if let Some(l) = live.get(id) {
            l.touch();
            return Ok(Arc::clone(l));
        }
        let dir = self.store.dir_for(id).map_err(|_| ApiError::NotFound)?;
        let Some(state) = read_state(&dir) else {
            return Err(ApiError::NotFound);
        };
        // A sub-conversation runs on its live parent's LLM (a posted key is in memory only).
        let imported = self
            .imported_llms
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(id)
            .cloned();
        let (llm, has_key) = match sub_agents::inherited_llm(&dir, &live) {
            Some(parent) => parent,
            None => build_llm(
                imported.as_ref().unwrap_or(&state.agent.llm),
                &self.config,
                false,
            )?,
        };
        let workspace = PathBuf::from(&state.workspace.working_dir);
        let env = self.tool_env(id, &dir, &workspace, &llm);
        let set = match build_tools(&state.agent, &self.config, env.clone()).await {
            Ok(set) => set,
            Err(e) => {
                tracing::warn!(conversation = %id, "its tools cannot be made ({e}); it opens with the default tools");
                default_tool_set(&self.config, env).await
            }
        };
        let runtime = Runtime {
            llm: Arc::clone(&llm),
            tools: set.tools.clone(),
            checkpoints: self.checkpoints(&workspace),
            run_gate: sub_agents::parent_of(&dir)
                .is_none()
                .then(|| Arc::clone(&self.gate)),
        };
        // A conversation just closed (evicted, or closed by another server in this process)
        // releases its log's lock right after it answers: retry briefly.
        let mut attempt = 0;
        let (handle, warnings) = loop {
            match Conversation::open(&self.store, id, runtime.clone()).await {
                Ok(opened) => break opened,
                Err(tandem_sdk::SdkError::NotFound(_)) => return Err(ApiError::NotFound),
                Err(e) if attempt >= 50 => return Err(e.into()),
                Err(_) => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
            }
        };
        for w in warnings {
            tracing::warn!(conversation = %id, "{w}");
        }
        Baseline::ensure(handle.dir(), &workspace).await;
        record_mcp_warnings(&handle, &set.mcp_warnings).await;
        let entry = self.entry(handle, set, llm, has_key, workspace);
        live.insert(id.to_owned(), Arc::clone(&entry));
        Ok(entry)
    }

    fn entry(
        &self,
        handle: ConversationHandle,
        set: ToolSet,
        llm: Arc<dyn Llm>,
        has_key: bool,
        workspace: PathBuf,
    ) -> Arc<Live> {
        let bash = Arc::new(BashService::new(
            handle.dir().join("bash_events"),
            workspace.clone(),
        ));
        let recording = record_replay(&handle, &set.terminal, set.browser.clone());
        Arc::new(Live {
            handle,
            recording,
            terminal: set.terminal,
            browser: set.browser,
            tools: set.tools,
            llm,
            has_key,
            workspace,
            bash,
            last_access: Mutex::new(Instant::now()),
            watchers: AtomicUsize::new(0),
        })
    }

    /// Whether conversation `id` is open in memory now.
    pub async fn live_now(&self, id: &str) -> bool {
        self.live.lock().await.contains_key(id)
    }

    /// Whether conversation `id` exists (live or on disk).
    pub async fn exists(&self, id: &str) -> bool {
        if self.live.lock().await.contains_key(id) {
            return true;
        }
        self.store
            .dir_for(id)
            .is_ok_and(|d| d.join("base_state.json").is_file())
    }

    /// Creates a conversation; `Ok((live, false))` when `conversation_id` already exists.
    pub async fn create(&self, req: StartConversationRequest) -> Result<(Arc<Live>, bool)> {
        let id = match &req.conversation_id {
            Some(raw) => uuid::Uuid::parse_str(raw)
                .map(|u| u.hyphenated().to_string())
                .map_err(|e| {
                    ApiError::field(
                        &["body", "conversation_id"],
                        "uuid_parsing",
                        format!("Input should be a valid UUID, {e}"),
                        Value::from(raw.as_str()),
                    )
                })?,
            None => uuid::Uuid::new_v4().to_string(),
        };
        if self.exists(&id).await {
            return Ok((self.get(&id).await?, false));
        }
        let (llm, has_key) = build_llm(&req.agent.llm, &self.config, true)?;
        let workspace = match &req.workspace {
            Some(w) if !w.working_dir.trim().is_empty() => PathBuf::from(&w.working_dir),
            _ => self.config.workspace_path.clone(),
        };
        if !workspace.is_absolute() {
            return Err(ApiError::field(
                &["body", "workspace", "working_dir"],
                "value_error",
                "the working directory must be an absolute path",
                Value::from(workspace.to_string_lossy().as_ref()),
            ));
        }
        // (Tandem) What it may spend before its run pauses; checked before anything is made.
        let budget = match req.extra.get("budget").filter(|b| !b.is_null()) {
            Some(b) => {
                let budget: tandem_protocol::Budget = serde_json::from_value(b.clone())
                    .map_err(|e| {
                        ApiError::field(
                            &["body", "budget"],
                            "model_type",
                            format!("budget: expected {{max_cost, max_tokens}} with positive numbers: {e}"),
                            b.clone(),
                        )
                    })?;
                crate::conversations::check_budget(&budget, &["body", "budget"])?;
                budget
            }
            None => tandem_protocol::Budget::default(),
        };
        let dir = self.store.dir_for(&id)?;
        let set = build_tools(
            &req.agent,
            &self.config,
            self.tool_env(&id, &dir, &workspace, &llm),
        )
        .await?;
        let checkpoints = self.checkpoints(&workspace);
        let mut options = ConversationOptions::new(req.agent.clone(), workspace);
        options.id = Some(id.clone());
        if let Some(p) = req.confirmation_policy.clone() {
            options.confirmation_policy = p;
        }
        if let Some(n) = req.max_iterations {
            options.max_iterations = n;
        }
        if let Some(s) = req.stuck_detection {
            options.stuck_detection = s;
        }
        options.tags = req.tags.clone().unwrap_or_default();
        options.secrets = parse_secrets(req.secrets.as_ref(), &["body", "secrets"])?;
        options.budget = budget;
        let mut extra = req.extra.clone();
        extra.remove("budget");
        for k in [
            "tool_module_qualnames",
            "client_tools",
            "hook_config",
            "plugins",
            "autotitle",
        ] {
            if let Some(v) = extra.remove(k) {
                options.meta_extra.insert(k.to_owned(), v);
            }
        }
        // Upstream's `autotitle` field (default on); a conversation records it in meta.json.
        if let Some(on) = options
            .meta_extra
            .get("autotitle")
            .and_then(serde_json::Value::as_bool)
        {
            options.autotitle = on;
        }
        drop(extra);
        let runtime = Runtime {
            llm: Arc::clone(&llm),
            tools: set.tools.clone(),
            checkpoints,
            run_gate: Some(Arc::clone(&self.gate)),
        };
        let handle = Conversation::create(&self.store, options, runtime).await?;
        let workspace = PathBuf::from(&handle.state().workspace.working_dir);
        Baseline::ensure(handle.dir(), &workspace).await;
        if let Some(analyzer) = req.security_analyzer.clone() {
            handle.set_security_analyzer(Some(analyzer)).await?;
        }
        record_mcp_warnings(&handle, &set.mcp_warnings).await;
        let entry = self.entry(handle, set, llm, has_key, workspace);
        self.live.lock().await.insert(id, Arc::clone(&entry));
        Ok((entry, true))
    }

    /// Runs now.
    pub async fn running(&self) -> usize {
        self.live
            .lock()
            .await
            .values()
            .filter(|l| l.running())
            .count()
    }

    /// Closes and deletes conversation `id`.
    pub async fn delete(&self, id: &str) -> Result<()> {
        let removed = self.live.lock().await.remove(id);
        if let Some(l) = removed {
            l.close().await?;
        } else if !self.exists(id).await {
            return Err(ApiError::NotFound);
        }
        // The actor releases the log's lock just after it answers `close`: retry briefly.
        let mut last = None;
        for _ in 0..100 {
            let store = self.store.clone();
            let owned = id.to_owned();
            match tokio::task::spawn_blocking(move || store.delete(&owned)).await {
                Ok(Ok(())) => return Ok(()),
                Ok(Err(tandem_sdk::SdkError::NotFound(_))) => return Ok(()),
                Ok(Err(e)) => last = Some(ApiError::from(e)),
                Err(e) => last = Some(ApiError::Internal(e.to_string())),
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Err(last.unwrap_or_else(|| ApiError::Internal("could not delete the conversation".into())))
    }

    /// Info of conversation `id` without opening it (read from disk when not live).
    pub async fn info(&self, id: &str) -> Option<ConversationInfo> {
        if let Some(l) = self.live.lock().await.get(id).cloned() {
            return Some(l.info());
        }
        self.info_on_disk(id, None)
    }

    /// Info of conversation `id` as its files say, with its catalog entry when the caller has
    /// it (else read, or made up when there is none).
    fn info_on_disk(&self, id: &str, meta: Option<ConversationMeta>) -> Option<ConversationInfo> {
        let dir = self.store.dir_for(id).ok()?;
        let state = read_state(&dir)?;
        let meta = meta
            .or_else(|| read_meta(&dir))
            .unwrap_or_else(|| ConversationMeta::new(&state.id, None, chrono::Utc::now()));
        let mut info = conversation_info(&state, &meta, read_tags(&dir), false);
        info.sub_conversation_ids = sub_agents::children_of(&dir);
        Some(info)
    }

    /// Every conversation's info, oldest first: every conversation directory on disk, including
    /// those written without a catalog entry (the store rebuilds it from their events).
    pub async fn list(&self) -> Vec<ConversationInfo> {
        let mut out = Vec::new();
        for meta in self.store.list() {
            let id = crate::info_id(&meta.id);
            let live = self.live.lock().await.get(&id).cloned();
            let info = match live {
                Some(l) => Some(l.info()),
                None => self.info_on_disk(&id, Some(meta)),
            };
            out.extend(info);
        }
        out
    }

    /// Closes conversations idle longer than the TTL with nothing running or attached.
    pub async fn evict_idle(&self) {
        let ttl = self.config.idle_ttl;
        let idle: Vec<Arc<Live>> = {
            let mut live = self.live.lock().await;
            let ids: Vec<String> = live
                .iter()
                .filter(|(_, l)| {
                    !l.running() && l.watchers.load(Ordering::SeqCst) == 0 && l.idle_for() >= ttl
                })
                .map(|(id, _)| id.clone())
                .collect();
            ids.iter().filter_map(|id| live.remove(id)).collect()
        };
        for l in idle {
            tracing::debug!(conversation = %l.handle.id(), "closing an idle conversation");
            if let Err(e) = l.close().await {
                tracing::warn!(conversation = %l.handle.id(), "closing: {e}");
            }
        }
    }

    /// Closes every live conversation (state saved, tools stopped).
    pub async fn shutdown(&self) {
        let all: Vec<Arc<Live>> = self.live.lock().await.drain().map(|(_, l)| l).collect();
        for l in all {
            let _ = l.close().await;
        }
    }

    /// Writes the PATCH tags of `id`.
    /// Forks conversation `source` (live, so a key it was given in memory carries over) and
    /// opens the fork; the fork keeps the source's tags unless `options` gives its own.
    pub async fn fork(&self, source: &Live, options: tandem_sdk::ForkOptions) -> Result<Arc<Live>> {
        let store = self.store.clone();
        let source_id = source.handle.id().to_owned();
        let forked = tokio::task::spawn_blocking(move || {
            store.fork(&source_id, &options).map(|id| (id, options))
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
        let (id, options) = match forked {
            Ok(done) => done,
            Err(tandem_sdk::SdkError::NotFound(what)) if what.starts_with("event ") => {
                return Err(ApiError::Missing(format!(
                    "from_event_id: no {what} in this conversation"
                )));
            }
            Err(e) => return Err(e.into()),
        };
        let dir = self.store.dir_for(&id)?;
        match &options.tags {
            Some(tags) => self.set_tags(&dir, tags)?,
            None => {
                if let Ok(bytes) = std::fs::read(source.handle.dir().join(TAGS_FILE)) {
                    tandem_sdk::atomic_write(&dir.join(TAGS_FILE), &bytes)?;
                }
            }
        }
        self.get(&tandem_sdk::subagent::dashed(&id)).await
    }

    pub fn set_tags(&self, dir: &Path, tags: &BTreeMap<String, String>) -> Result<()> {
        let bytes = serde_json::to_vec(tags).map_err(|e| ApiError::Internal(e.to_string()))?;
        tandem_sdk::atomic_write(&dir.join(TAGS_FILE), &bytes).map_err(ApiError::from)
    }
}

fn read_state(dir: &Path) -> Option<ConversationState> {
    let text = std::fs::read_to_string(dir.join("base_state.json")).ok()?;
    serde_json::from_str(&text).ok()
}

fn read_meta(dir: &Path) -> Option<ConversationMeta> {
    let text = std::fs::read_to_string(dir.join("meta.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// Parses secrets in upstream's shapes; 422 naming the bad one. Their values join the server's
/// known credentials, masked in every conversation.
pub fn parse_secrets(
    secrets: Option<&BTreeMap<String, Value>>,
    loc: &[&str],
) -> Result<Vec<(String, SecretSource)>> {
    let mut out = Vec::new();
    for (name, v) in secrets.into_iter().flatten() {
        let source = SecretSource::from_json(v).map_err(|e| {
            let mut l: Vec<&str> = loc.to_vec();
            l.push(name);
            ApiError::field(&l, "value_error", e.to_string(), Value::Null)
        })?;
        match &source {
            SecretSource::Static { value, .. } => tandem_sdk::known_credentials().add([value]),
            SecretSource::Lookup { headers, .. } => {
                tandem_sdk::known_credentials().add(headers.values())
            }
        }
        out.push((name.clone(), source));
    }
    Ok(out)
}

/// Builds the LLM client for `config`. Without a key in the config the environment's is used
/// (`LLM_API_KEY`, the provider's variable, or the server's profile of the same model): posted
/// keys live in memory only. `strict`: a config that cannot work is a 422 (at creation); else
/// an LLM that reports the problem on use (a conversation still opens and shows its events).
pub fn build_llm(
    config: &LlmConfig,
    server: &ServerConfig,
    strict: bool,
) -> Result<(Arc<dyn Llm>, bool)> {
    let profiles = server.all_profiles();
    let mut c = resolve_profile(config, &profiles);
    if c.api_key.is_none() {
        c.api_key = fallback_key(&c.model, c.base_url.as_deref(), &profiles);
    }
    let has_key = c.api_key.is_some();
    tandem_sdk::known_credentials().add(c.api_key.iter());
    match tandem_llm::agent_llm(c) {
        Ok(llm) => Ok((llm, has_key)),
        Err(e) if strict => Err(ApiError::field(
            &["body", "agent", "llm"],
            "value_error",
            e.to_string(),
            Value::from(config.model.as_str()),
        )),
        Err(e) => Ok((
            Arc::new(UnavailableLlm {
                config: config.without_key(),
                reason: e.to_string(),
            }),
            false,
        )),
    }
}

/// The key for `model` at `base_url` when the conversation gives none: a profile's of that
/// model at that same endpoint (a profile's key goes only to its own endpoint: a conversation
/// naming the same model at another base URL must not carry it there), else the environment's.
pub(crate) fn fallback_key(
    model: &str,
    base_url: Option<&str>,
    profiles: &BTreeMap<String, LlmConfig>,
) -> Option<String> {
    profiles
        .values()
        .find(|p| p.model == model && p.base_url.as_deref() == base_url && p.api_key.is_some())
        .and_then(|p| p.api_key.clone())
        .or_else(|| env_key_for(model))
}

/// A conversation whose model is `default` (or a profile name, also as `tandem_NAME` /
/// `openhands_NAME`) runs on that server profile; a model of a profile's name without its
/// own base URL gets the profile's URL. Otherwise the config stands as posted.
fn resolve_profile(config: &LlmConfig, profiles: &BTreeMap<String, LlmConfig>) -> LlmConfig {
    let name = config.model.as_str();
    let named = profiles.get(name).or_else(|| {
        let bare = name
            .strip_prefix("tandem_")
            .or_else(|| name.strip_prefix("openhands_"))?;
        profiles.get(bare)
    });
    match named {
        Some(profile) if !profiles.values().any(|p| p.model == name) => LlmConfig {
            usage_id: config.usage_id.clone(),
            api_key: config.api_key.clone().or_else(|| profile.api_key.clone()),
            ..profile.clone()
        },
        _ => {
            let mut c = config.clone();
            if c.base_url.is_none() {
                c.base_url = profiles
                    .values()
                    .find(|p| p.model == c.model)
                    .and_then(|p| p.base_url.clone());
            }
            c
        }
    }
}

/// An LLM that cannot be used; every call fails with the reason.
struct UnavailableLlm {
    config: LlmConfig,
    reason: String,
}

impl Llm for UnavailableLlm {
    fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn completion<'a>(
        &'a self,
        _request: LlmRequest,
        _cancel: CancellationToken,
    ) -> BoxFuture<'a, tandem_llm::Result<LlmResponse>> {
        let reason = self.reason.clone();
        Box::pin(async move { Err(LlmError::Config(reason)) })
    }
}

/// An agent's tools, its terminal (always made, for the PTY socket) and its browser (when
/// the spec names the browser tools).
pub struct ToolSet {
    /// The tools, in the order the model sees them.
    pub tools: Vec<Arc<dyn Tool>>,
    /// The terminal.
    pub terminal: Arc<TerminalTool>,
    /// The browser.
    pub browser: Option<Browser>,
    /// Start-up warnings of the spec's MCP servers (a server that failed, a tool skipped).
    pub mcp_warnings: Vec<String>,
}

/// The tools an agent spec names, made through the server's catalog in `env` (the
/// conversation's workspace, directory and LLM); the server's terminal and browser slot are
/// put into it, so the PTY socket and the live view reach the tools' own. An unknown name or
/// refused params are a 422 naming the entry.
pub async fn build_tools(spec: &AgentSpec, server: &ServerConfig, env: ToolEnv) -> Result<ToolSet> {
    if let Some(mcp) = &spec.mcp_config {
        tandem_sdk::known_credentials().add(mcp_credentials(mcp));
    }
    let terminal = Arc::new(match server.terminal_soft_timeout {
        Some(t) => TerminalTool::new().with_soft_timeout(t),
        None => TerminalTool::new(),
    });
    if let Some(dir) = &env.conversation_dir {
        // A shell brought from another backend starts where it was.
        terminal.resume_from(dir.join(tandem_tools::terminal::RESUME_FILE));
    }
    let slot = BrowserSlot::new();
    let warnings = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&warnings);
    let mcp_warnings = tandem_mcp::McpWarnings(Arc::new(move |w: &str| {
        if let Ok(mut all) = sink.lock() {
            all.push(w.to_owned());
        }
    }));
    let env = env
        .with(Arc::clone(&terminal))
        .with(slot.clone())
        .with(mcp_warnings);
    let tools = tandem_tools::resolve_tools(spec, &server.tools, env)
        .await
        .map_err(|e| {
            let mut loc = vec!["body", "agent"];
            loc.extend(e.path.iter().map(String::as_str));
            ApiError::field(&loc, "value_error", e.message, e.value)
        })?;
    let mcp_warnings = warnings.lock().map(|w| w.clone()).unwrap_or_default();
    Ok(ToolSet {
        tools,
        terminal,
        browser: slot.get(),
        mcp_warnings,
    })
}

/// The values an MCP config hands its servers that may authenticate: stdio servers'
/// environment values, remote servers' header values (auth included), and the token of an
/// `Authorization`-style `scheme token` value on its own.
fn mcp_credentials(config: &Value) -> Vec<String> {
    let Ok((servers, _)) = tandem_mcp::parse_config(config) else {
        return Vec::new();
    };
    let mut values = Vec::new();
    for s in servers {
        match s.transport {
            tandem_mcp::Transport::Stdio { env, .. } => values.extend(env.into_values()),
            tandem_mcp::Transport::Http { headers, .. }
            | tandem_mcp::Transport::Sse { headers, .. } => {
                for v in headers.into_values() {
                    if let Some((_, token)) = v.trim().split_once(' ') {
                        values.push(token.trim().to_owned());
                    }
                    values.push(v);
                }
            }
        }
    }
    values
}

/// Records MCP start-up warnings on the conversation as a `ConversationStateUpdateEvent` with
/// key `mcp_warnings` (one line per failed server or skipped tool, naming it), so clients see
/// why a server's tools are missing.
async fn record_mcp_warnings(handle: &ConversationHandle, warnings: &[String]) {
    if warnings.is_empty() {
        return;
    }
    if let Err(e) = handle
        .record_state("mcp_warnings", Value::from(warnings.to_vec()))
        .await
    {
        tracing::warn!("cannot record the MCP warnings: {e}");
    }
}

async fn default_tool_set(server: &ServerConfig, env: ToolEnv) -> ToolSet {
    let spec = AgentSpec::default_for(LlmConfig::new("none"));
    match build_tools(&spec, server, env).await {
        Ok(t) => t,
        Err(_) => ToolSet {
            tools: Vec::new(),
            terminal: Arc::new(TerminalTool::new()),
            browser: None,
            mcp_warnings: Vec::new(),
        },
    }
}
