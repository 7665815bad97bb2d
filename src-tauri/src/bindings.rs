//! The commands as one tauri-specta builder: the app registers its invoke handler from it, and
//! `cargo run -p tandem-desktop --example gen_bindings` writes their TypeScript (every command,
//! its arguments, its result and the types they name) to [`BINDINGS_FILE`], or with `--check`
//! fails when the committed file differs. The UI never mirrors a command by hand.

use std::path::{Path, PathBuf};

use tauri_specta::{Builder, ErrorHandlingMode, collect_commands, collect_events};

use crate::commands;
use crate::sandbox_backend::SandboxStatus;

/// The generated file, relative to the repository root.
pub const BINDINGS_FILE: &str = "ui/src/host/bindings.gen.ts";

/// The header of the generated file.
const HEADER: &str = "// Generated from the Tauri commands of src-tauri (tandem-desktop) by\n\
// `cargo run -p tandem-desktop --example gen_bindings`. Do not edit: change the Rust side and\n\
// run it again (scripts/test.sh fails when this file is stale).";

/// What every command error looks like to the UI (see [`crate::Error`]'s `Serialize`).
#[derive(specta::Type)]
#[specta(remote = crate::error::Error)]
#[allow(dead_code)]
struct CommandError {
    /// A stable code: `keyring`, `io`, `bad_json`, `backend` or `tauri`.
    code: String,
    /// What went wrong, for people.
    message: String,
}

/// The app's commands and events. Errors reject the command's promise (as `invoke` does) carrying a
/// `CommandError`.
pub fn builder() -> Builder<tauri::Wry> {
    Builder::<tauri::Wry>::new()
        .commands(collect_commands![
            commands::keyring_get,
            commands::keyring_set,
            commands::keyring_delete,
            commands::keyring_status,
            commands::pick_folder,
            commands::backend_local,
            commands::backend_list,
            commands::backend_save,
            commands::session_last,
            commands::session_save,
            commands::sandbox_status,
            commands::sandbox_start,
            commands::sandbox_stop,
        ])
        .events(collect_events![SandboxStatus])
        .error_handling(ErrorHandlingMode::Throw)
        // The only 64-bit integers are inside serde_json::Value (the free-form fields of a saved
        // backend and the session), which JSON.parse reads as numbers anyway.
        .dangerously_cast_bigints_to_number()
}

/// The repository root (the parent of this crate's folder).
pub fn repo_root() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.parent().unwrap_or(crate_dir).to_path_buf()
}

/// The bindings could not be generated or written to `path`.
#[derive(Debug, thiserror::Error)]
#[error("cannot write {}: {reason}", path.display())]
pub struct ExportError {
    /// The file.
    pub path: std::path::PathBuf,
    /// What the generator said (boxed: the generator's error is large).
    pub reason: Box<specta_typescript::Error>,
}

/// Writes the TypeScript of [`builder`]'s commands to `path`.
pub fn export(path: &Path) -> std::result::Result<(), ExportError> {
    builder()
        .export(
            specta_typescript::Typescript::default().header(HEADER),
            path,
        )
        .map_err(|reason| ExportError {
            path: path.to_owned(),
            reason: Box::new(reason),
        })
}
