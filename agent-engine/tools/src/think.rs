//! The `think` tool: the model writes a thought down; nothing else happens.

use tandem_protocol::{Content, ThinkAction, ThinkObservation};

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
    type Input = ThinkAction;
    type Output = ThinkObservation;

    fn definition() -> tandem_sdk::ToolDefinition {
        definition::definition()
    }

    fn observe(_thought: &ThinkAction) -> ThinkObservation {
        ThinkObservation {
            content: vec![Content::text(LOGGED)],
            is_error: false,
            extra: Default::default(),
        }
    }
}
