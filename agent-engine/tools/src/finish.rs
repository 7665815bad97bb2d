//! The `finish` tool: ends the task; its observation echoes the final message.

use futures::future::BoxFuture;
use tandem_protocol::{Action, Content, FinishObservation, Observation};
use tandem_sdk::{Tool, ToolContext, ToolDefinition};

pub mod definition;

pub use definition::NAME;

/// The finish tool.
#[derive(Debug)]
pub struct FinishTool {
    definition: ToolDefinition,
}

impl Default for FinishTool {
    fn default() -> Self {
        Self::new()
    }
}

impl FinishTool {
    /// The finish tool.
    pub fn new() -> Self {
        Self {
            definition: definition::definition(),
        }
    }
}

impl Tool for FinishTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn parse_action(&self, arguments: serde_json::Value) -> Result<Action, String> {
        definition::parse(arguments)
    }

    fn execute<'a>(&'a self, action: &'a Action, _ctx: ToolContext) -> BoxFuture<'a, Observation> {
        let (text, is_error) = match action {
            Action::Finish(finish) => (finish.message.clone(), false),
            other => (format!("finish cannot run a {}", other.kind()), true),
        };
        Box::pin(async move {
            Observation::Finish(FinishObservation {
                content: vec![Content::text(text)],
                is_error,
                extra: Default::default(),
            })
        })
    }
}
