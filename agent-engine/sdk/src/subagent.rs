//! Sub-agents: the `task` tool hands a prompt to a child conversation and reads back its final
//! answer.
//!
//! The tool knows nothing of where conversations live; it asks the host for a [`SubAgents`]
//! service (put in the [`ToolEnv`](crate::ToolEnv) by the server, the CLI or a test). A child
//! is a real conversation: it inherits its parent's LLM, workspace, confirmation policy and
//! tools (less `task`, unless its type names its own), is persisted beside the parent with
//! `parent_conversation_id` in its catalog entry, and its id is the task id, so `resume` works
//! after a restart too. [`LocalSubAgents`] runs children in a [`ConversationStore`]; hosts with
//! a registry of their own build children with [`child_options`] and drive them with
//! [`run_child`].

use std::path::Path;

use futures::future::BoxFuture;
use serde_json::Value;
use tandem_protocol::{
    Action, AgentSpec, ConversationState, Event, ExecutionStatus, Message, Source, ToolSpec,
};
use tokio_util::sync::CancellationToken;

use crate::conversation::{ConversationHandle, ConversationOptions};

mod local;

pub use local::{LocalSubAgents, ToolMaker};

/// The catalog-entry field naming a child's parent (upstream's `parent_conversation_id`).
pub const PARENT_FIELD: &str = "parent_conversation_id";
/// The catalog-entry field naming a child's sub-agent type.
pub const SUBAGENT_FIELD: &str = "subagent_type";
/// The spec name of the tool set that gives an agent the `task` tool.
pub const TASK_TOOL_SET: &str = "task_tool_set";
/// The spec names that stand for the `task` tool (removed from a child's tools).
pub const TASK_TOOL_NAMES: [&str; 4] = [TASK_TOOL_SET, "TaskToolSet", "task", "TaskTool"];

/// A kind of sub-agent a task may ask for (`subagent_type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubAgentType {
    /// The name the model gives (`general-purpose`).
    pub name: String,
    /// What it is for, as the model reads it.
    pub description: String,
    /// The tools it gets, by spec name; empty: its parent's tools less `task`.
    pub tools: Vec<String>,
    /// Added to its system prompt.
    pub system_prompt: String,
    /// Shipped with Tandem (not listed in the tool description, as upstream lists only the
    /// agents a user registered).
    pub builtin: bool,
}

/// The sub-agent types every host knows: upstream's built-in `general-purpose`,
/// `code-explorer` and `bash-runner`.
pub fn builtin_subagents() -> Vec<SubAgentType> {
    let t = |name: &str, description: &str, tools: &[&str], prompt: &str| SubAgentType {
        name: name.to_owned(),
        description: description.to_owned(),
        tools: tools.iter().map(|s| (*s).to_owned()).collect(),
        system_prompt: prompt.to_owned(),
        builtin: true,
    };
    vec![
        t(
            tandem_protocol::DEFAULT_SUBAGENT,
            "General-purpose subagent. Can read, write, and edit code, run shell commands, and \
             track tasks. Use this when the task requires a combination of capabilities or \
             doesn't fit a specialized agent.",
            &[],
            "You are a general-purpose sub-agent working for another agent. When you finish, \
             report a concise summary back to the caller: what you did, what changed (files, \
             tests, errors), and any open issues.",
        ),
        t(
            "code-explorer",
            "USE THIS when you need to understand unfamiliar code before making changes. \
             Returns a structured summary with file paths, line numbers, and code snippets.",
            &["terminal"],
            "You are a codebase exploration specialist working for another agent. Use only \
             read-only shell commands (ls, find, grep, rg, cat, head, sed -n, git log/diff/show); \
             never create, modify or delete a file. Answer with file paths and line numbers.",
        ),
        t(
            "bash-runner",
            "USE THIS to execute shell commands and get a concise report of the results: tests, \
             builds, linters, git operations. Returns only what matters: pass/fail counts, \
             specific failures with reasons, and actionable errors.",
            &["terminal"],
            "You are a command-line execution specialist working for another agent. Run what \
             is asked and distill the output into a concise report: counts, failures with \
             file:line and reason, errors. Never dump raw output.",
        ),
    ]
}

/// A new task for a sub-agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRequest {
    /// The parent conversation (dashed or hex id).
    pub parent_id: String,
    /// The sub-agent type, already checked against [`SubAgents::types`].
    pub subagent_type: String,
    /// The task, the child's first user message.
    pub prompt: String,
    /// A short label (the child's title).
    pub description: Option<String>,
}

/// How a task ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskReport {
    /// The task id (the child conversation's id); `None` when no child was started.
    pub task_id: Option<String>,
    /// The sub-agent's final answer, or why the task failed.
    pub outcome: Result<String, TaskError>,
}

impl TaskReport {
    /// A task that failed before a child existed.
    pub fn refused(reason: TaskError) -> Self {
        Self {
            task_id: None,
            outcome: Err(reason),
        }
    }
}

/// Why a task failed: its child could not be made or reopened, or it stopped before it
/// answered. The text is what the parent agent reads in the task's observation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskError {
    /// The host is going away and starts no child.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// No sub-agent type has this name.
    #[error("unknown sub-agent type `{0}`")]
    UnknownType(String),
    /// The task id to resume is not a child of this parent.
    #[error("Task '{task_id}' not found. Available tasks: {}", available(.tasks))]
    NotFound {
        /// The id asked for.
        task_id: String,
        /// The parent's children (dashed ids).
        tasks: Vec<String>,
    },
    /// The parent's conversation could not be read or opened.
    #[error("the parent conversation is not available: {0}")]
    Parent(String),
    /// The child's tools could not be made from its agent spec.
    #[error("the sub-agent's tools could not be made: {0}")]
    Tools(String),
    /// The child's conversation could not be created.
    #[error("the sub-agent's conversation could not be created: {0}")]
    Create(String),
    /// The child's conversation exists but could not be opened again.
    #[error("task {task_id} could not be reopened: {reason}")]
    Reopen {
        /// The child's id.
        task_id: String,
        /// What failed.
        reason: String,
    },
    /// The task's prompt could not be sent to the child.
    #[error("The sub-agent could not start: {0}")]
    Start(String),
    /// The task was cancelled; the child is kept and can be resumed.
    #[error(
        "The sub-agent was interrupted before it finished. Its conversation is kept: resume task {} to continue.",
        dashed(.task_id)
    )]
    Interrupted {
        /// The child's id.
        task_id: String,
    },
    /// Nobody could confirm the child's actions and rejecting them failed.
    #[error("{0}")]
    Confirmation(String),
    /// The child's conversation closed while the task waited on it.
    #[error("The sub-agent's conversation closed.")]
    Closed,
    /// The child stopped without finishing: its error (or status) and what it had said.
    #[error("{0}")]
    Stopped(String),
}

fn available(tasks: &[String]) -> String {
    if tasks.is_empty() {
        "none".to_owned()
    } else {
        tasks.join(", ")
    }
}

/// Runs sub-agent tasks as child conversations; provided by the host through the tool
/// environment (`env.get::<Arc<dyn SubAgents>>()`).
///
/// Both calls wait for the child's run to end. When `cancel` fires (the parent is interrupted
/// or paused) the child is interrupted, stays resumable, and the report says so.
pub trait SubAgents: Send + Sync {
    /// The sub-agent types a task may name.
    fn types(&self) -> Vec<SubAgentType> {
        builtin_subagents()
    }

    /// Starts a child conversation on `request` and runs it to its end.
    fn start(&self, request: TaskRequest, cancel: CancellationToken) -> BoxFuture<'_, TaskReport>;

    /// Sends `prompt` to the existing child `task_id` of `parent_id` and runs it again.
    fn resume<'a>(
        &'a self,
        parent_id: &'a str,
        task_id: &'a str,
        prompt: String,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, TaskReport>;
}

/// The agent spec of a child of `parent` of type `kind`: the parent's agent with the type's
/// tools (or the parent's less `task`), the type's prompt appended to the system message.
pub fn child_spec(parent: &AgentSpec, kind: &SubAgentType) -> AgentSpec {
    let mut spec = parent.clone();
    spec.tools = if kind.tools.is_empty() {
        parent
            .tools
            .iter()
            .filter(|t| !TASK_TOOL_NAMES.contains(&t.name.as_str()))
            .cloned()
            .collect()
    } else {
        kind.tools.iter().map(|n| tool_spec(n)).collect()
    };
    if !kind.system_prompt.is_empty() {
        let key = "system_message_suffix";
        let mut context = match &spec.agent_context {
            Some(Value::Object(m)) => m.clone(),
            _ => serde_json::Map::new(),
        };
        let suffix = match context.get(key).and_then(Value::as_str) {
            Some(s) if !s.is_empty() => format!("{s}\n\n{}", kind.system_prompt),
            _ => kind.system_prompt.clone(),
        };
        context.insert(key.to_owned(), Value::from(suffix));
        spec.agent_context = Some(Value::Object(context));
    }
    spec
}

fn tool_spec(name: &str) -> ToolSpec {
    ToolSpec {
        name: name.to_owned(),
        params: tandem_protocol::Extra::new(),
    }
}

/// The options of a new child of the conversation whose state is `parent`.
pub fn child_options(parent: &ConversationState, kind: &SubAgentType) -> ConversationOptions {
    let workspace = Path::new(&parent.workspace.working_dir).to_path_buf();
    let mut options = ConversationOptions::new(child_spec(&parent.agent, kind), workspace);
    options.confirmation_policy = parent.confirmation_policy.clone();
    options.max_iterations = parent.max_iterations;
    options.stuck_detection = parent.stuck_detection;
    options.autotitle = false;
    options
        .meta_extra
        .insert(PARENT_FIELD.to_owned(), Value::from(dashed(&parent.id)));
    options
        .meta_extra
        .insert(SUBAGENT_FIELD.to_owned(), Value::from(kind.name.as_str()));
    options
}

/// The title of a child: the task's description, else the start of its prompt.
pub fn child_title(description: Option<&str>, prompt: &str) -> String {
    match description.map(str::trim).filter(|d| !d.is_empty()) {
        Some(d) => d.to_owned(),
        None => prompt
            .lines()
            .next()
            .unwrap_or("")
            .chars()
            .take(60)
            .collect(),
    }
}

/// `id` with dashes (as the API shows ids), or as given when it is no UUID.
pub fn dashed(id: &str) -> String {
    uuid::Uuid::parse_str(id)
        .map(|u| u.hyphenated().to_string())
        .unwrap_or_else(|_| id.to_owned())
}

/// Sends `prompt` to the child and waits for its run to end: its final answer when it
/// finished, else why it stopped (with what it had said so far). When the child waits for
/// confirmation, `confirmer` says whether a person can decide in the child's conversation (a
/// server's UI): the task waits for the decision; else the actions are rejected, as nobody can
/// approve them, and the child goes on. When `cancel` fires the child is interrupted and the
/// report says it can be resumed.
pub async fn run_child(
    child: &ConversationHandle,
    prompt: String,
    cancel: CancellationToken,
    confirmer: bool,
) -> Result<String, TaskError> {
    let interrupted = || TaskError::Interrupted {
        task_id: child.id().to_owned(),
    };
    if cancel.is_cancelled() {
        return Err(interrupted());
    }
    child
        .send_message(Message::user(prompt), true)
        .await
        .map_err(|e| TaskError::Start(e.to_string()))?;
    loop {
        tokio::select! {
            () = child.wait_until_stopped() => {}
            () = cancel.cancelled() => {
                let _ = child.interrupt().await;
                child.wait_until_stopped().await;
                return Err(interrupted());
            }
        }
        let status = child.status();
        match status {
            ExecutionStatus::Finished => return Ok(final_answer(&child.events())),
            ExecutionStatus::WaitingForConfirmation if !confirmer => {
                let reason = "Nobody can confirm a sub-agent's actions here: do the task without actions that need confirmation, or report that it needs them.";
                child
                    .respond_to_confirmation(false, Some(reason.to_owned()))
                    .await
                    .map_err(|e| TaskError::Confirmation(e.to_string()))?;
                child
                    .run()
                    .await
                    .map_err(|e| TaskError::Confirmation(e.to_string()))?;
            }
            ExecutionStatus::WaitingForConfirmation => {
                let mut live = child.subscribe_live();
                while child.status() == ExecutionStatus::WaitingForConfirmation {
                    tokio::select! {
                        r = live.recv() => {
                            if matches!(r, Err(tokio::sync::broadcast::error::RecvError::Closed)) {
                                return Err(TaskError::Closed);
                            }
                        }
                        () = cancel.cancelled() => return Err(interrupted()),
                    }
                }
            }
            other => return Err(TaskError::Stopped(stop_detail(&child.events(), other))),
        }
    }
}

/// Why a child stopped without finishing, with its partial answer.
fn stop_detail(events: &[Event], status: ExecutionStatus) -> String {
    let reason = events
        .iter()
        .rev()
        .find_map(|e| match e {
            Event::ConversationError(err) => Some(err.detail.clone()),
            _ => None,
        })
        .unwrap_or_else(|| {
            format!(
                "Sub-agent stopped without finishing (status: {}).",
                status.as_str()
            )
        });
    let partial = final_answer(events);
    if partial.is_empty() {
        reason
    } else {
        format!("{reason}\nPartial result:\n{partial}")
    }
}

/// A conversation's final answer: the last `finish` message or agent text, whichever is later.
pub fn final_answer(events: &[Event]) -> String {
    for e in events.iter().rev() {
        match e {
            Event::Action(a) => {
                if let Some(Action::Finish(f)) = &a.action {
                    return f.message.clone();
                }
            }
            Event::Message(m) if m.base.source == Source::Agent => {
                let text = m.llm_message.text();
                if !text.trim().is_empty() {
                    return text;
                }
            }
            _ => {}
        }
    }
    String::new()
}
