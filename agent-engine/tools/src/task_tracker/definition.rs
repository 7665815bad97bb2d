//! What the model reads about `task_tracker` (its arguments are [`TaskTrackerAction`]'s
//! fields), and the checks of a task the schema cannot express.

use tandem_protocol::{TaskItem, TaskTrackerAction, TaskTrackerObservation};
use tandem_sdk::{ToolAnnotations, ToolDefinition, ToolInputError};

/// The name the model calls.
pub const NAME: &str = "task_tracker";

/// The commands.
pub const COMMANDS: [&str; 2] = TaskTrackerAction::COMMANDS;

/// The statuses a task may have.
pub const STATUSES: [&str; 3] = TaskItem::STATUSES;

const DESCRIPTION: &str = "\
Keeps a structured task list for the current piece of work, so progress stays visible to you \
and to the user.

Use it when the work has several steps or parts, when the user asks for a plan, or when new \
requirements arrive while you work. Skip it for a single small change or a plain question.

Commands:
* `view` shows the current list.
* `plan` replaces the whole list with `task_list`; send every task each time, not only the \
changed ones. Look at the list with `view` before changing it.

Each task has a short `title`, optional `notes` and a `status`:
* `todo`: not started;
* `in_progress`: being worked on; keep only one task in progress at a time;
* `done`: finished and verified. Do not mark a task done while tests fail, errors remain or \
the work is partial; keep it in progress and add tasks for what you discovered.

Update statuses as soon as they change, remove tasks that no longer apply, and write titles \
that say concretely what will be done.";

/// The tool definition.
pub fn definition() -> ToolDefinition {
    let annotations = ToolAnnotations {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    ToolDefinition::typed::<TaskTrackerAction, TaskTrackerObservation>(
        NAME,
        DESCRIPTION,
        annotations,
        true,
    )
}

/// Checks every task of a `plan`; the error names the field (`task_list[0].title`).
pub fn validate(action: &TaskTrackerAction) -> Result<(), ToolInputError> {
    for (i, task) in action.task_list.iter().enumerate() {
        validate_item(task).map_err(|why| {
            ToolInputError::invalid(format!("task_list[{i}].{}", why.field), why.message)
        })?;
    }
    Ok(())
}

/// What is wrong with a task, and in which field.
pub struct ItemProblem {
    /// `title` or `status`.
    pub field: &'static str,
    message: String,
}

impl std::fmt::Display for ItemProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Checks that the title is not blank and the status is a known one.
pub fn validate_item(task: &TaskItem) -> Result<(), ItemProblem> {
    if task.title.trim().is_empty() {
        return Err(ItemProblem {
            field: "title",
            message: "must not be empty".to_owned(),
        });
    }
    if !STATUSES.contains(&task.status.as_str()) {
        return Err(ItemProblem {
            field: "status",
            message: format!(
                "must be one of {}, got `{}`",
                STATUSES.join(", "),
                task.status
            ),
        });
    }
    Ok(())
}
