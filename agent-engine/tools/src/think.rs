//! The `think` tool: the model writes a thought down; nothing else happens.

use futures::future::BoxFuture;
use tandem_protocol::{Action, Content, Observation, ThinkObservation};
use tandem_sdk::{Tool, ToolContext, ToolDefinition};

pub mod definition;

pub use definition::NAME;

/// What the model reads back after thinking.
pub const LOGGED: &str = "Your thought has been logged.";

/// The think tool.
#[derive(Debug)]
pub struct ThinkTool {
    definition: ToolDefinition,
}

impl Default for ThinkTool {
    fn default() -> Self {
        Self::new()
    }
}

impl ThinkTool {
    /// The think tool.
    pub fn new() -> Self {
        Self {
            definition: definition::definition(),
        }
    }
}

impl Tool for ThinkTool {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn parse_action(&self, arguments: serde_json::Value) -> Result<Action, String> {
        definition::parse(arguments)
    }

    fn execute<'a>(&'a self, action: &'a Action, _ctx: ToolContext) -> BoxFuture<'a, Observation> {
        let (text, is_error) = match action {
            Action::Think(_) => (LOGGED.to_owned(), false),
            other => (format!("think cannot run a {}", other.kind()), true),
        };
        Box::pin(async move {
            Observation::Think(ThinkObservation {
                content: vec![Content::text(text)],
                is_error,
                extra: Default::default(),
            })
        })
    }
}
