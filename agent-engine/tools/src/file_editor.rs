//! The `file_editor` tool: view, create and edit text files inside the workspace, with a
//! per-file undo history kept in the tool instance.
//!
//! Layout: [`definition`] (what the model reads), `paths` (absolute paths
//! confined to the workspace, symlinks followed), `text` (reading, `cat -n` rendering,
//! clipping), `view` and `edit` (the commands), `history` (undo). Failures come back as an
//! observation with `is_error: true` whose text says what to do instead.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use futures::future::BoxFuture;
use tandem_protocol::{Content, FileEditorAction, FileEditorObservation};
use tandem_sdk::{ToolContext, ToolDefinition, TypedTool};

pub mod definition;
mod edit;
mod error;
mod history;
pub(crate) mod paths;
mod text;
mod view;

pub use definition::NAME;
pub use text::DEFAULT_MAX_FILE_SIZE;

use error::EditorError;
use history::FileHistory;

/// The file editor. Cheap to share: the undo history sits behind a lock, which also keeps two
/// edits of the same conversation from interleaving.
pub struct FileEditorTool {
    definition: ToolDefinition,
    history: Arc<Mutex<FileHistory>>,
    max_file_size: u64,
}

impl std::fmt::Debug for FileEditorTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileEditorTool")
            .field("max_file_size", &self.max_file_size)
            .finish_non_exhaustive()
    }
}

impl Default for FileEditorTool {
    fn default() -> Self {
        Self::new()
    }
}

impl FileEditorTool {
    /// A file editor with an empty history and the default size limit.
    pub fn new() -> Self {
        Self {
            definition: definition::definition(),
            history: Arc::default(),
            max_file_size: DEFAULT_MAX_FILE_SIZE,
        }
    }

    /// The same editor refusing files larger than `bytes` for view and edit.
    pub fn with_max_file_size(mut self, bytes: u64) -> Self {
        self.max_file_size = bytes;
        self
    }
}

/// What a successful command produced.
#[derive(Debug)]
struct Outcome {
    text: String,
    prev_exist: bool,
    old_content: Option<String>,
    new_content: Option<String>,
}

impl TypedTool for FileEditorTool {
    type Input = FileEditorAction;
    type Output = FileEditorObservation;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn run<'a>(
        &'a self,
        action: &'a FileEditorAction,
        ctx: ToolContext,
    ) -> BoxFuture<'a, FileEditorObservation> {
        Box::pin(async move {
            let history = Arc::clone(&self.history);
            let max_size = self.max_file_size;
            let owned = action.clone();
            let root = ctx.working_dir.clone();
            let ran = tokio::task::spawn_blocking(move || {
                run(&owned, &root, max_size, &mut lock(&history))
            })
            .await;
            match ran {
                Ok(Ok(outcome)) => success(action, outcome),
                Ok(Err(err)) => failure(&action.command, Some(&action.path), err),
                Err(join) => failure(
                    &action.command,
                    Some(&action.path),
                    EditorError::other(format!("The file editor stopped unexpectedly: {join}")),
                ),
            }
        })
    }
}

/// The history, even if a previous holder panicked (its content is still consistent).
fn lock(history: &Mutex<FileHistory>) -> MutexGuard<'_, FileHistory> {
    history
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Runs one command against the workspace at `root`.
fn run(
    action: &FileEditorAction,
    root: &Path,
    max_size: u64,
    history: &mut FileHistory,
) -> Result<Outcome, EditorError> {
    let shown = action.path.as_str();
    let command = action.command.as_str();
    if !definition::COMMANDS.contains(&command) {
        return Err(EditorError::other(format!(
            "Unrecognized command {command}. The allowed commands for the file_editor tool are: {}",
            definition::COMMANDS.join(", ")
        )));
    }
    let real: PathBuf = paths::resolve_in_workspace(shown, root)?;
    if command != "create" && !real.exists() {
        return Err(EditorError::invalid(
            "path",
            shown,
            format!("The path {shown} does not exist. Please provide a valid path."),
        ));
    }
    if command != "view" && real.is_dir() {
        return Err(EditorError::invalid(
            "path",
            shown,
            format!(
                "The path {shown} is a directory and only the `view` command can be used on \
                 directories."
            ),
        ));
    }
    match command {
        "view" => Ok(Outcome {
            text: view::view(&real, shown, action.view_range.as_deref(), max_size)?,
            prev_exist: true,
            old_content: None,
            new_content: None,
        }),
        "create" => edit::create(&real, shown, action.file_text.as_deref(), history),
        "str_replace" => edit::str_replace(
            &real,
            shown,
            action.old_str.as_deref(),
            action.new_str.as_deref(),
            max_size,
            history,
        ),
        "insert" => edit::insert(
            &real,
            shown,
            action.insert_line,
            action.new_str.as_deref(),
            max_size,
            history,
        ),
        _ => edit::undo(&real, shown, max_size, history),
    }
}

fn success(action: &FileEditorAction, outcome: Outcome) -> FileEditorObservation {
    FileEditorObservation {
        content: vec![Content::text(outcome.text)],
        is_error: false,
        command: action.command.clone(),
        path: Some(action.path.clone()),
        prev_exist: outcome.prev_exist,
        old_content: outcome.old_content,
        new_content: outcome.new_content,
        extra: Default::default(),
    }
}

fn failure(command: &str, path: Option<&str>, err: EditorError) -> FileEditorObservation {
    FileEditorObservation {
        content: vec![Content::text(err.0)],
        is_error: true,
        command: command.to_owned(),
        path: path.map(str::to_owned),
        prev_exist: true,
        old_content: None,
        new_content: None,
        extra: Default::default(),
    }
}
