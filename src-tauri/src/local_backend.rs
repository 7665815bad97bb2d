//! The local backend: the engine and its agent-server router (`tandem-server`) in this process,
//! on `127.0.0.1:<random port>` with a random session key, so nothing on another machine can
//! reach it and nothing on this one can drive it without the key. With no LLM provider
//! configured it runs the scripted demo LLM (on loopback too) and says so.
//!
//! The UI is served from Tauri's own scheme, so the server gets tandem-server's CORS layer with
//! exactly the webview's origins (and the Vite dev server's on loopback in dev builds).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Serialize;
use tandem_host::DemoLlm;
use tandem_host::settings::{SettingsFile, server_llm, tandem_home};
use tandem_protocol::LlmConfig;
use tandem_server::{Cors, Server, ServerConfig};
use tokio::sync::oneshot;

use crate::error::{Error, Result};

/// The model name the demo LLM answers to (the UI recognises it and shows a demo badge).
pub use tandem_host::DEMO_MODEL;

/// What the UI needs to talk to the local backend (the `backend_local` command's answer, named
/// `LocalBackend` in the commands' TypeScript).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, specta::Type)]
#[serde(rename = "LocalBackend", rename_all = "camelCase")]
pub struct LocalBackendInfo {
    /// Root URL, e.g. `http://127.0.0.1:41234`.
    pub base_url: String,
    /// The session key (`X-Session-API-Key`).
    pub key: String,
    /// True when the scripted demo LLM plays the agent.
    pub demo: bool,
    /// The default workspace folder, for conversations created without one.
    pub workspace: String,
    /// The model of the server's default LLM profile.
    pub model: String,
}

/// Where the local backend keeps its data and which LLM it uses.
#[derive(Debug, Clone)]
pub struct LocalBackendOptions {
    /// `$TANDEM_HOME`: conversations, default workspace, settings.
    pub home: PathBuf,
    /// The default LLM; `None` runs the demo.
    pub llm: Option<LlmConfig>,
}

impl LocalBackendOptions {
    /// `$TANDEM_HOME` (default `~/.tandem`; an error without it and without a home directory)
    /// and the LLM an agent server takes by default ([`server_llm`]): `LLM_MODEL` /
    /// `LLM_BASE_URL` / `LLM_API_KEY`, else the `llm` of `$TANDEM_HOME/settings.json`, else
    /// none (demo). A settings file that is broken, has unknown fields or names an LLM that
    /// cannot work never stops the app: it is logged as a warning, and what cannot be used is
    /// ignored (the demo plays the agent when no usable LLM is left).
    pub fn from_env() -> Result<Self> {
        let home = tandem_home().map_err(|e| Error::Backend(e.to_string()))?;
        let (llm, warnings) = default_llm(&home);
        for warning in warnings {
            tracing::warn!("{warning}");
        }
        Ok(Self { home, llm })
    }
}

/// The default LLM under `home`, and what was ignored to find it (the desktop's lenient policy).
fn default_llm(home: &Path) -> (Option<LlmConfig>, Vec<String>) {
    let (settings, warning) = SettingsFile::load_lenient(home);
    let mut warnings: Vec<String> = warning.into_iter().collect();
    let llm = server_llm(&settings).unwrap_or_else(|e| {
        warnings.push(format!(
            "{e}; the configured LLM is ignored and the demo plays the agent"
        ));
        None
    });
    (llm, warnings)
}

/// A running local backend. Dropping it stops the demo LLM; call
/// [`shutdown`](Self::shutdown) to close the conversations cleanly first.
#[derive(Debug)]
pub struct LocalBackend {
    info: LocalBackendInfo,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    // Kept alive for as long as the backend runs.
    _demo: Option<DemoLlm>,
}

impl LocalBackend {
    /// Starts the server on a free loopback port. Must run inside a multi-threaded Tokio
    /// runtime that outlives it (Tauri's).
    pub async fn start(opts: LocalBackendOptions) -> Result<Self> {
        let mut config = ServerConfig::from_env(&opts.home);
        let key = random_key();
        config.session_keys = vec![key.clone()];
        config.profiles.clear();
        let (llm, demo) = match opts.llm {
            Some(llm) => (llm, None),
            None => {
                let demo = DemoLlm::start()
                    .map_err(|e| Error::Backend(format!("cannot start the demo LLM: {e}")))?;
                tracing::info!(
                    "demo mode: a scripted LLM on {} plays the agent",
                    demo.base_url()
                );
                (demo.config().clone(), Some(demo))
            }
        };
        let model = llm.model.clone();
        config.profiles.insert("default".into(), llm);
        let workspace = config.workspace_path.to_string_lossy().into_owned();
        std::fs::create_dir_all(&config.workspace_path)
            .map_err(|e| Error::io(format!("creating {workspace}"), e))?;

        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .map_err(|e| Error::Backend(format!("cannot bind 127.0.0.1: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::Backend(e.to_string()))?;
        let server = Server::start(config).await.with_cors(webview_cors());
        let router = server.router();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let served = axum::serve(listener, router).with_graceful_shutdown(async move {
                let _ = stopped.await;
            });
            if let Err(e) = served.await {
                tracing::error!("local backend stopped: {e}");
            }
            server.shutdown().await;
        });
        let info = LocalBackendInfo {
            base_url: format!("http://{addr}"),
            key,
            demo: demo.is_some(),
            workspace,
            model,
        };
        tracing::info!(
            "local backend on {}{}",
            info.base_url,
            if info.demo { " (demo LLM)" } else { "" }
        );
        Ok(Self {
            info,
            stop: Some(stop),
            task: Some(task),
            _demo: demo,
        })
    }

    /// URL, key and mode, for the UI.
    pub fn info(&self) -> &LocalBackendInfo {
        &self.info
    }

    /// Stops accepting requests and closes every conversation (state saved, shells stopped).
    pub async fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

/// 256 random bits as 64 hex digits (two v4 UUIDs: 244 random bits).
fn random_key() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// The webview's origins on each platform.
pub(crate) const WEBVIEW_ORIGINS: [&str; 3] = [
    "tauri://localhost",
    "http://tauri.localhost",
    "https://tauri.localhost",
];

/// Origins the webview may call the local backend from: its own, and in dev builds the Vite
/// dev server's on loopback (any port).
fn webview_cors() -> Cors {
    // The constant origins are valid; an empty policy (no CORS) would only show as a UI that
    // cannot connect.
    let cors = Cors::new(WEBVIEW_ORIGINS).unwrap_or_default();
    if cfg!(feature = "custom-protocol") {
        cors
    } else {
        cors.with_loopback_dev_servers()
    }
}

/// Whether the webview on `origin` may call the local backend.
#[cfg(test)]
fn origin_allowed(origin: &str) -> bool {
    webview_cors().allows(origin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_webview_origins_are_valid() {
        assert_eq!(
            Cors::new(WEBVIEW_ORIGINS).unwrap().origins(),
            WEBVIEW_ORIGINS
        );
    }

    #[test]
    fn only_the_webview_origins_are_allowed() {
        assert!(origin_allowed("tauri://localhost"));
        assert!(origin_allowed("http://tauri.localhost"));
        assert!(origin_allowed("https://tauri.localhost"));
        assert!(!origin_allowed("http://evil.example"));
        assert!(!origin_allowed("null"));
        assert_eq!(
            origin_allowed("http://localhost:5173"),
            cfg!(not(feature = "custom-protocol"))
        );
    }

    #[test]
    fn a_bad_settings_file_never_stops_the_desktop() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("settings.json");
        assert_eq!(default_llm(dir.path()), (None, Vec::new()));

        // Unknown fields are ignored with a warning; the known ones still count.
        std::fs::write(
            &p,
            r#"{"llm": {"model": "openai/gpt-5", "api_key": "sk-1"}, "theme": "dark"}"#,
        )
        .unwrap();
        let (llm, warnings) = default_llm(dir.path());
        let c = llm.unwrap();
        assert_eq!(
            (c.model.as_str(), c.api_key.as_deref(), c.base_url),
            ("openai/gpt-5", Some("sk-1"), None)
        );
        assert!(warnings[0].contains("`theme`"), "{warnings:?}");

        // Broken JSON, and an LLM that cannot work: the demo, with the reason logged.
        for text in [
            r#"{"llm": "#,
            r#"{"llm": {"model": "openai/x", "base_url": "ftp://x"}}"#,
        ] {
            std::fs::write(&p, text).unwrap();
            let (llm, warnings) = default_llm(dir.path());
            assert!(llm.is_none());
            assert!(
                warnings[0].contains("settings") || warnings[0].contains("ftp://x"),
                "{warnings:?}"
            );
        }
    }

    #[test]
    fn keys_are_long_and_random() {
        let (a, b) = (random_key(), random_key());
        assert_eq!(a.len(), 64);
        assert_ne!(a, b);
    }
}
