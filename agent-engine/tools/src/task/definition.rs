//! What the model reads about `task`: upstream's description, listing the sub-agent types a
//! user registered as upstream lists them; its arguments are [`TaskAction`]'s fields.

use tandem_protocol::{TaskAction, TaskObservation};
use tandem_sdk::subagent::SubAgentType;
use tandem_sdk::{ToolAnnotations, ToolDefinition};

/// The name the model calls.
pub const NAME: &str = "task";

const BEFORE_TYPES: &str = "\
Launch a subagent to handle complex, multi-step tasks autonomously.

Subagents are autonomous agents that work independently and return results to you. They are your primary tool for understanding codebases and running
tests, but each delegation has overhead \u{2014} use them when the task genuinely benefits from a separate agent, not for simple lookups.

Available agent types and the tools they have access to:
";

const AFTER_TYPES: &str = "

When NOT to use the task tool:
- A single grep, find, or cat command would answer your question \u{2014} just run it yourself
- You are making a file edit (use file_editor directly)
- You already have the context needed

When using the task tool:
- Write a detailed prompt describing exactly what you need
- Include specific file paths, class names, or error messages from the issue
- Tell the agent what to report back (file paths, line numbers, code snippets)
- The agent's results are authoritative \u{2014} verify subagent results only when the task involves judgment or
  interpretation.
  
";

/// What upstream says when no agent type was registered.
const NONE_REGISTERED: &str =
    "- No user-registered agents yet. Call register_agent(...) to add custom agents.";

/// Upstream's lines for the registered types: `- **name**: description (tools: a, b)`, by
/// name; the built-in types are not listed, as upstream lists only registered ones.
pub fn agent_types_info(types: &[SubAgentType]) -> String {
    let mut registered: Vec<&SubAgentType> = types.iter().filter(|t| !t.builtin).collect();
    if registered.is_empty() {
        return NONE_REGISTERED.to_owned();
    }
    registered.sort_by(|a, b| a.name.cmp(&b.name));
    registered
        .iter()
        .map(|t| {
            let tools = if t.tools.is_empty() {
                String::new()
            } else {
                format!(" (tools: {})", t.tools.join(", "))
            };
            format!("- **{}**: {}{tools}", t.name, t.description)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The description, with `types` listed.
pub fn description(types: &[SubAgentType]) -> String {
    format!("{BEFORE_TYPES}{}{AFTER_TYPES}\n", agent_types_info(types))
}

/// The tool definition.
pub fn definition(types: &[SubAgentType]) -> ToolDefinition {
    ToolDefinition::typed::<TaskAction, TaskObservation>(
        NAME,
        description(types),
        ToolAnnotations {
            read_only: false,
            destructive: true,
            idempotent: false,
            open_world: true,
        },
        true,
    )
}
