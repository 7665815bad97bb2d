//! The Tauri commands: only what a browser cannot do. Their TypeScript (names, arguments,
//! results) is generated from these signatures into `ui/src/host/bindings.gen.ts` by
//! [`crate::bindings`]; `ui/src/host/tauri.ts` calls them through it.

use std::sync::Arc;
use std::time::Duration;

use tauri::State;
use tauri_plugin_dialog::DialogExt;

use crate::error::{Error, Result};
use crate::keystore::{DEFAULT_SERVICE, KeyStore, KeyringStatus};
use crate::local_backend::LocalBackendInfo;
use crate::sandbox_backend::{SandboxBackend, SandboxStatus};
use crate::saved_backends::{LastSession, SavedBackend, SavedState};

/// How long a keyring call may take before the UI hears an error (a locked keyring can wait
/// on a prompt forever).
const KEYRING_TIMEOUT: Duration = Duration::from_secs(10);

/// What the commands share, managed by Tauri.
#[derive(Debug)]
pub struct DesktopState {
    /// The secrets store.
    pub keys: Arc<KeyStore>,
    /// Saved backends and the last session.
    pub saved: SavedState,
    /// The in-process backend, or why it could not start.
    pub local: std::result::Result<LocalBackendInfo, Arc<Error>>,
}

async fn with_keys<T: Send + 'static>(
    state: &DesktopState,
    f: impl FnOnce(&KeyStore) -> Result<T> + Send + 'static,
) -> Result<T> {
    let keys = Arc::clone(&state.keys);
    let job = tauri::async_runtime::spawn_blocking(move || f(&keys));
    match tokio::time::timeout(KEYRING_TIMEOUT, job).await {
        Ok(Ok(r)) => r,
        Ok(Err(e)) => Err(Error::Keyring(format!("keyring call failed: {e}"))),
        Err(_) => Err(Error::Keyring(format!(
            "the keyring did not answer within {} s",
            KEYRING_TIMEOUT.as_secs()
        ))),
    }
}

fn service_or_default(service: Option<String>) -> String {
    service
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| DEFAULT_SERVICE.to_owned())
}

/// The secret of `account` (under `service`, default `tandem`), or null.
#[tauri::command]
#[specta::specta]
pub async fn keyring_get(
    state: State<'_, DesktopState>,
    account: String,
    service: Option<String>,
) -> Result<Option<String>> {
    let service = service_or_default(service);
    with_keys(&state, move |k| k.get(&service, &account)).await
}

/// Stores `secret` for `account`; answers the keyring status so the UI can warn at once when
/// it went to the fallback file.
#[tauri::command]
#[specta::specta]
pub async fn keyring_set(
    state: State<'_, DesktopState>,
    account: String,
    secret: String,
    service: Option<String>,
) -> Result<KeyringStatus> {
    let service = service_or_default(service);
    with_keys(&state, move |k| {
        k.set(&service, &account, &secret).map(|()| k.status())
    })
    .await
}

/// Forgets the secret of `account`.
#[tauri::command]
#[specta::specta]
pub async fn keyring_delete(
    state: State<'_, DesktopState>,
    account: String,
    service: Option<String>,
) -> Result<()> {
    let service = service_or_default(service);
    with_keys(&state, move |k| k.delete(&service, &account)).await
}

/// Where secrets go: `{backend: "os" | "file", warning, cause, file}`.
#[tauri::command]
#[specta::specta]
pub fn keyring_status(state: State<'_, DesktopState>) -> KeyringStatus {
    state.keys.status()
}

/// A native folder picker; null when cancelled.
#[tauri::command]
#[specta::specta]
pub async fn pick_folder(app: tauri::AppHandle) -> Result<Option<String>> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.dialog()
        .file()
        .set_title("Choose a workspace folder")
        .pick_folder(move |p| {
            let _ = tx.send(p);
        });
    let picked = rx.await.ok().flatten();
    Ok(picked
        .and_then(|p| p.into_path().ok())
        .map(|p| p.to_string_lossy().into_owned()))
}

/// The in-process backend: `{baseUrl, key, demo, workspace, model}`.
#[tauri::command]
#[specta::specta]
pub fn backend_local(state: State<'_, DesktopState>) -> Result<LocalBackendInfo> {
    state.local.clone().map_err(|e| match &*e {
        // Said once: not "local backend: local backend: …".
        Error::Backend(reason) => Error::Backend(reason.clone()),
        other => Error::Backend(other.to_string()),
    })
}

/// The saved remote backends.
#[tauri::command]
#[specta::specta]
pub fn backend_list(state: State<'_, DesktopState>) -> Result<Vec<SavedBackend>> {
    state.saved.backends()
}

/// Replaces the saved remote backends.
#[tauri::command]
#[specta::specta]
pub fn backend_save(state: State<'_, DesktopState>, backends: Vec<SavedBackend>) -> Result<()> {
    state.saved.save_backends(&backends)
}

/// Where the last session left off (backend, workspace, conversation).
#[tauri::command]
#[specta::specta]
pub fn session_last(state: State<'_, DesktopState>) -> Result<LastSession> {
    state.saved.last_session()
}

/// Records where the session is now; fields left out stay as they were.
#[tauri::command]
#[specta::specta]
pub fn session_save(state: State<'_, DesktopState>, session: LastSession) -> Result<LastSession> {
    state.saved.update_last_session(session)
}

/// The Docker sandbox backend: `{seq, state}`; every change also arrives as the
/// `sandbox-status` event.
#[tauri::command]
#[specta::specta]
pub fn sandbox_status(sandbox: State<'_, SandboxBackend>) -> SandboxStatus {
    sandbox.status()
}

/// Starts a Docker sandbox on the host folder `workspace` (removing the one running), building
/// its image first when missing. Answers the first step at once; the others, up to
/// `connected` or `failed`, arrive as `sandbox-status` events.
#[tauri::command]
#[specta::specta]
pub async fn sandbox_start(
    sandbox: State<'_, SandboxBackend>,
    workspace: String,
) -> Result<SandboxStatus> {
    Ok(sandbox.start(workspace).await)
}

/// Stops and removes the Docker sandbox (or cancels its start) and forgets its key.
#[tauri::command]
#[specta::specta]
pub async fn sandbox_stop(sandbox: State<'_, SandboxBackend>) -> Result<SandboxStatus> {
    Ok(sandbox.stop().await)
}
