//! The `think` tool: the model writes a thought down; nothing else happens.

use tandem_protocol::{Action, Content, Observation, ThinkObservation};

use crate::stateless::{Stateless, StatelessTool};

pub mod definition;

pub use definition::NAME;

/// What the model reads back after thinking.
pub const LOGGED: &str = "Your thought has been logged.";

/// The think tool.
pub type ThinkTool = StatelessTool<Think>;

/// What `think` is among the stateless tools.
#[derive(Debug)]
pub struct Think;

impl Stateless for Think {
    const TOOL: &'static str = "ThinkTool";
    const DEFINITION: fn() -> tandem_sdk::ToolDefinition = definition::definition;
    const PARSE: fn(serde_json::Value) -> Result<Action, String> = definition::parse;

    fn observe(action: &Action) -> Observation {
        let (text, is_error) = match action {
            Action::Think(_) => (LOGGED.to_owned(), false),
            other => (format!("think cannot run a {}", other.kind()), true),
        };
        Observation::Think(ThinkObservation {
            content: vec![Content::text(text)],
            is_error,
            extra: Default::default(),
        })
    }
}
