//! What the model reads about `think`; its argument is [`ThinkAction`]'s field.

use tandem_protocol::{ThinkAction, ThinkObservation};
use tandem_sdk::ToolDefinition;

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
    ToolDefinition::typed::<ThinkAction, ThinkObservation>(
        NAME,
        DESCRIPTION,
        crate::finish::definition::READ_ONLY,
        false,
    )
}
