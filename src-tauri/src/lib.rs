//! `tandem-desktop`: the Tandem desktop app. A thin Tauri 2 host, no engine logic:
//!
//! - at start it runs the engine and its agent-server router in-process on
//!   `127.0.0.1:<random port>` with a random session key ([`local_backend`]), with the scripted
//!   demo LLM when no provider is configured;
//! - it serves the UI (`ui/dist`, embedded at build time) in a window titled "Tandem", and the
//!   UI talks to the local backend over HTTP + WebSocket like to any agent server;
//! - Tauri commands exist only for native needs ([`commands`]): the OS keyring with its 0600
//!   file fallback ([`keystore`]), the folder picker, the saved backends and the last session
//!   ([`saved_backends`]), and the local backend's URL and key. Their TypeScript is generated
//!   from the Rust signatures ([`bindings`]).

pub mod bindings;
pub mod commands;
pub mod error;
pub mod keystore;
pub mod local_backend;
mod private_file;
pub mod saved_backends;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

pub use error::{Error, Result};

use crate::commands::DesktopState;
use crate::keystore::KeyStore;
use crate::local_backend::{LocalBackend, LocalBackendOptions};
use crate::saved_backends::SavedState;

/// The app's identifier (also the name of its config folder).
pub const APP_ID: &str = "dev.tandem.desktop";

/// Process-wide settings that must be in place before any thread starts: WebKitGTK's DMA-BUF
/// renderer paints blank windows on some GPUs and under Xvfb, so it is off unless the user
/// chose otherwise. Call first thing in `main`.
#[allow(unsafe_code)]
pub fn prepare_environment() {
    if std::env::var_os("WEBKIT_DISABLE_DMABUF_RENDERER").is_none() {
        // SAFETY: called at the top of `main`, before any other thread exists, so nothing can
        // read the environment concurrently.
        unsafe { std::env::set_var("WEBKIT_DISABLE_DMABUF_RENDERER", "1") };
    }
}

/// The app's config folder: `$XDG_CONFIG_HOME/dev.tandem.desktop` (as Tauri names it).
pub fn config_dir() -> PathBuf {
    dirs::config_dir()
        .or_else(|| dirs::home_dir().map(|h| h.join(".config")))
        .unwrap_or_else(std::env::temp_dir)
        .join(APP_ID)
}

/// Runs the app until its window closes.
pub fn run() -> Result<()> {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,tandem_desktop=info")),
        )
        .with_writer(std::io::stderr)
        .try_init();

    let config = config_dir();
    // The keyring probe may wait on D-Bus: run it beside the backend's start.
    let probe_dir = config.clone();
    let probe = std::thread::spawn(move || KeyStore::detect(&probe_dir));

    let started = LocalBackendOptions::from_env()
        .and_then(|opts| tauri::async_runtime::block_on(LocalBackend::start(opts)));
    let (local, mut backend) = match started {
        Ok(b) => (Ok(b.info().clone()), Some(b)),
        Err(e) => {
            tracing::error!("{e}");
            (Err(e.to_string()), None)
        }
    };
    if let Ok(info) = &local {
        eprintln!(
            "tandem-desktop: local backend on {}{}",
            info.base_url,
            if info.demo {
                " (demo mode: the scripted LLM plays the agent; add a provider in Settings, or set LLM_MODEL)"
            } else {
                ""
            }
        );
    }
    let keys = match probe.join() {
        Ok(k) => k,
        Err(_) => KeyStore::file(&config, "the keyring probe crashed"),
    };
    let state = DesktopState {
        keys: Arc::new(keys),
        saved: SavedState::new(&config),
        local,
    };

    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .manage(state)
        .invoke_handler(bindings::builder().invoke_handler())
        .build(tauri::generate_context!())?;

    app.run(move |_app, event| {
        if let tauri::RunEvent::Exit = event
            && let Some(mut b) = backend.take()
        {
            // Close conversations cleanly (state saved, shells stopped), but never hang exit.
            tauri::async_runtime::block_on(async move {
                let _ = tokio::time::timeout(Duration::from_secs(5), b.shutdown()).await;
            });
        }
    });
    Ok(())
}
