//! What the model reads about `think`, and the parsing of its arguments.

use serde_json::{Value, json};
use tandem_protocol::{Action, ThinkAction};
use tandem_sdk::ToolDefinition;

use crate::args::Args;

/// The name the model calls.
pub const NAME: &str = "think";

const DESCRIPTION: &str = "\
Writes down a thought. Nothing is run, read or changed: the thought is only recorded, which \
makes your reasoning visible.

Useful for weighing several ways to fix a bug once you have found its cause, working out why \
tests fail after seeing their output, comparing approaches before a large refactoring or a new \
design, and sorting hypotheses while debugging.";

/// The tool definition.
pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: NAME.to_owned(),
        description: DESCRIPTION.to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "thought": {
                    "type": "string",
                    "description": "What you are thinking.",
                },
            },
            "required": ["thought"],
        }),
        asks_security_risk: false,
        annotations: crate::finish::definition::READ_ONLY,
        action_type: "ThinkAction".to_owned(),
        observation_type: "ThinkObservation".to_owned(),
    }
}

/// Builds a [`ThinkAction`]; the error names the bad field.
pub fn parse(arguments: Value) -> Result<Action, String> {
    let args = Args::new(arguments)?;
    Ok(Action::Think(ThinkAction {
        thought: args.required_string("thought")?,
        extra: Default::default(),
    }))
}
