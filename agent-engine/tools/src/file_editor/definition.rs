//! What the model reads about `file_editor`: its description and argument schema, and the
//! parsing of its arguments into a [`FileEditorAction`].

use serde_json::{Value, json};
use tandem_protocol::{Action, FileEditorAction};
use tandem_sdk::{ToolAnnotations, ToolDefinition};

use crate::args::Args;

/// The name the model calls.
pub const NAME: &str = "file_editor";

/// The commands, in the order the schema lists them.
pub const COMMANDS: [&str; 5] = ["view", "create", "str_replace", "insert", "undo_edit"];

const DESCRIPTION: &str = "\
Views, creates and edits plain-text files in the workspace.
* Edits persist between calls; this tool remembers earlier versions so `undo_edit` can restore \
the previous content of a file.
* `view` on a file prints it with line numbers, like `cat -n`; on a directory it lists the \
entries up to two levels deep, leaving out hidden ones.
* `create` writes a new file (missing parent directories are made) and refuses to replace an \
existing one.
* `str_replace` replaces `old_str` with `new_str`. `old_str` must occur exactly once in the \
file, character for character, whitespace and indentation included; give a few lines of \
surrounding context to make it unique. `new_str` must differ from `old_str`.
* `insert` adds `new_str` after line `insert_line` (0 puts it at the top).
* `undo_edit` reverts the most recent edit of the file at `path`.
* Long output is cut and marked `<response clipped>`; view a smaller `view_range` then.
* Paths must be absolute and inside the workspace. Binary files and very large files are \
refused; use the terminal for those and for anything outside the workspace.

Look at a file before editing it, keep the code working after every edit, and when several \
edits to one file are needed, send them together as several calls in one message.";

/// The tool definition.
pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: NAME.to_owned(),
        description: DESCRIPTION.to_owned(),
        parameters: parameters(),
        asks_security_risk: true,
        annotations: ToolAnnotations {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: false,
        },
        action_type: "FileEditorAction".to_owned(),
        observation_type: "FileEditorObservation".to_owned(),
    }
}

/// The argument schema (without `security_risk` and `summary`, which the agent adds).
fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "description": "What to do: `view`, `create`, `str_replace`, `insert` or `undo_edit`.",
                "enum": COMMANDS,
            },
            "path": {
                "type": "string",
                "description": "Absolute path of the file or directory, e.g. `/workspace/src/main.rs`.",
            },
            "file_text": {
                "type": "string",
                "description": "For `create`: the whole content of the new file.",
            },
            "old_str": {
                "type": "string",
                "description": "For `str_replace`: the exact text to replace; it must occur once in the file.",
            },
            "new_str": {
                "type": "string",
                "description": "For `str_replace`: the replacement (empty or absent deletes `old_str`). For `insert`: the text to insert.",
            },
            "insert_line": {
                "type": "integer",
                "description": "For `insert`: the line after which `new_str` goes; 0 inserts at the top of the file.",
            },
            "view_range": {
                "type": "array",
                "items": { "type": "integer" },
                "description": "For `view` of a file: `[first, last]` line numbers to show, counted from 1; a last line of -1 means the end of the file. Without it the whole file is shown.",
            },
        },
        "required": ["command", "path"],
    })
}

/// Builds a [`FileEditorAction`] from the model's arguments; the error names the bad field.
pub fn parse(arguments: Value) -> Result<Action, String> {
    let args = Args::new(arguments)?;
    let command = args.required_string("command")?;
    if !COMMANDS.contains(&command.as_str()) {
        return Err(format!(
            "field `command` must be one of {}, got `{command}`",
            COMMANDS.join(", ")
        ));
    }
    let action = FileEditorAction {
        command,
        path: args.required_string("path")?,
        file_text: args.optional_string("file_text")?,
        old_str: args.optional_string("old_str")?,
        new_str: args.optional_string("new_str")?,
        insert_line: args.optional_int("insert_line")?,
        view_range: args.optional_int_list("view_range")?,
        extra: Default::default(),
    };
    Ok(Action::FileEditor(action))
}
