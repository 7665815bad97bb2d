//! The `task` tool's action and observation (upstream's `TaskAction` / `TaskObservation`): the
//! parent agent hands a prompt to a sub-agent, which runs as a conversation of its own and
//! answers with its final message.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::tool_io::{ToolInput, ToolOutput};
use crate::{Action, Content, Extra};

/// The sub-agent type a task gets when the model names none.
pub const DEFAULT_SUBAGENT: &str = "general-purpose";

/// Launch a sub-agent task. The `task` tool's input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct TaskAction {
    /// A short (3-5 word) description of the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The task for the agent to perform.
    pub prompt: String,
    /// The type of specialized agent to use for this task.
    #[serde(default = "default_subagent")]
    pub subagent_type: String,
    /// Task ID of the task to resume from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

impl Default for TaskAction {
    fn default() -> Self {
        Self {
            description: None,
            prompt: String::new(),
            subagent_type: default_subagent(),
            resume: None,
            extra: Extra::new(),
        }
    }
}

fn default_subagent() -> String {
    DEFAULT_SUBAGENT.to_owned()
}

/// What a sub-agent task ended with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct TaskObservation {
    /// What the model reads: the sub-agent's final answer, or why it failed.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Whether the task failed.
    #[serde(default)]
    pub is_error: bool,
    /// The task's id, to `resume` it later (`unknown` when none was started).
    pub task_id: String,
    /// The sub-agent type that ran it.
    pub subagent: String,
    /// `completed` or `error`.
    pub status: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

impl TaskObservation {
    /// Status of a task whose sub-agent finished.
    pub const COMPLETED: &'static str = "completed";
    /// Status of a task whose sub-agent failed, stopped or was interrupted.
    pub const ERROR: &'static str = "error";

    /// The header upstream puts before the content when the model reads it.
    pub fn task_info(&self) -> String {
        format!(
            "Task ID: {}\nSubagent: {}\nStatus: {}",
            self.task_id, self.subagent, self.status
        )
    }
}

impl Default for TaskObservation {
    fn default() -> Self {
        Self {
            content: Vec::new(),
            is_error: false,
            task_id: "unknown".to_owned(),
            subagent: default_subagent(),
            status: Self::ERROR.to_owned(),
            extra: Extra::new(),
        }
    }
}

impl ToolInput for TaskAction {
    const KIND: &'static str = "TaskAction";

    fn of(action: &Action) -> Option<&Self> {
        match action {
            Action::Task(input) => Some(input),
            _ => None,
        }
    }
}

impl ToolOutput for TaskObservation {
    const KIND: &'static str = "TaskObservation";

    fn failure(message: String) -> Self {
        Self {
            content: vec![Content::text(message)],
            is_error: true,
            ..Default::default()
        }
    }
}

impl TaskObservation {
    /// What the model reads, as upstream builds it: the task's id, sub-agent and status, the
    /// error header when it failed, then the content.
    pub fn llm_content(&self) -> Vec<Content> {
        let mut out = vec![Content::text(self.task_info())];
        if self.is_error {
            out.push(Content::text("[An error occurred during execution.]\n"));
        }
        out.extend(self.content.iter().cloned());
        out
    }
}
