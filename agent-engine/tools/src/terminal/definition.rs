//! How the terminal tool presents itself to the model (name, description; the arguments are
//! [`TerminalAction`]'s fields) and what it checks of them beyond their types.

use tandem_protocol::{TerminalAction, TerminalObservation};
use tandem_sdk::{ToolAnnotations, ToolDefinition, ToolInputError};

/// The tool's name.
pub const TOOL_NAME: &str = "terminal";

fn description(soft_timeout_secs: u64) -> String {
    format!(
        "Run a shell command in a persistent bash session.

### Running commands
* One command per call. Chain steps with `&&` or `;` when they belong together.
* The session persists: the working directory, environment variables and activated virtual \
environments carry over to later commands.
* When a command prints nothing new for {soft_timeout_secs} seconds (and no `timeout` was given), \
you get the output so far with exit code -1 while the command keeps running.
* Avoid `set -e` / `set -euo pipefail`: an error would end the session's shell.

### Commands that keep running
* Start servers and other endless processes in the background with their output in a file, \
e.g. `python3 app.py > server.log 2>&1 &`.
* For slow commands (installs, test suites, known sleeps), give `timeout` in seconds.
* After an exit code of -1 the command is still running. Then you can:
  - send an empty `command` to wait for more output,
  - set `is_input=true` to type text into the process, or to press keys: `C-c` (interrupt), \
`C-d` (end of input), `C-z` (suspend), any `C-<letter>`, `UP`, `DOWN`, `LEFT`, `RIGHT`, \
`HOME`, `END`, `PGUP`, `PGDN`, `TAB`, `ESC`, `BS`, `ENTER`.

### Good habits
* Check that a directory exists before creating files in it.
* Prefer absolute paths to frequent `cd`.

### Output
* Very long output is shortened to its beginning and end; the complete output is saved to a \
file whose path is given.

### Reset
* `reset=true` replaces the shell with a fresh one when it stops responding. Environment \
variables, the working directory and running processes are lost."
    )
}

/// The definition the model is shown; `soft_timeout_secs` is quoted in the description.
pub(crate) fn definition(soft_timeout_secs: u64) -> ToolDefinition {
    let annotations = ToolAnnotations {
        read_only: false,
        destructive: true,
        idempotent: false,
        open_world: true,
    };
    ToolDefinition::typed::<TerminalAction, TerminalObservation>(
        TOOL_NAME,
        description(soft_timeout_secs),
        annotations,
        true,
    )
}

/// Checks what the schema cannot say: a `timeout` must be a positive number of seconds.
pub(crate) fn validate(action: &TerminalAction) -> Result<(), ToolInputError> {
    match action.timeout {
        Some(t) if !(t.is_finite() && t > 0.0) => Err(ToolInputError::invalid(
            "timeout",
            format!("must be a positive number of seconds, got {t}"),
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tandem_protocol::Action;
    use tandem_sdk::Tool;

    use super::*;
    use crate::terminal::TerminalTool;

    #[test]
    fn parses_and_names_bad_fields() {
        let tool = TerminalTool::new();
        let parse = |args| tool.parse_action(args).map_err(|e| e.to_string());
        let Ok(Action::Terminal(a)) =
            parse(json!({"command": "ls", "timeout": "5", "is_input": "false"}))
        else {
            panic!("expected a terminal action");
        };
        assert_eq!(
            (a.command.as_str(), a.timeout, a.is_input),
            ("ls", Some(5.0), false)
        );
        assert_eq!(
            parse(json!({})).unwrap_err(),
            "missing required field `command`"
        );
        assert_eq!(
            parse(json!({"command": 3})).unwrap_err(),
            "field `command` must be a string, got a number"
        );
        assert_eq!(
            parse(json!({"command": "x", "timeout": "soon"})).unwrap_err(),
            "field `timeout` must be a number, got \"soon\""
        );
        assert_eq!(
            parse(json!({"command": "x", "timeout": -1})).unwrap_err(),
            "field `timeout` must be a positive number of seconds, got -1"
        );
        assert_eq!(
            parse(json!({"command": "x", "reset": 1})).unwrap_err(),
            "field `reset` must be true or false, got 1"
        );
    }

    #[test]
    fn unknown_arguments_are_dropped() {
        let Ok(Action::Terminal(a)) = TerminalTool::new()
            .parse_action(json!({"command": "ls", "cwd": "/tmp", "reset": null}))
        else {
            panic!("expected a terminal action");
        };
        assert!(a.extra.is_empty());
        assert!(!a.reset);
    }

    #[test]
    fn schema_requires_command() {
        let d = definition(10);
        assert_eq!(d.parameters["required"], json!(["command"]));
        assert!(d.description.contains("10 seconds"));
    }
}
