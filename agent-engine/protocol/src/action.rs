//! The actions of the core tools, as carried by `ActionEvent.action` (discriminated by `kind`).
//!
//! Each action struct is also its tool's typed input: the schema the model reads is derived
//! from it (field doc comments are the argument descriptions) and the model's arguments are
//! parsed into it, both through [`crate::tool_io`].

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::kind::tagged_enum;
use crate::{
    BrowserClickAction, BrowserCloseTabAction, BrowserGetContentAction, BrowserGetStateAction,
    BrowserGetStorageAction, BrowserGoBackAction, BrowserListTabsAction, BrowserNavigateAction,
    BrowserRequestHandoffAction, BrowserScrollAction, BrowserSetStorageAction,
    BrowserStartRecordingAction, BrowserStopRecordingAction, BrowserSwitchTabAction,
    BrowserTypeAction, Extra,
};

/// Run a command in the agent's persistent shell, or send input to the running one.
///
/// Also the `terminal` tool's input: the field docs below are the argument descriptions the
/// model reads (see [`crate::tool_io`]).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct TerminalAction {
    /// The bash command to run. Leave empty to wait for more output of a command that returned
    /// exit code -1. With `is_input=true`: text to type into the running process (Enter is
    /// pressed after it), or one key name: `C-c`, `C-d`, `C-z`, `C-<letter>`, `UP`, `DOWN`,
    /// `LEFT`, `RIGHT`, `HOME`, `END`, `PGUP`, `PGDN`, `TAB`, `ESC`, `BS`, `ENTER`.
    pub command: String,
    /// True to send `command` to the process that is running instead of starting a new
    /// command. Default false.
    #[serde(default)]
    pub is_input: bool,
    /// Optional limit in seconds. A new command still running after it is stopped with C-c.
    /// Without it, a command that prints nothing for a while returns early and keeps running.
    /// With an empty command or `is_input`, how long to wait for more output. Set it for long
    /// installs, builds, test runs or sleeps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<f64>,
    /// True to kill the shell and start a fresh one (all environment variables, the working
    /// directory and running processes are lost); `command`, if not empty, then runs in the new
    /// shell. Only when the terminal no longer responds. Not with `is_input`.
    #[serde(default)]
    pub reset: bool,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// View, create and edit files.
///
/// Also the `file_editor` tool's input: the field docs below are the argument descriptions the
/// model reads.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct FileEditorAction {
    /// What to do: `view`, `create`, `str_replace`, `insert` or `undo_edit`.
    // A string, not a Rust enum, so a logged action with a command this version lacks still
    // loads; the model's arguments are held to the schema's enum when they are parsed.
    #[schemars(extend("enum" = FileEditorAction::COMMANDS))]
    pub command: String,
    /// Absolute path of the file or directory, e.g. `/workspace/src/main.rs`.
    pub path: String,
    /// For `create`: the whole content of the new file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_text: Option<String>,
    /// For `str_replace`: the exact text to replace; it must occur once in the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_str: Option<String>,
    /// For `str_replace`: the replacement (empty or absent deletes `old_str`). For `insert`: the
    /// text to insert.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub new_str: Option<String>,
    /// For `insert`: the line after which `new_str` goes; 0 inserts at the top of the file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert_line: Option<i64>,
    /// For `view` of a file: `[first, last]` line numbers to show, counted from 1; a last line
    /// of -1 means the end of the file. Without it the whole file is shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_range: Option<Vec<i64>>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

impl FileEditorAction {
    /// The commands, in the order the schema lists them.
    pub const COMMANDS: [&'static str; 5] =
        ["view", "create", "str_replace", "insert", "undo_edit"];
}

/// One entry of the task tracker's list.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct TaskItem {
    /// Short name of the task.
    pub title: String,
    /// Optional details about the task.
    #[serde(default)]
    pub notes: String,
    /// Where the task stands: 'todo', 'in_progress' or 'done'.
    #[serde(default = "todo")]
    #[schemars(extend("enum" = TaskItem::STATUSES))]
    pub status: String,
}

impl TaskItem {
    /// The statuses a task may have.
    pub const STATUSES: [&'static str; 3] = ["todo", "in_progress", "done"];
}

fn todo() -> String {
    "todo".to_owned()
}

/// View or replace the task list.
///
/// Also the `task_tracker` tool's input: the field docs below are the argument descriptions
/// the model reads.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct TaskTrackerAction {
    /// `view` shows the list; `plan` replaces it with `task_list`. View the list before changing
    /// it.
    #[serde(default = "view")]
    #[schemars(extend("enum" = TaskTrackerAction::COMMANDS))]
    pub command: String,
    /// For `plan`: the complete new list of tasks.
    #[serde(default)]
    pub task_list: Vec<TaskItem>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

impl TaskTrackerAction {
    /// The commands.
    pub const COMMANDS: [&'static str; 2] = ["view", "plan"];
}

fn view() -> String {
    "view".to_owned()
}

/// Think out loud; changes nothing. Also the `think` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct ThinkAction {
    /// What you are thinking.
    pub thought: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// End the task with a message to the user. Also the `finish` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct FinishAction {
    /// The final message for the user.
    pub message: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
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
        /// `task`.
        Task(crate::TaskAction) = "TaskAction",
        /// `glob`.
        Glob(crate::GlobAction) = "GlobAction",
        /// `grep`.
        Grep(crate::GrepAction) = "GrepAction",
        /// A tool of an MCP server.
        Mcp(crate::McpToolAction) = "MCPToolAction",
        /// `browser_navigate`.
        BrowserNavigate(BrowserNavigateAction) = "BrowserNavigateAction",
        /// `browser_click`.
        BrowserClick(BrowserClickAction) = "BrowserClickAction",
        /// `browser_type`.
        BrowserType(BrowserTypeAction) = "BrowserTypeAction",
        /// `browser_get_state`.
        BrowserGetState(BrowserGetStateAction) = "BrowserGetStateAction",
        /// `browser_get_content`.
        BrowserGetContent(BrowserGetContentAction) = "BrowserGetContentAction",
        /// `browser_scroll`.
        BrowserScroll(BrowserScrollAction) = "BrowserScrollAction",
        /// `browser_go_back`.
        BrowserGoBack(BrowserGoBackAction) = "BrowserGoBackAction",
        /// `browser_list_tabs`.
        BrowserListTabs(BrowserListTabsAction) = "BrowserListTabsAction",
        /// `browser_switch_tab`.
        BrowserSwitchTab(BrowserSwitchTabAction) = "BrowserSwitchTabAction",
        /// `browser_close_tab`.
        BrowserCloseTab(BrowserCloseTabAction) = "BrowserCloseTabAction",
        /// `browser_get_storage`.
        BrowserGetStorage(BrowserGetStorageAction) = "BrowserGetStorageAction",
        /// `browser_set_storage`.
        BrowserSetStorage(BrowserSetStorageAction) = "BrowserSetStorageAction",
        /// `browser_start_recording`.
        BrowserStartRecording(BrowserStartRecordingAction) = "BrowserStartRecordingAction",
        /// `browser_stop_recording`.
        BrowserStopRecording(BrowserStopRecordingAction) = "BrowserStopRecordingAction",
        /// `browser_request_handoff`.
        BrowserRequestHandoff(BrowserRequestHandoffAction) = "BrowserRequestHandoffAction",
    }
}
