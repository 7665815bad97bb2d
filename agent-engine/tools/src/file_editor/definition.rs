//! What the model reads about `file_editor`: its name and description; its arguments are
//! [`FileEditorAction`]'s fields.

use tandem_protocol::{FileEditorAction, FileEditorObservation};
use tandem_sdk::{ToolAnnotations, ToolDefinition};

/// The name the model calls.
pub const NAME: &str = "file_editor";

/// The commands, in the order the schema lists them.
pub const COMMANDS: [&str; 5] = FileEditorAction::COMMANDS;

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
    let annotations = ToolAnnotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: false,
    };
    ToolDefinition::typed::<FileEditorAction, FileEditorObservation>(
        NAME,
        DESCRIPTION,
        annotations,
        true,
    )
}
