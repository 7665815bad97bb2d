//! The `task_tracker` tool: the agent's task list, replaced whole by `plan` and shown by
//! `view`.
//!
//! With a conversation directory the list lives in its `TASKS.json` (a pretty-printed JSON
//! array, as upstream writes it), read on every call so it survives restarts and is shared by
//! every instance working on that conversation; without one it is kept in memory.

use std::path::Path;
use std::sync::Mutex;

use futures::future::BoxFuture;
use tandem_protocol::{Content, TaskItem, TaskTrackerAction, TaskTrackerObservation};
use tandem_sdk::{ToolContext, ToolDefinition, ToolInputError, TypedTool};

pub mod definition;

pub use definition::NAME;

/// The file holding the list inside the conversation directory.
pub const TASKS_FILE: &str = "TASKS.json";

/// The task tracker.
pub struct TaskTrackerTool {
    definition: ToolDefinition,
    /// The list when the conversation is not persisted.
    in_memory: Mutex<Vec<TaskItem>>,
}

impl std::fmt::Debug for TaskTrackerTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskTrackerTool").finish_non_exhaustive()
    }
}

impl Default for TaskTrackerTool {
    fn default() -> Self {
        Self::new()
    }
}

impl TaskTrackerTool {
    /// A task tracker with an empty in-memory list.
    pub fn new() -> Self {
        Self {
            definition: definition::definition(),
            in_memory: Mutex::default(),
        }
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, Vec<TaskItem>> {
        self.in_memory
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The current list: `TASKS.json` when there is a conversation directory.
    async fn current(&self, dir: Option<&Path>) -> Vec<TaskItem> {
        match dir {
            Some(dir) => load(&dir.join(TASKS_FILE)).await,
            None => self.memory().clone(),
        }
    }

    /// Replaces the list; the error says why it could not be saved.
    async fn replace(&self, dir: Option<&Path>, tasks: &[TaskItem]) -> Result<(), SaveError> {
        match dir {
            Some(dir) => save(dir, tasks).await,
            None => {
                *self.memory() = tasks.to_vec();
                Ok(())
            }
        }
    }
}

impl TypedTool for TaskTrackerTool {
    type Input = TaskTrackerAction;
    type Output = TaskTrackerObservation;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn validate(&self, action: &TaskTrackerAction) -> Result<(), ToolInputError> {
        definition::validate(action)
    }

    fn run<'a>(
        &'a self,
        action: &'a TaskTrackerAction,
        ctx: ToolContext,
    ) -> BoxFuture<'a, TaskTrackerObservation> {
        Box::pin(async move {
            let dir = ctx.conversation_dir.as_deref();
            match action.command.as_str() {
                "plan" => {
                    if let Some((i, why)) = action
                        .task_list
                        .iter()
                        .enumerate()
                        .find_map(|(i, t)| definition::validate_item(t).err().map(|w| (i, w)))
                    {
                        return observation(
                            "plan",
                            format!(
                                "Task list not updated: `task_list[{i}].{}` {why}.",
                                why.field
                            ),
                            self.current(dir).await,
                            true,
                        );
                    }
                    if let Err(why) = self.replace(dir, &action.task_list).await {
                        return observation(
                            "plan",
                            format!("Task list not updated: {why}"),
                            self.current(dir).await,
                            true,
                        );
                    }
                    observation(
                        "plan",
                        format!(
                            "Task list has been updated with {} item(s).",
                            action.task_list.len()
                        ),
                        action.task_list.clone(),
                        false,
                    )
                }
                "view" => {
                    let tasks = self.current(dir).await;
                    if tasks.is_empty() {
                        observation(
                            "view",
                            "No task list found. Use the \"plan\" command to create one."
                                .to_owned(),
                            tasks,
                            false,
                        )
                    } else {
                        observation("view", render(&tasks), tasks, false)
                    }
                }
                other => observation(
                    other,
                    format!(
                        "Unknown command: {other}. Supported commands are \"view\" and \"plan\"."
                    ),
                    Vec::new(),
                    true,
                ),
            }
        })
    }
}

fn observation(
    command: &str,
    text: String,
    task_list: Vec<TaskItem>,
    is_error: bool,
) -> TaskTrackerObservation {
    TaskTrackerObservation {
        content: vec![Content::text(text)],
        is_error,
        command: command.to_owned(),
        task_list,
        extra: Default::default(),
    }
}

/// The list as the model reads it on `view` (upstream's layout).
fn render(tasks: &[TaskItem]) -> String {
    let mut out = String::from("# Task List\n\n");
    for (i, task) in tasks.iter().enumerate() {
        let icon = match task.status.as_str() {
            "in_progress" => "🔄",
            "done" => "✅",
            _ => "⏳",
        };
        out.push_str(&format!("{}. {icon} {}\n", i + 1, task.title));
        if !task.notes.is_empty() {
            out.push_str(&format!("   {}\n", task.notes));
        }
        out.push('\n');
    }
    out.trim().to_owned()
}

/// The saved list; missing means empty, and an unreadable file is logged and read as empty.
async fn load(file: &Path) -> Vec<TaskItem> {
    let text = match tokio::fs::read_to_string(file).await {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(err) => {
            tracing::warn!(file = %file.display(), %err, "cannot read the task list");
            return Vec::new();
        }
    };
    serde_json::from_str(&text).unwrap_or_else(|err| {
        tracing::warn!(file = %file.display(), %err, "the task list is not valid JSON");
        Vec::new()
    })
}

/// Writes the list as a 2-space indented array with [`tandem_sdk::atomic_write`] (temp file,
/// fsync, rename; mode 0600), so a crash or a concurrent save never leaves half a list.
async fn save(dir: &Path, tasks: &[TaskItem]) -> Result<(), SaveError> {
    let json = serde_json::to_string_pretty(tasks)?;
    let file = dir.join(TASKS_FILE);
    let failed = |source: Box<dyn std::error::Error + Send + Sync>| SaveError::Write {
        file: file.clone(),
        source,
    };
    tokio::fs::create_dir_all(dir)
        .await
        .map_err(|e| failed(e.into()))?;
    let target = file.clone();
    tokio::task::spawn_blocking(move || tandem_sdk::atomic_write(&target, json.as_bytes()))
        .await
        .map_err(|e| failed(e.into()))?
        .map_err(|e| failed(e.into()))
}

/// Why the task list could not be saved (the model reads it after `Task list not updated: `).
#[derive(Debug, thiserror::Error)]
enum SaveError {
    /// The list could not be serialised.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// `TASKS.json` could not be written.
    #[error("cannot write {}: {source}", file.display())]
    Write {
        /// The file.
        file: std::path::PathBuf,
        /// The cause: creating the folder, the write, or its thread.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}
