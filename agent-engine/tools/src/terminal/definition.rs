//! How the terminal tool presents itself to the model (name, description, argument schema)
//! and how the model's arguments become a [`TerminalAction`].

use serde_json::{Map, Value, json};
use tandem_protocol::{Action, TerminalAction};
use tandem_sdk::{ToolAnnotations, ToolDefinition};

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

fn parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "command": {
                "type": "string",
                "description": "The bash command to run. Leave empty to wait for more output of a \
    command that returned exit code -1. With `is_input=true`: text to type into the running \
    process (Enter is pressed after it), or one key name: `C-c`, `C-d`, `C-z`, `C-<letter>`, `UP`, \
    `DOWN`, `LEFT`, `RIGHT`, `HOME`, `END`, `PGUP`, `PGDN`, `TAB`, `ESC`, `BS`, `ENTER`."
            },
            "is_input": {
                "type": "boolean",
                "description": "True to send `command` to the process that is running instead \
    of starting a new command. Default false."
            },
            "timeout": {
                "type": "number",
                "description": "Optional limit in seconds. A new command still running after it \
    is stopped with C-c. Without it, a command that prints nothing for a while returns early and \
    keeps running. With an empty command or `is_input`, how long to wait for more output. Set it \
    for long installs, builds, test runs or sleeps."
            },
            "reset": {
                "type": "boolean",
                "description": "True to kill the shell and start a fresh one (all environment \
    variables, the working directory and running processes are lost); `command`, if not empty, \
    then runs in the new shell. Only when the terminal no longer responds. Not with `is_input`."
            }
        },
        "required": ["command"]
    })
}

/// The definition the model is shown; `soft_timeout_secs` is quoted in the description.
pub(crate) fn definition(soft_timeout_secs: u64) -> ToolDefinition {
    ToolDefinition {
        name: TOOL_NAME.into(),
        description: description(soft_timeout_secs),
        parameters: parameters(),
        asks_security_risk: true,
        annotations: ToolAnnotations {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
        },
        action_type: "TerminalAction".into(),
        observation_type: "TerminalObservation".into(),
    }
}

fn flag(args: &Map<String, Value>, name: &str) -> Result<bool, String> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        // Models sometimes quote booleans.
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
        Some(other) => Err(format!("`{name}` must be true or false, got {other}")),
    }
}

fn seconds(args: &Map<String, Value>, name: &str) -> Result<Option<f64>, String> {
    let value = match args.get(name) {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Number(n)) => n.as_f64(),
        Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
        Some(_) => None,
    };
    match value {
        Some(v) if v.is_finite() && v > 0.0 => Ok(Some(v)),
        Some(v) => Err(format!(
            "`{name}` must be a positive number of seconds, got {v}"
        )),
        None => Err(format!(
            "`{name}` must be a number of seconds, got {}",
            args.get(name).map_or_else(String::new, Value::to_string)
        )),
    }
}

/// Builds the action from the model's arguments; the error names the field that is wrong.
pub(crate) fn parse_action(arguments: Value) -> Result<Action, String> {
    let Value::Object(mut args) = arguments else {
        return Err(format!(
            "the arguments must be a JSON object with a `command` field, got {arguments}"
        ));
    };
    let command = match args.get("command") {
        Some(Value::String(s)) => s.clone(),
        None | Some(Value::Null) => return Err("missing required field `command`".into()),
        Some(other) => return Err(format!("`command` must be a string, got {other}")),
    };
    let is_input = flag(&args, "is_input")?;
    let reset = flag(&args, "reset")?;
    let timeout = seconds(&args, "timeout")?;
    for known in ["command", "is_input", "reset", "timeout"] {
        args.remove(known);
    }
    Ok(Action::Terminal(TerminalAction {
        command,
        is_input,
        timeout,
        reset,
        extra: args,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_names_bad_fields() {
        let Ok(Action::Terminal(a)) =
            parse_action(json!({"command": "ls", "timeout": "5", "is_input": "false"}))
        else {
            panic!("expected a terminal action");
        };
        assert_eq!(
            (a.command.as_str(), a.timeout, a.is_input),
            ("ls", Some(5.0), false)
        );
        assert!(parse_action(json!({})).unwrap_err().contains("`command`"));
        assert!(
            parse_action(json!({"command": 3}))
                .unwrap_err()
                .contains("`command`")
        );
        assert!(
            parse_action(json!({"command": "x", "timeout": "soon"}))
                .unwrap_err()
                .contains("`timeout`")
        );
        assert!(
            parse_action(json!({"command": "x", "reset": 1}))
                .unwrap_err()
                .contains("`reset`")
        );
    }

    #[test]
    fn schema_requires_command() {
        let d = definition(10);
        assert_eq!(d.parameters["required"], json!(["command"]));
        assert!(d.description.contains("10 seconds"));
    }
}
