//! The `finish` tool: ends the task; its observation echoes the final message.

use tandem_protocol::{Action, Content, FinishObservation, Observation};

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
    const DEFINITION: fn() -> tandem_sdk::ToolDefinition = definition::definition;
    const PARSE: fn(serde_json::Value) -> Result<Action, String> = definition::parse;

    fn observe(action: &Action) -> Observation {
        let (text, is_error) = match action {
            Action::Finish(finish) => (finish.message.clone(), false),
            other => (format!("finish cannot run a {}", other.kind()), true),
        };
        Observation::Finish(FinishObservation {
            content: vec![Content::text(text)],
            is_error,
            extra: Default::default(),
        })
    }
}
