//! [`StatelessTool`]: a tool that keeps nothing between calls, whose whole behaviour is its
//! definition and the observation it answers its input with (`finish`, `think`).

use std::marker::PhantomData;

use futures::future::BoxFuture;
use tandem_protocol::{ToolInput, ToolOutput};
use tandem_sdk::{ToolContext, ToolDefinition, TypedTool};

/// What makes one stateless tool: the things it does not share with the others.
pub trait Stateless: Send + Sync + 'static {
    /// The tool's type name in `Debug` output.
    const TOOL: &'static str;
    /// The arguments.
    type Input: ToolInput;
    /// The result.
    type Output: ToolOutput;

    /// Name, description and schema.
    fn definition() -> ToolDefinition;

    /// The observation for `input`.
    fn observe(input: &Self::Input) -> Self::Output;
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
            definition: S::definition(),
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

impl<S: Stateless> TypedTool for StatelessTool<S> {
    type Input = S::Input;
    type Output = S::Output;

    fn definition(&self) -> &ToolDefinition {
        &self.definition
    }

    fn run<'a>(&'a self, input: &'a S::Input, _ctx: ToolContext) -> BoxFuture<'a, S::Output> {
        Box::pin(std::future::ready(S::observe(input)))
    }
}
