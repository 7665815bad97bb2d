//! The `task` tool (upstream's `task_tool_set`): hands a prompt to a sub-agent that runs as a
//! child conversation, and answers with the sub-agent's final message.
//!
//! Where children live is the host's business: the tool asks the [`SubAgents`] service the
//! host put in its [`ToolEnv`]. Several `task` calls of one response run at the same time
//! (the tool is parallel-safe), and a pause or interrupt of the parent interrupts the children,
//! which stay resumable.

use std::sync::Arc;

use futures::future::BoxFuture;
use tandem_protocol::{Content, DEFAULT_SUBAGENT, TaskAction, TaskObservation};
use tandem_sdk::subagent::{SubAgentType, SubAgents, TaskRequest, builtin_subagents};
use tandem_sdk::{ToolContext, ToolDefinition, ToolEnv, ToolInputError, TypedTool};

pub mod definition;

pub use definition::NAME;

/// The spec name of the tool set (upstream's `TaskToolSet.name`).
pub const TOOL_SET: &str = tandem_sdk::subagent::TASK_TOOL_SET;

/// The `task` tool of one conversation.
pub struct TaskTool {
    def: ToolDefinition,
    agents: Option<Arc<dyn SubAgents>>,
    types: Vec<SubAgentType>,
    parent_id: String,
}

impl std::fmt::Debug for TaskTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskTool")
            .field("parent_id", &self.parent_id)
            .finish_non_exhaustive()
    }
}

impl TaskTool {
    /// The tool of the conversation `env` describes, running tasks through the host's
    /// `Arc<dyn SubAgents>` (without one, every task fails saying so).
    pub fn new(env: &ToolEnv) -> Self {
        let agents = env.get::<Arc<dyn SubAgents>>();
        let types = agents
            .as_ref()
            .map_or_else(builtin_subagents, |a| a.types());
        Self {
            def: definition::definition(&types),
            agents,
            types,
            parent_id: env.conversation_id.clone(),
        }
    }

    fn parent_id(&self, ctx: &ToolContext) -> String {
        if !self.parent_id.is_empty() {
            return self.parent_id.clone();
        }
        // Made before the conversation had an id: its directory is named after it.
        ctx.conversation_dir
            .as_ref()
            .and_then(|d| d.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    async fn run_task(&self, input: &TaskAction, ctx: ToolContext) -> TaskObservation {
        let subagent = match input.subagent_type.trim() {
            "" | "default" => DEFAULT_SUBAGENT.to_owned(),
            other => other.to_owned(),
        };
        let Some(agents) = &self.agents else {
            return failed(
                "unknown",
                &subagent,
                "Sub-agents are not available here: the host runs no child conversations.".into(),
            );
        };
        let parent_id = self.parent_id(&ctx);
        let report = match input.resume.as_deref().map(str::trim) {
            Some(task_id) if !task_id.is_empty() => {
                agents
                    .resume(&parent_id, task_id, input.prompt.clone(), ctx.cancel)
                    .await
            }
            _ => {
                if !self.types.iter().any(|t| t.name == subagent) {
                    let mut known: Vec<&str> = self.types.iter().map(|t| t.name.as_str()).collect();
                    known.sort_unstable();
                    return failed(
                        "unknown",
                        &subagent,
                        format!(
                            "Unknown agent '{subagent}'. Available types: {}.",
                            known.join(", ")
                        ),
                    );
                }
                let request = TaskRequest {
                    parent_id,
                    subagent_type: subagent.clone(),
                    prompt: input.prompt.clone(),
                    description: input.description.clone(),
                };
                agents.start(request, ctx.cancel).await
            }
        };
        let task_id = report.task_id.unwrap_or_else(|| "unknown".to_owned());
        match report.outcome {
            Ok(answer) => {
                let text = if answer.trim().is_empty() {
                    "Task completed with no result.".to_owned()
                } else {
                    answer
                };
                TaskObservation {
                    content: vec![Content::text(text)],
                    is_error: false,
                    task_id,
                    subagent,
                    status: TaskObservation::COMPLETED.to_owned(),
                    extra: Default::default(),
                }
            }
            Err(reason) => failed(&task_id, &subagent, reason.to_string()),
        }
    }
}

fn failed(task_id: &str, subagent: &str, reason: String) -> TaskObservation {
    TaskObservation {
        content: vec![Content::text(reason)],
        is_error: true,
        task_id: task_id.to_owned(),
        subagent: subagent.to_owned(),
        status: TaskObservation::ERROR.to_owned(),
        extra: Default::default(),
    }
}

impl TypedTool for TaskTool {
    type Input = TaskAction;
    type Output = TaskObservation;

    fn definition(&self) -> &ToolDefinition {
        &self.def
    }

    fn validate(&self, input: &TaskAction) -> Result<(), ToolInputError> {
        if input.prompt.trim().is_empty() {
            return Err(ToolInputError::invalid(
                "prompt",
                "must not be empty: say what the sub-agent should do",
            ));
        }
        Ok(())
    }

    fn run<'a>(
        &'a self,
        input: &'a TaskAction,
        ctx: ToolContext,
    ) -> BoxFuture<'a, TaskObservation> {
        Box::pin(self.run_task(input, ctx))
    }

    fn parallel_safe(&self) -> bool {
        true
    }

    fn stops_on_pause(&self) -> bool {
        true
    }
}
