//! [`ToolInputError`]: why a tool call's arguments cannot become its action.

use crate::tool_io::ArgumentError;

/// Why the model's arguments for a tool cannot become its action. The text names the field at
/// fault and is what the model reads (after `Error validating tool '<name>': `), so it can
/// correct the call.
#[derive(Debug, thiserror::Error)]
pub enum ToolInputError {
    /// The arguments are not a JSON object.
    #[error("the arguments must be a JSON object, got {got}")]
    NotAnObject {
        /// What they are instead (`an array`).
        got: &'static str,
    },
    /// A field could not be read into the action struct (missing, or of the wrong type).
    #[error(transparent)]
    Argument(#[from] ArgumentError),
    /// A string is not one of the values its field's schema allows.
    #[error("field `{field}` must be one of {}, got `{got}`", allowed.join(", "))]
    NotAllowed {
        /// Where the value is (`task_list[1].status`).
        field: String,
        /// The values the schema allows.
        allowed: Vec<String>,
        /// What was sent.
        got: String,
    },
    /// The action struct did not survive its own JSON round trip (a bug of its serde
    /// attributes, not of the model's arguments).
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A field holds a value the tool refuses although its type fits (a blank title).
    #[error("field `{field}` {problem}")]
    Invalid {
        /// Where the value is (`task_list[0].title`).
        field: String,
        /// What is wrong with it, as the rest of a sentence (`must not be empty`).
        problem: String,
    },
    /// An argument the tool's schema requires is absent.
    #[error("missing required argument `{0}`")]
    Missing(String),
    /// The arguments break the tool's JSON Schema (an MCP tool's), at most three problems told.
    #[error("invalid arguments for `{tool}`: {}", problems.join("; "))]
    Schema {
        /// The tool, as the model calls it.
        tool: String,
        /// Each problem, naming its field when it has one.
        problems: Vec<String>,
    },
}

impl ToolInputError {
    /// The value at `field` is refused: `problem` says why (`must not be empty`).
    pub fn invalid(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.into(),
            problem: problem.into(),
        }
    }
}
