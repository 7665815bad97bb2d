//! The actions of the core tools, as carried by `ActionEvent.action` (discriminated by `kind`).

use serde::{Deserialize, Serialize};

use crate::Extra;
use crate::kind::tagged_enum;

/// Run a command in the agent's persistent shell, or send input to the running one.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TerminalAction {
    /// The command line, or with `is_input` the text to type (`C-c`, `C-d`, `C-z` are keys).
    pub command: String,
    /// Send `command` as input to the running process instead of starting a new command.
    #[serde(default)]
    pub is_input: bool,
    /// Hard timeout in seconds; without it a command that goes quiet returns partial output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    /// Kill the shell and start a fresh one.
    #[serde(default)]
    pub reset: bool,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: Extra,
}

/// View, create and edit files.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FileEditorAction {
    /// `view`, `create`, `str_replace`, `insert` or `undo_edit`.
    pub command: String,
    /// Absolute path of the file or directory.
    pub path: String,
    /// Content of the file to create.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_text: Option<String>,
    /// Text to replace (must occur exactly once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_str: Option<String>,
    /// Replacement, or the text to insert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_str: Option<String>,
    /// Line after which `insert` puts `new_str` (0 = top of file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert_line: Option<i64>,
    /// `[start, end]` lines to view, 1-based, `end` = -1 for the end of the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_range: Option<Vec<i64>>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: Extra,
}

/// One entry of the task tracker's list.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskItem {
    /// Short title.
    pub title: String,
    /// Details.
    #[serde(default)]
    pub notes: String,
    /// `todo`, `in_progress` or `done`.
    #[serde(default = "todo")]
    pub status: String,
}

fn todo() -> String {
    "todo".to_owned()
}

/// View or replace the task list.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TaskTrackerAction {
    /// `view` or `plan`.
    #[serde(default = "view")]
    pub command: String,
    /// The whole new list (`plan`).
    #[serde(default)]
    pub task_list: Vec<TaskItem>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: Extra,
}

fn view() -> String {
    "view".to_owned()
}

/// Think out loud; changes nothing.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ThinkAction {
    /// The thought.
    pub thought: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: Extra,
}

/// End the task with a message to the user.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FinishAction {
    /// The final message.
    pub message: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    pub extra: Extra,
}

tagged_enum! {
    /// A parsed tool call: what the tool will do.
    pub enum Action tag "kind" {
        /// `terminal`.
        Terminal(TerminalAction) = "TerminalAction",
        /// `file_editor`.
        FileEditor(FileEditorAction) = "FileEditorAction",
        /// `task_tracker`.
        TaskTracker(TaskTrackerAction) = "TaskTrackerAction",
        /// `think`.
        Think(ThinkAction) = "ThinkAction",
        /// `finish`.
        Finish(FinishAction) = "FinishAction",
    }
}
