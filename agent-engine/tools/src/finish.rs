//! The `finish` tool: ends the task; its observation echoes the final message.

use tandem_protocol::{Content, FinishAction, FinishObservation};

use crate::stateless::{Stateless, StatelessTool};

pub mod definition;

pub use definition::NAME;

/// The finish tool.
pub type FinishTool = StatelessTool<Finish>;

/// What `finish` is among the stateless tools.
#[derive(Debug)]
pub struct Finish;

impl Stateless for Finish {
    const TOOL: &'static str = "FinishTool";
    type Input = FinishAction;
    type Output = FinishObservation;

    fn definition() -> tandem_sdk::ToolDefinition {
        definition::definition()
    }

    fn observe(finish: &FinishAction) -> FinishObservation {
        FinishObservation {
            content: vec![Content::text(finish.message.clone())],
            is_error: false,
            extra: Default::default(),
        }
    }
}
