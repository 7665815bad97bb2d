//! `tandem-tools`: the agent's core tools, one module per tool, each with its definition (the
//! schema and description the model reads) apart from its executor.
//!
//! Depends on `tandem-sdk` (the [`Tool`](tandem_sdk::Tool) trait) and `tandem-protocol`; never
//! on servers or the desktop host. Entry point: [`default_tools`], the preset the default agent
//! runs with (`terminal`, `file_editor`, `task_tracker`, `finish`, `think`, in that order).

use std::sync::Arc;
use std::time::Duration;

use tandem_sdk::Tool;

pub mod file_editor;
pub mod finish;
mod stateless;
pub mod task_tracker;
pub mod terminal;
pub mod think;

pub use file_editor::FileEditorTool;
pub use finish::FinishTool;
pub use stateless::{Stateless, StatelessTool};
pub use task_tracker::TaskTrackerTool;
pub use think::ThinkTool;

/// The default agent's tools, in the order the model is shown them: terminal, file_editor,
/// task_tracker, finish, think.
///
/// `terminal_soft_timeout` is how long the terminal waits for a quiet command before it
/// returns partial output; `None` keeps the terminal's own default.
pub fn default_tools(terminal_soft_timeout: Option<Duration>) -> Vec<Arc<dyn Tool>> {
    let mut terminal = terminal::TerminalTool::new();
    if let Some(soft_timeout) = terminal_soft_timeout {
        terminal = terminal.with_soft_timeout(soft_timeout);
    }
    vec![
        Arc::new(terminal),
        Arc::new(FileEditorTool::new()),
        Arc::new(TaskTrackerTool::new()),
        Arc::new(FinishTool::new()),
        Arc::new(ThinkTool::new()),
    ]
}

/// The names of [`default_tools`], in the same order.
pub fn tool_names() -> Vec<&'static str> {
    vec![
        terminal::TOOL_NAME,
        file_editor::NAME,
        task_tracker::NAME,
        finish::NAME,
        think::NAME,
    ]
}

/// Reading the model's tool-call arguments with errors that name the offending field.
///
/// Lenient where models commonly slip (integers sent as strings or as `5.0`, lists sent as a
/// JSON string, `null` for an absent field), strict about anything that cannot be meant.
pub(crate) mod args {
    use serde_json::{Map, Value};

    /// The arguments object of one tool call.
    pub(crate) struct Args {
        map: Map<String, Value>,
    }

    impl Args {
        /// Wraps the arguments; they must be a JSON object (`null` counts as empty).
        pub(crate) fn new(arguments: Value) -> Result<Self, String> {
            match arguments {
                Value::Object(map) => Ok(Self { map }),
                Value::Null => Ok(Self { map: Map::new() }),
                other => Err(format!(
                    "the arguments must be a JSON object, got {}",
                    type_name(&other)
                )),
            }
        }

        /// The value of `field`, treating `null` as absent.
        fn get(&self, field: &str) -> Option<&Value> {
            self.map.get(field).filter(|v| !v.is_null())
        }

        /// A string field that must be present.
        pub(crate) fn required_string(&self, field: &str) -> Result<String, String> {
            self.optional_string(field)?
                .ok_or_else(|| format!("missing required field `{field}`"))
        }

        /// A string field that may be absent.
        pub(crate) fn optional_string(&self, field: &str) -> Result<Option<String>, String> {
            match self.get(field) {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(format!(
                    "field `{field}` must be a string, got {}",
                    type_name(other)
                )),
            }
        }

        /// An integer field that may be absent.
        pub(crate) fn optional_int(&self, field: &str) -> Result<Option<i64>, String> {
            match self.get(field) {
                None => Ok(None),
                Some(v) => as_int(v)
                    .map(Some)
                    .ok_or_else(|| format!("field `{field}` must be an integer, got {}", show(v))),
            }
        }

        /// A list of integers that may be absent.
        pub(crate) fn optional_int_list(&self, field: &str) -> Result<Option<Vec<i64>>, String> {
            let Some(items) = self.optional_array(field)? else {
                return Ok(None);
            };
            items
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    as_int(v).ok_or_else(|| {
                        format!("field `{field}[{i}]` must be an integer, got {}", show(v))
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some)
        }

        /// An array field that may be absent (a string holding a JSON array is accepted).
        pub(crate) fn optional_array(&self, field: &str) -> Result<Option<Vec<Value>>, String> {
            match self.get(field) {
                None => Ok(None),
                Some(Value::Array(items)) => Ok(Some(items.clone())),
                Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
                    Ok(Value::Array(items)) => Ok(Some(items)),
                    _ => Err(format!("field `{field}` must be an array, got a string")),
                },
                Some(other) => Err(format!(
                    "field `{field}` must be an array, got {}",
                    type_name(other)
                )),
            }
        }
    }

    /// An integer from a JSON number without fraction or a string holding one.
    pub(crate) fn as_int(v: &Value) -> Option<i64> {
        match v {
            Value::Number(n) => n.as_i64().or_else(|| {
                n.as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                    .map(|f| f as i64)
            }),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    /// The JSON type of a value, for error messages.
    pub(crate) fn type_name(v: &Value) -> &'static str {
        match v {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    /// A short rendering of a value for error messages.
    fn show(v: &Value) -> String {
        let text = v.to_string();
        if text.chars().count() > 60 {
            format!("{}…", text.chars().take(60).collect::<String>())
        } else {
            text
        }
    }
}
