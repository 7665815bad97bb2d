//! `tandem-desktop`: the Tandem desktop app. A thin Tauri 2 host, no engine logic:
//!
//! - at start it runs the engine and its agent-server router in-process on
//!   `127.0.0.1:<random port>` with a random session key ([`local_backend`]), with the scripted
//!   demo LLM when no provider is configured;
//! - it serves the UI (`ui/dist`, embedded at build time) in a window titled "Tandem", and the
//!   UI talks to the local backend over HTTP + WebSocket like to any agent server;
//! - Tauri commands exist only for native needs ([`commands`]): the OS keyring with its 0600
//!   file fallback ([`keystore`]), the folder picker, the saved backends and the last session
//!   ([`saved_backends`]), the local backend's URL and key, and the Docker sandbox backend
//!   ([`sandbox_backend`]: started on a folder, connected to like a remote backend, removed on
//!   leaving it or quitting). Their TypeScript is generated from the Rust signatures
//!   ([`bindings`]).

pub mod bindings;
pub mod commands;
pub mod error;
pub mod keystore;
pub mod local_backend;
mod private_file;
pub mod sandbox_backend;
pub mod saved_backends;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tauri::Manager;

pub use error::{Error, Result};

use crate::commands::DesktopState;
use crate::keystore::KeyStore;
use crate::local_backend::{LocalBackend, LocalBackendOptions};
use crate::sandbox_backend::{SandboxBackend, SandboxConfig};
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

    let opts = LocalBackendOptions::from_env();
    // The sandbox's server gets the same LLM as the local backend.
    let llm = opts.as_ref().ok().and_then(|o| o.llm.clone());
    let started = opts.and_then(|opts| tauri::async_runtime::block_on(LocalBackend::start(opts)));
    let (local, mut backend) = match started {
        Ok(b) => (Ok(b.info().clone()), Some(b)),
        Err(e) => {
            tracing::error!("{e}");
            (Err(Arc::new(e)), None)
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
    let keys = Arc::new(keys);
    let sandbox = SandboxConfig::new(
        sandbox_backend::sandbox_env(
            llm.as_ref(),
            |name| std::env::var(name).ok(),
            &sandbox_backend::webview_origins(),
        ),
        llm.map(|l| l.model),
    );
    let state = DesktopState {
        keys: Arc::clone(&keys),
        saved: SavedState::new(&config),
        local,
    };

    let specta = bindings::builder();
    let app = tauri::Builder::default()
        .plugin(tauri_plugin_dialog::init())
        .manage(state)
        .invoke_handler(specta.invoke_handler())
        .setup(move |app| {
            specta.mount_events(app);
            let handle = app.handle().clone();
            app.manage(SandboxBackend::new(keys, sandbox, move |status| {
                use tauri_specta::Event;
                if let Err(e) = status.emit(&handle) {
                    tracing::debug!("cannot tell the UI about the sandbox: {e}");
                }
            }));
            Ok(())
        })
        .build(tauri::generate_context!())?;

    app.run(move |app, event| {
        if let tauri::RunEvent::Exit = event {
            if let Some(sandbox) = app.try_state::<SandboxBackend>() {
                // Never leave a container behind, but never hang exit either.
                tauri::async_runtime::block_on(sandbox.shutdown(Duration::from_secs(10)));
            }
            if let Some(mut b) = backend.take() {
                // Close conversations cleanly (state saved, shells stopped), but never hang exit.
                tauri::async_runtime::block_on(async move {
                    let _ = tokio::time::timeout(Duration::from_secs(5), b.shutdown()).await;
                });
            }
        }
    });
    Ok(())
}
