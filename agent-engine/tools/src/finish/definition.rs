//! What the model reads about `finish`, and the parsing of its arguments.

use serde_json::{Value, json};
use tandem_protocol::{Action, FinishAction};
use tandem_sdk::{ToolAnnotations, ToolDefinition};

use crate::args::Args;

/// The name the model calls.
pub const NAME: &str = "finish";

/// Annotations of the tools that change nothing (`finish`, `think`).
pub const READ_ONLY: ToolAnnotations = ToolAnnotations {
    read_only: true,
    destructive: false,
    idempotent: true,
    open_world: false,
};

const DESCRIPTION: &str = "\
Ends the current task and hands a final message to the user.

Call it when the requested work is done, or when you cannot go on (a technical obstacle or \
missing information). The message should sum up what you did and what came of it, say what the \
user may want to do next, explain anything you could not do, and ask whatever you need to know \
to continue.";

/// The tool definition.
pub fn definition() -> ToolDefinition {
    ToolDefinition {
        name: NAME.to_owned(),
        description: DESCRIPTION.to_owned(),
        parameters: json!({
            "type": "object",
            "properties": {
                "message": {
                    "type": "string",
                    "description": "The final message for the user.",
                },
            },
            "required": ["message"],
        }),
        asks_security_risk: false,
        annotations: READ_ONLY,
        action_type: "FinishAction".to_owned(),
        observation_type: "FinishObservation".to_owned(),
    }
}

/// Builds a [`FinishAction`]; the error names the bad field.
pub fn parse(arguments: Value) -> Result<Action, String> {
    let args = Args::new(arguments)?;
    Ok(Action::Finish(FinishAction {
        message: args.required_string("message")?,
        extra: Default::default(),
    }))
}
