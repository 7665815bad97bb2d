//! What the model reads about `finish`; its argument is [`FinishAction`]'s field.

use tandem_protocol::{FinishAction, FinishObservation};
use tandem_sdk::{ToolAnnotations, ToolDefinition};

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
    ToolDefinition::typed::<FinishAction, FinishObservation>(NAME, DESCRIPTION, READ_ONLY, false)
}
