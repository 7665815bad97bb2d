//! `tandem-server`: the Tandem agent server. An axum router speaking the OpenHands agent-server
//! 1.58 protocol (REST under `/api`, the event WebSocket under `/sockets/events/{id}`, bash and
//! file endpoints) so the official Python client and our `RemoteWorkspace` can drive it, plus
//! Tandem's additions: the PTY socket, workspace tree/file/diff endpoints for the editor, an
//! SSE event stream, and an OpenAI-compatible `/v1` gateway. Every route is listed once in
//! [`routes`], which also yields the OpenAPI document served at `/openapi.json`.
//!
//! Depends on the engine (`tandem-sdk`, `tandem-tools`, `tandem-llm`, `tandem-protocol`); the
//! engine never depends on it. Entry points: [`Server::start`] (state, recovery, idle
//! eviction) then [`Server::router`] or [`Server::serve`]; [`ServerConfig::from_env`].

mod auth;
mod bash_commands;
mod checkpoint_routes;
mod children;
mod config;
mod conversations;
pub mod cors;
mod error;
mod event_routes;
mod extract;
mod files;
mod gateway;
mod info;
mod move_routes;
mod profile_routes;
mod registry;
mod replay_browser;
mod replay_routes;
pub mod routes;
mod secrets;
mod server_info;
mod sockets;
mod takeover;
pub mod ui;
mod workspace;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::response::IntoResponse;

pub use auth::{AUTH_TIMEOUT, CLOSE_NOT_FOUND, CLOSE_UNAUTHORIZED};
pub use config::ServerConfig;
pub use cors::{Cors, OriginError};
pub use error::{ApiError, Result};
pub use gateway::{CONVERSATION_HEADER, CONVERSATION_HEADER_ALIAS};
pub use info::{Redact, redact_agent};
pub use move_routes::folder_name;
pub use registry::{ReplayRecording, record_replay};
pub use replay_routes::write_trace;
pub use sockets::{MAX_MESSAGE as SOCKET_MAX_MESSAGE, UPSTREAM_MAX_MESSAGE};

use crate::bash_commands::BashService;
use crate::registry::Registry;

use crate::secrets::SecretStore;

/// Shared state of every handler. Cheap to clone.
#[derive(Clone)]
pub struct AppState(Arc<Inner>);

/// What the state holds.
pub struct Inner {
    /// The configuration.
    pub config: Arc<ServerConfig>,
    registry: Registry,
    bash: Arc<BashService>,
    secrets: SecretStore,
    gateway: gateway::Retained,
    started: Instant,
    last_request: Mutex<Instant>,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Inner {
    fn touch(&self) {
        *self.last_request.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    fn idle_secs(&self) -> f64 {
        self.last_request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .elapsed()
            .as_secs_f64()
            .floor()
    }
}

/// A dashed id from a catalog id (32 hex).
pub(crate) fn info_id(id: &str) -> String {
    uuid::Uuid::parse_str(id)
        .map(|u| u.hyphenated().to_string())
        .unwrap_or_else(|_| id.to_owned())
}

async fn openapi_json() -> axum::response::Response {
    Json(routes::openapi()).into_response()
}

/// A running server: its state and background tasks. Dropping it stops the idle sweeper;
/// call [`shutdown`](Self::shutdown) to close every conversation cleanly.
#[derive(Debug)]
pub struct Server {
    state: AppState,
    sweeper: tokio::task::JoinHandle<()>,
    /// Where the web UI served at `/ui/` comes from, when it is served.
    ui: Option<ui::UiSource>,
    /// Browser origins allowed to call the API (CORS).
    cors: Cors,
}

impl Server {
    /// Builds the state, opens conversations persisted as `running` (crash recovery) and
    /// starts the idle-conversation sweeper.
    pub async fn start(config: ServerConfig) -> Self {
        // Masked in every conversation should they ever reach an output.
        let known = tandem_sdk::known_credentials();
        known.add(&config.session_keys);
        known.add(
            config
                .all_profiles()
                .values()
                .filter_map(|p| p.api_key.as_ref()),
        );
        let config = Arc::new(config);
        let bash = Arc::new(BashService::new(
            config.bash_events_dir.clone(),
            config.workspace_path.clone(),
        ));
        let state = AppState(Arc::new(Inner {
            registry: Registry::new(Arc::clone(&config)),
            secrets: SecretStore::new(config.secrets_file.clone()),
            gateway: gateway::Retained::default(),
            bash,
            config: Arc::clone(&config),
            started: Instant::now(),
            last_request: Mutex::new(Instant::now()),
        }));
        if let Err(e) = std::fs::create_dir_all(&config.workspace_path) {
            tracing::warn!(
                "cannot create the default workspace {}: {e}",
                config.workspace_path.display()
            );
        }
        let sub_agents = registry::ServerSubAgents::new(Arc::downgrade(&state.0));
        state.registry.set_sub_agents(Arc::new(sub_agents));
        if let Some(home) = state.config.checkpoints_home.clone() {
            // A rewind a crash interrupted ends as the rewind, before any agent runs again; the
            // system store (in a sandbox) also takes the checkpoint that absorbs its start.
            let roots = state.config.checkpoints_system.clone();
            if !roots.is_empty() {
                let home = home.clone();
                let opened = tokio::task::spawn_blocking(move || {
                    tandem_checkpoint::Store::open_system(&home, &roots)
                })
                .await;
                match opened {
                    Ok(Ok(_)) => tracing::info!("outside effects are checkpointed"),
                    Ok(Err(e)) => tracing::warn!("outside effects are not checkpointed: {e}"),
                    Err(e) => tracing::warn!("outside effects are not checkpointed: {e}"),
                }
            }
            let finished =
                tokio::task::spawn_blocking(move || tandem_checkpoint::recover_all(&home)).await;
            for (store, result) in finished.unwrap_or_default() {
                match result {
                    Ok(()) => {
                        tracing::info!(store = %store.display(), "finished an interrupted rewind")
                    }
                    Err(e) => {
                        tracing::warn!(store = %store.display(), "an interrupted rewind could not be finished: {e}")
                    }
                }
            }
        }
        move_routes::sweep_imports(&config.conversations_path);
        state.registry.recover().await;
        let sweep_state = state.clone();
        let every = (config.idle_ttl / 4)
            .min(gateway::Retained::period(config.gateway_retention))
            .clamp(Duration::from_millis(50), Duration::from_secs(60));
        let sweeper = tokio::spawn(async move {
            let mut tick = tokio::time::interval(every);
            loop {
                tick.tick().await;
                sweep_state.registry.evict_idle().await;
                gateway::Retained::sweep(&sweep_state).await;
            }
        });
        Self {
            state,
            sweeper,
            ui: None,
            cors: Cors::default(),
        }
    }

    /// The shared state.
    pub fn state(&self) -> &AppState {
        &self.state
    }

    /// Serves the web UI from `source` (the build embedded in the binary, or one on disk) at
    /// `/ui/`, without a key: the page asks for one (or reads it from `#key=`) before it calls
    /// the API.
    pub fn with_ui(mut self, source: ui::UiSource) -> Self {
        self.ui = Some(source);
        self
    }

    /// Serves the web UI build in `dir` (its `index.html` and assets) at `/ui/`.
    pub fn with_ui_dir(self, dir: std::path::PathBuf) -> Self {
        self.with_ui(ui::UiSource::Dir(dir))
    }

    /// Lets browser pages on `cors`'s origins call the API (see [`Cors`]); without it no
    /// CORS headers are sent and browsers only reach the server from its own origin.
    pub fn with_cors(mut self, cors: Cors) -> Self {
        self.cors = cors;
        self
    }

    /// The full router: every route, authentication, body limits, the UI (and the browser
    /// redirect from `/` to it) when set, and CORS outermost.
    pub fn router(&self) -> Router {
        let api = routes::router(self.state.config.max_upload_bytes)
            // Inside the key check: a caller without the key is told that first.
            .layer(axum::middleware::from_fn_with_state(
                self.state.clone(),
                move_routes::moved_guard,
            ))
            .layer(axum::middleware::from_fn_with_state(
                self.state.clone(),
                replay_routes::read_only_guard,
            ))
            .layer(axum::middleware::from_fn_with_state(
                self.state.clone(),
                auth::require_key,
            ))
            .layer(DefaultBodyLimit::max(self.state.config.max_body_bytes))
            .layer(axum::middleware::from_fn(gateway::openai_errors))
            .with_state(self.state.clone());
        let app = match &self.ui {
            Some(source) => api
                .merge(ui::router(source.clone()))
                .layer(axum::middleware::from_fn(ui::redirect_browsers)),
            None => api,
        };
        self.cors.clone().apply(app)
    }

    /// Serves on `listener` until `shutdown` resolves, then closes every conversation. First
    /// it removes what dead Tandem servers left running (Chromium holding a profile, shells,
    /// MCP servers: `tandem_process::sweep`), never a live server's children.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let _ = tokio::task::spawn_blocking(tandem_process::sweep).await;
        let app = self.router();
        let result = axum::serve(listener, app)
            .with_graceful_shutdown(shutdown)
            .await;
        self.shutdown().await;
        result
    }

    /// Closes every live conversation (state saved, shells stopped).
    pub async fn shutdown(&self) {
        self.sweeper.abort();
        self.state.registry.shutdown().await;
    }

    /// Number of conversations whose run loop is active (stepping or waiting its turn).
    pub async fn running(&self) -> usize {
        self.state.registry.running().await
    }

    /// Runs stepping now and runs waiting for a slot.
    pub fn run_queue(&self) -> (usize, usize) {
        let gate = self.state.registry.run_gate();
        (gate.running(), gate.queued())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.sweeper.abort();
    }
}
