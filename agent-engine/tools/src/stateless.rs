//! [`StatelessTool`]: a tool that keeps nothing between calls, whose whole behaviour is its
//! definition, the parsing of its arguments and the observation it answers an action with
//! (`finish`, `think`).

use std::marker::PhantomData;

use futures::future::BoxFuture;
use serde_json::Value;
use tandem_protocol::{Action, Observation};
use tandem_sdk::{Tool, ToolContext, ToolDefinition};

/// What makes one stateless tool: the three things it does not share with the others.
pub trait Stateless: Send + Sync + 'static {
    /// The tool's type name in `Debug` output.
    const TOOL: &'static str;
    /// Name, description and schema.
    const DEFINITION: fn() -> ToolDefinition;
    /// Builds the typed action from the model's arguments.
    const PARSE: fn(Value) -> Result<Action, String>;

    /// The observation for `action` (an error one for another tool's action).
    fn observe(action: &Action) -> Observation;
}

/// A stateless tool of kind `S`.
pub struct StatelessTool<S> {
    definition: ToolDefinition,
    kind: PhantomData<S>,
}

impl<S: Stateless> StatelessTool<S> {
    /// The tool.
    pub fn new() -> Self {
        Self {
            definition: S::DEFINITION(),
            kind: PhantomData,
        }
    }
}

impl<S: Stateless> Default for StatelessTool<S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<S: Stateless> std::fmt::Debug for StatelessTool<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(S::TOOL)
            .field("definition", &self.definition)
            .finish()
    }
}

impl<S: Stateless> Tool for StatelessTool<S> {
    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn parse_action(&self, arguments: Value) -> Result<Action, String> {
        S::PARSE(arguments)
    }

    fn execute<'a>(&'a self, action: &'a Action, _ctx: ToolContext) -> BoxFuture<'a, Observation> {
        let observation = S::observe(action);
        Box::pin(async move { observation })
    }
}
