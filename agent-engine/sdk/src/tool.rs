//! The `Tool` trait: what the agent loop needs from a tool, and the registry it looks tools up in.
//!
//! A tool with a typed input implements [`TypedTool`] instead and gets [`Tool`] for free: its
//! schema and argument parsing come from its input struct ([`tandem_protocol::tool_io`]), and
//! its executor receives that struct, never another tool's action.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use tandem_protocol::{Action, Observation, ToolInput, ToolInputError, ToolOutput, tool_io};
use tokio_util::sync::CancellationToken;

use crate::secrets::Masker;

mod catalog;
mod custom;

pub use catalog::{MadeTools, MakeToolError, ToolCatalog, ToolEnv};
pub use custom::FnTool;

/// Hints about a tool's effects (MCP tool annotations, as upstream reports them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ToolAnnotations {
    /// Only reads.
    pub read_only: bool,
    /// May destroy data.
    pub destructive: bool,
    /// Same call twice has the effect of once.
    pub idempotent: bool,
    /// Reaches outside the workspace (network, ...).
    pub open_world: bool,
}

/// How a tool presents itself to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDefinition {
    /// The name the model calls (`terminal`).
    pub name: String,
    /// The description the model reads.
    pub description: String,
    /// JSON Schema of the arguments (without `security_risk` and `summary`, which the agent adds).
    pub parameters: Value,
    /// Whether the model is asked to rate the call's `security_risk` (false for think/finish).
    pub asks_security_risk: bool,
    /// Effect hints.
    pub annotations: ToolAnnotations,
    /// Upstream action class name (`TerminalAction`).
    pub action_type: String,
    /// Upstream observation class name (`TerminalObservation`).
    pub observation_type: String,
}

impl ToolDefinition {
    /// The definition of a tool reading `I` and answering `O`: `parameters` is `I`'s schema
    /// (its field doc comments are the descriptions), the type names are their kinds.
    pub fn typed<I: ToolInput, O: ToolOutput>(
        name: impl Into<String>,
        description: impl Into<String>,
        annotations: ToolAnnotations,
        asks_security_risk: bool,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters: tool_io::parameters::<I>(),
            asks_security_risk,
            annotations,
            action_type: I::KIND.to_owned(),
            observation_type: O::KIND.to_owned(),
        }
    }
}

/// What a running tool may use besides its action.
#[derive(Clone)]
pub struct ToolContext {
    /// Cancelled on interrupt: the tool stops and kills what it started.
    pub cancel: CancellationToken,
    /// The workspace root; tools resolve and confine paths against it.
    pub working_dir: PathBuf,
    /// The conversation's directory (TASKS.json, saved full outputs); `None` when not persisted.
    pub conversation_dir: Option<PathBuf>,
    /// Secret values the command names, to export as environment variables.
    pub env: HashMap<String, String>,
    /// Replaces secret values in anything the tool shows (its observation is masked again after).
    pub masker: Masker,
}

impl std::fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolContext")
            .field("working_dir", &self.working_dir)
            .field("conversation_dir", &self.conversation_dir)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// A tool the agent can call.
///
/// A failure the model should see is an observation with `is_error: true`, never an `Err`:
/// only argument validation (`parse_action`) returns an error, which the loop turns into an
/// `AgentErrorEvent`.
pub trait Tool: Send + Sync {
    /// Name, description and schema.
    fn definition(&self) -> &ToolDefinition;

    /// Builds the typed action from the model's arguments (already parsed as JSON, with
    /// `security_risk` and `summary` removed). The error names what is wrong.
    fn parse_action(&self, arguments: Value) -> std::result::Result<Action, ToolInputError>;

    /// Runs the action.
    fn execute<'a>(&'a self, action: &'a Action, ctx: ToolContext) -> BoxFuture<'a, Observation>;

    /// Releases what the tool holds (the terminal's shell) when the conversation closes.
    fn close(&self) {}

    /// Whether calls of this tool may run at the same time as the other parallel-safe calls
    /// of the same LLM response (sub-agent tasks): they then run together, their
    /// observations still recorded in call order.
    fn parallel_safe(&self) -> bool {
        false
    }

    /// Whether a pause of the conversation cancels a running call (a sub-agent, which could
    /// run for long, is paused with its parent) instead of letting it finish.
    fn stops_on_pause(&self) -> bool {
        false
    }

    /// Fields that replace the derived ones of this tool's entry in `SystemPromptEvent.tools`
    /// (upstream's `ToolDefinition` JSON, whose `kind` its clients decode by): an MCP tool is
    /// an `MCPToolDefinition` carrying its `mcp_tool`. `None`: the kind is derived from the
    /// name (`file_editor` → `FileEditorTool`).
    fn wire_definition(&self) -> Option<serde_json::Map<String, Value>> {
        None
    }
}

/// A tool whose input is one action struct and whose result is one observation struct.
///
/// Every `TypedTool` is a [`Tool`]: the model's arguments are parsed into `Input` (leniently,
/// with errors naming the field, and checked against the schema's enums), then [`validate`]d;
/// [`run`] receives the typed input. Adding a tool is the input struct (in
/// `tandem-protocol`, with doc comments for the model), its observation, and this impl.
///
/// [`validate`]: TypedTool::validate
/// [`run`]: TypedTool::run
pub trait TypedTool: Send + Sync {
    /// The arguments, as an action struct.
    type Input: ToolInput;
    /// The result, as an observation struct.
    type Output: ToolOutput;

    /// Name, description and schema; build it with [`ToolDefinition::typed`].
    fn definition(&self) -> &ToolDefinition;

    /// Checks what the schema cannot say (a title that must not be blank); the error names the
    /// field ([`ToolInputError::invalid`]) and becomes the model's parse error.
    fn validate(&self, _input: &Self::Input) -> std::result::Result<(), ToolInputError> {
        Ok(())
    }

    /// Runs the input. A failure is an output with `is_error: true`.
    fn run<'a>(&'a self, input: &'a Self::Input, ctx: ToolContext) -> BoxFuture<'a, Self::Output>;

    /// Releases what the tool holds when the conversation closes.
    fn close(&self) {}

    /// See [`Tool::parallel_safe`].
    fn parallel_safe(&self) -> bool {
        false
    }

    /// See [`Tool::stops_on_pause`].
    fn stops_on_pause(&self) -> bool {
        false
    }
}

impl<T: TypedTool> Tool for T {
    fn definition(&self) -> &ToolDefinition {
        TypedTool::definition(self)
    }

    fn parse_action(&self, arguments: Value) -> std::result::Result<Action, ToolInputError> {
        let parameters = &TypedTool::definition(self).parameters;
        let input: T::Input = tool_io::parse(arguments, parameters)?;
        self.validate(&input)?;
        Ok(input.into())
    }

    fn execute<'a>(&'a self, action: &'a Action, ctx: ToolContext) -> BoxFuture<'a, Observation> {
        match T::Input::of(action) {
            Some(input) => Box::pin(async move { self.run(input, ctx).await.into() }),
            None => {
                let name = &TypedTool::definition(self).name;
                let refused = T::Output::failure(format!("{name} cannot run a {}", action.kind()));
                Box::pin(std::future::ready(refused.into()))
            }
        }
    }

    fn close(&self) {
        TypedTool::close(self);
    }

    fn parallel_safe(&self) -> bool {
        TypedTool::parallel_safe(self)
    }

    fn stops_on_pause(&self) -> bool {
        TypedTool::stops_on_pause(self)
    }
}

/// The tools of one agent, by name, in the order the model is shown them.
#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Arc<dyn Tool>>,
    by_name: HashMap<String, usize>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool; a later tool of the same name replaces the earlier one.
    pub fn register(&mut self, tool: Arc<dyn Tool>) {
        let name = tool.definition().name.clone();
        if let Some(&i) = self.by_name.get(&name) {
            self.tools[i] = tool;
        } else {
            self.by_name.insert(name, self.tools.len());
            self.tools.push(tool);
        }
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// All tools in order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<dyn Tool>> {
        self.tools.iter()
    }

    /// Tool names in order.
    pub fn names(&self) -> Vec<&str> {
        self.tools
            .iter()
            .map(|t| t.definition().name.as_str())
            .collect()
    }

    /// Closes every tool.
    pub fn close_all(&self) {
        for t in &self.tools {
            t.close();
        }
    }
}
