//! What the model reads about `task_tracker`, and the parsing of its arguments.

use serde_json::{Value, json};
use tandem_protocol::{Action, TaskItem, TaskTrackerAction};
use tandem_sdk::{ToolAnnotations, ToolDefinition};

use crate::args::{Args, type_name};

/// The name the model calls.
pub const NAME: &str = "task_tracker";

/// The commands.
pub const COMMANDS: [&str; 2] = ["view", "plan"];

/// The statuses a task may have.
pub const STATUSES: [&str; 3] = ["todo", "in_progress", "done"];

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
    ToolDefinition {
        name: NAME.to_owned(),
        description: DESCRIPTION.to_owned(),
        parameters: parameters(),
        asks_security_risk: true,
        annotations: ToolAnnotations {
            read_only: false,
            destructive: false,
            idempotent: true,
            open_world: false,
        },
        action_type: "TaskTrackerAction".to_owned(),
        observation_type: "TaskTrackerObservation".to_owned(),
    }
}

/// The argument schema (without `security_risk` and `summary`).
fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "description": "`view` shows the list; `plan` replaces it with `task_list`. View the list before changing it.",
                "enum": COMMANDS,
            },
            "task_list": {
                "type": "array",
                "description": "For `plan`: the complete new list of tasks.",
                "items": {
                    "type": "object",
                    "properties": {
                        "title": {
                            "type": "string",
                            "description": "Short name of the task.",
                        },
                        "notes": {
                            "type": "string",
                            "description": "Optional details about the task.",
                        },
                        "status": {
                            "type": "string",
                            "description": "Where the task stands: 'todo', 'in_progress' or 'done'.",
                            "enum": STATUSES,
                        },
                    },
                    "required": ["title"],
                },
            },
        },
    })
}

/// Builds a [`TaskTrackerAction`]; the error names the bad field (`task_list[1].status`).
pub fn parse(arguments: Value) -> Result<Action, String> {
    let args = Args::new(arguments)?;
    let command = args
        .optional_string("command")?
        .unwrap_or_else(|| "view".to_owned());
    if !COMMANDS.contains(&command.as_str()) {
        return Err(format!(
            "field `command` must be one of {}, got `{command}`",
            COMMANDS.join(", ")
        ));
    }
    let items = args.optional_array("task_list")?.unwrap_or_default();
    let task_list = items
        .iter()
        .enumerate()
        .map(|(i, item)| parse_item(i, item))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Action::TaskTracker(TaskTrackerAction {
        command,
        task_list,
        extra: Default::default(),
    }))
}

fn parse_item(i: usize, item: &Value) -> Result<TaskItem, String> {
    let Value::Object(_) = item else {
        return Err(format!(
            "field `task_list[{i}]` must be an object, got {}",
            type_name(item)
        ));
    };
    let args = Args::new(item.clone())?;
    let field = |name: &str| format!("task_list[{i}].{name}");
    let string = |name: &str| {
        args.optional_string(name)
            .map_err(|e| e.replacen(&format!("`{name}`"), &format!("`{}`", field(name)), 1))
    };
    let title =
        string("title")?.ok_or_else(|| format!("missing required field `{}`", field("title")))?;
    let task = TaskItem {
        title,
        notes: string("notes")?.unwrap_or_default(),
        status: string("status")?.unwrap_or_else(|| "todo".to_owned()),
    };
    validate_item(&task).map_err(|why| format!("field `{}` {why}", field(why.field)))?;
    Ok(task)
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
