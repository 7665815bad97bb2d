//! The observations of the core tools, as carried by `ObservationEvent.observation`.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::kind::tagged_enum;
use crate::{BrowserObservation, Content, Extra, TaskItem};

/// Facts about the shell after a terminal command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CmdOutputMetadata {
    /// Exit code of the command, -1 while it runs or when unknown.
    #[serde(default = "minus_one")]
    pub exit_code: i64,
    /// Process id of the command, -1 when unknown.
    #[serde(default = "minus_one")]
    pub pid: i64,
    /// User the shell runs as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Host name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    /// The shell's working directory after the command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// The `python` on the shell's PATH.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub py_interpreter_path: Option<String>,
    /// Text shown before the output (e.g. a truncation note).
    #[serde(default)]
    pub prefix: String,
    /// Text shown after the output (e.g. the exit code line).
    #[serde(default)]
    pub suffix: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

fn minus_one() -> i64 {
    -1
}

impl Default for CmdOutputMetadata {
    fn default() -> Self {
        Self {
            exit_code: -1,
            pid: -1,
            username: None,
            hostname: None,
            working_dir: None,
            py_interpreter_path: None,
            prefix: String::new(),
            suffix: String::new(),
            extra: Extra::new(),
        }
    }
}

/// Output of a terminal command.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct TerminalObservation {
    /// What the model reads.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Whether the tool failed.
    #[serde(default)]
    pub is_error: bool,
    /// The command that ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its exit code, `None` while still running.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Whether the command hit a timeout (soft or hard).
    #[serde(default)]
    pub timeout: bool,
    /// Shell facts.
    #[serde(default)]
    pub metadata: CmdOutputMetadata,
    /// Folder holding the full output when `content` was truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_save_dir: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Result of a file editor command.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FileEditorObservation {
    /// What the model reads.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Whether the command failed.
    #[serde(default)]
    pub is_error: bool,
    /// The command.
    pub command: String,
    /// The path it acted on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Whether the file existed before.
    #[serde(default = "yes")]
    pub prev_exist: bool,
    /// Content before an edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_content: Option<String>,
    /// Content after an edit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_content: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

fn yes() -> bool {
    true
}

/// The task list after a task tracker command.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct TaskTrackerObservation {
    /// What the model reads.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Whether the command failed.
    #[serde(default)]
    pub is_error: bool,
    /// The command.
    pub command: String,
    /// The list.
    #[serde(default)]
    pub task_list: Vec<TaskItem>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Acknowledges a thought.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct ThinkObservation {
    /// What the model reads.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Always false.
    #[serde(default)]
    pub is_error: bool,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Echoes the final message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct FinishObservation {
    /// What the model reads.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Always false.
    #[serde(default)]
    pub is_error: bool,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

tagged_enum! {
    /// What a tool returned.
    pub enum Observation tag "kind" {
        /// `terminal`.
        Terminal(TerminalObservation) = "TerminalObservation",
        /// `file_editor`.
        FileEditor(FileEditorObservation) = "FileEditorObservation",
        /// `task_tracker`.
        TaskTracker(TaskTrackerObservation) = "TaskTrackerObservation",
        /// `think`.
        Think(ThinkObservation) = "ThinkObservation",
        /// `finish`.
        Finish(FinishObservation) = "FinishObservation",
        /// Every `browser_*` tool.
        Browser(BrowserObservation) = "BrowserObservation",
        /// `task`.
        Task(crate::TaskObservation) = "TaskObservation",
        /// `glob`.
        Glob(crate::GlobObservation) = "GlobObservation",
        /// `grep`.
        Grep(crate::GrepObservation) = "GrepObservation",
        /// A tool of an MCP server.
        Mcp(crate::McpToolObservation) = "MCPToolObservation",
    }
}

impl Observation {
    /// The content the model reads.
    pub fn content(&self) -> Vec<Content> {
        match self {
            Self::Terminal(o) => o.content.clone(),
            Self::FileEditor(o) => o.content.clone(),
            Self::TaskTracker(o) => o.content.clone(),
            Self::Think(o) => o.content.clone(),
            Self::Finish(o) => o.content.clone(),
            Self::Browser(o) => o.content.clone(),
            Self::Task(o) => o.llm_content(),
            Self::Glob(o) => o.content.clone(),
            Self::Grep(o) => o.content.clone(),
            Self::Mcp(o) => o.content.clone(),
            Self::Unknown(v) => v
                .get("content")
                .and_then(|c| serde_json::from_value(c.clone()).ok())
                .unwrap_or_default(),
        }
    }

    /// Mutable access to the content, for masking secrets (`None` for unknown kinds).
    pub fn content_mut(&mut self) -> Option<&mut Vec<Content>> {
        match self {
            Self::Terminal(o) => Some(&mut o.content),
            Self::FileEditor(o) => Some(&mut o.content),
            Self::TaskTracker(o) => Some(&mut o.content),
            Self::Think(o) => Some(&mut o.content),
            Self::Finish(o) => Some(&mut o.content),
            Self::Browser(o) => Some(&mut o.content),
            Self::Task(o) => Some(&mut o.content),
            Self::Glob(o) => Some(&mut o.content),
            Self::Grep(o) => Some(&mut o.content),
            Self::Mcp(o) => Some(&mut o.content),
            Self::Unknown(_) => None,
        }
    }

    /// Whether the tool reported an error.
    pub fn is_error(&self) -> bool {
        match self {
            Self::Terminal(o) => o.is_error,
            Self::FileEditor(o) => o.is_error,
            Self::TaskTracker(o) => o.is_error,
            Self::Think(o) => o.is_error,
            Self::Finish(o) => o.is_error,
            Self::Browser(o) => o.is_error,
            Self::Task(o) => o.is_error,
            Self::Glob(o) => o.is_error,
            Self::Grep(o) => o.is_error,
            Self::Mcp(o) => o.is_error,
            Self::Unknown(v) => v.get("is_error").and_then(|e| e.as_bool()).unwrap_or(false),
        }
    }
}
