//! REST and WebSocket DTOs of the agent server, JSON-compatible with the OpenHands agent server
//! 1.58 (`*Request` bodies clients send, `*Response` / info bodies the server answers), plus
//! Tandem's own additions (workspace files and diffs, the PTY socket, the OpenAI-compatible
//! gateway). Requests are read tolerantly (`null` where upstream allows it, unknown fields kept
//! in `extra`); responses write `null` where upstream writes `null`, so the official Python
//! client's pydantic models validate them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

mod browser;
mod checkpoints;
mod children;
mod gateway;
mod mcp;
mod moves;
mod replay;

pub use browser::*;
pub use checkpoints::*;
pub use children::*;
pub use gateway::*;
pub use mcp::*;
pub use moves::*;
pub use replay::*;

use crate::{
    AgentSpec, ConfirmationPolicy, Content, ConversationStats, Event, ExecutionStatus, Extra, Role,
    SecurityRisk, WorkspaceSpec,
};

/// `POST /api/conversations`: start (or attach to) a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StartConversationRequest {
    /// The agent: LLM (its key builds the LLM in memory and is never persisted), tools, prompt.
    pub agent: AgentSpec,
    /// Where the agent works; the server's default workspace when absent.
    #[serde(default)]
    pub workspace: Option<WorkspaceSpec>,
    /// Id to use (dashed UUID or 32 hex); an existing id answers 200 with that conversation.
    #[serde(default)]
    pub conversation_id: Option<String>,
    /// When actions wait for approval (default `NeverConfirm`).
    #[serde(default)]
    pub confirmation_policy: Option<ConfirmationPolicy>,
    /// Security analyzer configuration (`{"kind": "LLMSecurityAnalyzer"}`, ...).
    #[serde(default)]
    pub security_analyzer: Option<Value>,
    /// A first message; with `run: true` the loop starts at once.
    #[serde(default)]
    pub initial_message: Option<SendMessageRequest>,
    /// Steps per run (default 500).
    #[serde(default)]
    pub max_iterations: Option<u32>,
    /// Whether stuck loops are stopped (default true).
    #[serde(default)]
    pub stuck_detection: Option<bool>,
    /// Secrets: `NAME: "value"` or `{"kind": "StaticSecret"|"LookupSecret", ...}`.
    #[serde(default)]
    pub secrets: Option<BTreeMap<String, Value>>,
    /// Free-form tags.
    #[serde(default)]
    pub tags: Option<BTreeMap<String, String>>,
    /// Upstream fields this server does not interpret, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// `POST /api/conversations/{id}/events`: a user message, optionally starting the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SendMessageRequest {
    /// Always `user` for messages sent to the agent.
    #[serde(default = "user_role")]
    pub role: Role,
    /// Content parts (`text`, `image`).
    pub content: Vec<Content>,
    /// Start the loop after appending (when it is not running).
    #[serde(default)]
    pub run: bool,
    /// Who sent it (for multi-user clients).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<String>,
    /// Fields this version does not interpret, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

fn user_role() -> Role {
    Role::User
}

/// `{"success": true}`: the answer of most commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct SuccessResponse {
    /// Always true (failures are HTTP errors).
    pub success: bool,
}

impl SuccessResponse {
    /// `{"success": true}`.
    pub const OK: Self = Self { success: true };
}

/// FastAPI's error body: `{"detail": "..."}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorResponse {
    /// What went wrong, for people.
    pub detail: String,
    /// Machine-readable code (Tandem addition; absent in upstream bodies).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
}

/// One item of a 422 body, as FastAPI / pydantic write it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ValidationErrorItem {
    /// Error type (`missing`, `json_invalid`, `uuid_parsing`, `value_error`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// Where: `["body", "agent", "llm"]`, `["path", "conversation_id"]`, `["query", "limit"]`.
    pub loc: Vec<Value>,
    /// Human message.
    pub msg: String,
    /// The offending input (`null` when absent).
    pub input: Value,
}

/// A 422 body: `{"detail": [{"type", "loc", "msg", "input"}, ...]}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ValidationErrorResponse {
    /// The problems found.
    pub detail: Vec<ValidationErrorItem>,
}

/// Whether a conversation's runtime can be used (`ConversationInfo.runtime_info`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RuntimeInfo {
    /// `available`.
    pub runtime_status: String,
    /// Whether `run` can resume it.
    pub can_resume: bool,
    /// Why it cannot run, if it cannot.
    pub runtime_error: Option<String>,
}

/// A conversation as the REST API reports it (upstream `ConversationInfo`). Fields that upstream
/// writes as `null` are written as `null` here too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ConversationInfo {
    /// Dashed UUID.
    pub id: String,
    /// The workspace.
    pub workspace: WorkspaceSpec,
    /// The conversation's directory on the server.
    pub persistence_dir: Option<String>,
    /// Steps per run.
    pub max_iterations: u32,
    /// Whether stuck loops are stopped.
    pub stuck_detection: bool,
    /// Where the run loop stands.
    pub execution_status: ExecutionStatus,
    /// When actions wait for approval.
    pub confirmation_policy: ConfirmationPolicy,
    /// The security analyzer, if any.
    pub security_analyzer: Option<Value>,
    /// Skills activated so far.
    pub activated_knowledge_skills: Vec<String>,
    /// Skills invoked so far.
    pub invoked_skills: Vec<Value>,
    /// Actions blocked by hooks.
    #[schema(value_type = Object)]
    pub blocked_actions: Extra,
    /// Messages blocked by hooks.
    #[schema(value_type = Object)]
    pub blocked_messages: Extra,
    /// Last user message.
    pub last_user_message_id: Option<String>,
    /// Head of the active branch.
    pub leaf_event_id: Option<String>,
    /// Metrics by usage id.
    pub stats: ConversationStats,
    /// Secret names and redacted sources.
    pub secret_registry: Value,
    /// Agent-specific state.
    pub agent_state: Value,
    /// Hook configuration.
    pub hook_config: Option<Value>,
    /// Title.
    pub title: Option<String>,
    /// Cost and token totals.
    pub metrics: Option<Value>,
    /// ISO 8601 UTC with `Z`.
    pub created_at: String,
    /// ISO 8601 UTC with `Z`.
    pub updated_at: String,
    /// Fork origin.
    pub forked_from_conversation_id: Option<String>,
    /// Fork origin event.
    pub forked_from_event_id: Option<String>,
    /// Parent of a sub-conversation.
    pub parent_conversation_id: Option<String>,
    /// Sub-conversations.
    pub sub_conversation_ids: Vec<String>,
    /// Free-form tags.
    pub tags: BTreeMap<String, String>,
    /// Model in use when switchable.
    pub current_model_id: Option<String>,
    /// Models it can switch to.
    pub available_models: Vec<Value>,
    /// Whether the model can be switched while running.
    pub supports_runtime_model_switch: bool,
    /// Agent profile the conversation was launched with.
    pub launched_agent_profile: Option<Value>,
    /// The agent as posted, with `llm.api_key` `null` (and every other LLM credential).
    pub agent: Value,
    /// Client-side tools.
    pub client_tools: Vec<Value>,
    /// Tool name to Python module, as the client sent it.
    #[schema(value_type = Object)]
    pub tool_module_qualnames: Extra,
    /// Runtime availability.
    pub runtime_info: Option<RuntimeInfo>,
    /// (Tandem addition.) While its run waits for a slot (the server runs at most
    /// `max_concurrent_runs` at once, first come first served): how many runs are ahead of it.
    /// Absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queued_ahead: Option<u32>,
}

/// A page of conversations (`GET /api/conversations/search`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ConversationPage {
    /// This page.
    pub items: Vec<ConversationInfo>,
    /// Id of the next page's first conversation, `null` on the last page.
    pub next_page_id: Option<String>,
}

/// A page of events (`GET .../events/search`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventPage {
    /// This page, in the requested order.
    pub items: Vec<Event>,
    /// Id of the next page's first event, `null` on the last page.
    pub next_page_id: Option<String>,
}

/// `PATCH /api/conversations/{id}`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct UpdateConversationRequest {
    /// New title (1 to 200 characters).
    #[serde(default)]
    pub title: Option<String>,
    /// Tags to set (replacing the old ones).
    #[serde(default)]
    pub tags: Option<BTreeMap<String, String>>,
}

/// `POST .../events/respond_to_confirmation`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ConfirmationResponseRequest {
    /// Approve (and run) or reject the pending actions.
    pub accept: bool,
    /// Why not, for the model.
    #[serde(default = "default_reject_reason")]
    pub reason: String,
}

fn default_reject_reason() -> String {
    "User rejected the action.".to_owned()
}

/// `POST .../events/approve_edited` (Tandem): run one pending action with arguments the person
/// edited, in place of what the agent proposed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ApproveEditedRequest {
    /// The pending action's event id (`ActionEvent.id`).
    pub action_id: String,
    /// The tool's arguments as a model would give them (for the terminal,
    /// `{"command": ...}`); validated by the tool, a 422 naming the field when they do not fit.
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub arguments: Value,
}

/// The answer to `approve_edited`: the edited action is running.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct ApproveEditedResponse {
    /// Always true (failures are HTTP errors).
    pub success: bool,
    /// The edited action's risk as the rule analyzer rates it (the agent's own rating was of
    /// what it proposed).
    pub security_risk: SecurityRisk,
}

/// `POST .../confirmation_policy`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SetConfirmationPolicyRequest {
    /// The new policy.
    pub policy: ConfirmationPolicy,
}

/// `POST .../security_analyzer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SetSecurityAnalyzerRequest {
    /// The analyzer, or `null` for none.
    #[serde(default)]
    pub security_analyzer: Option<Value>,
}

/// `POST .../secrets`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UpdateSecretsRequest {
    /// `NAME: "value"` or `{"kind": "StaticSecret"|"LookupSecret", ...}`.
    pub secrets: BTreeMap<String, Value>,
}

/// `POST .../ask_agent`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AskAgentRequest {
    /// The question.
    pub question: String,
}

/// Answers of `ask_agent` and `agent_final_response`: `{"response": "..."}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AgentResponse {
    /// The text.
    pub response: String,
}

/// `POST /api/bash/start_bash_command` and `execute_bash_command`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ExecuteBashRequest {
    /// The shell command.
    pub command: String,
    /// Working directory (the workspace when absent).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Seconds before the command is killed (default 300).
    #[serde(default)]
    pub timeout: Option<u64>,
}

/// A started bash command (`kind: "BashCommand"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BashCommand {
    /// The shell command.
    pub command: String,
    /// Working directory.
    pub cwd: Option<String>,
    /// Seconds before it is killed.
    pub timeout: u64,
    /// 32 hex.
    pub id: String,
    /// ISO 8601 UTC with `Z`.
    pub timestamp: String,
}

/// Output of a bash command (`kind: "BashOutput"`); `exit_code` is set on the last one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BashOutput {
    /// 32 hex.
    pub id: String,
    /// ISO 8601 UTC with `Z`.
    pub timestamp: String,
    /// The command it belongs to.
    pub command_id: String,
    /// Position among the command's outputs.
    pub order: u32,
    /// Exit code (`-1` when killed), `null` while running.
    pub exit_code: Option<i32>,
    /// Standard output.
    pub stdout: Option<String>,
    /// Standard error.
    pub stderr: Option<String>,
}

/// A bash event, discriminated by `kind`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "kind")]
pub enum BashEvent {
    /// A command started.
    BashCommand(BashCommand),
    /// Output of a command.
    BashOutput(BashOutput),
}

impl BashEvent {
    /// The event id.
    pub fn id(&self) -> &str {
        match self {
            Self::BashCommand(c) => &c.id,
            Self::BashOutput(o) => &o.id,
        }
    }

    /// The timestamp.
    pub fn timestamp(&self) -> &str {
        match self {
            Self::BashCommand(c) => &c.timestamp,
            Self::BashOutput(o) => &o.timestamp,
        }
    }

    /// The command id (its own id for a `BashCommand`).
    pub fn command_id(&self) -> &str {
        match self {
            Self::BashCommand(c) => &c.id,
            Self::BashOutput(o) => &o.command_id,
        }
    }

    /// `BashCommand` or `BashOutput`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::BashCommand(_) => "BashCommand",
            Self::BashOutput(_) => "BashOutput",
        }
    }
}

/// A page of bash events.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct BashEventPage {
    /// This page.
    pub items: Vec<BashEvent>,
    /// Id of the next page's first event.
    pub next_page_id: Option<String>,
}

/// `POST /api/file/upload` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FileUploadResponse {
    /// Always true.
    pub success: bool,
    /// Bytes written.
    pub file_size: u64,
}

/// `PUT /api/settings/secrets`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct CreateSecretRequest {
    /// Secret name.
    pub name: String,
    /// Its value (never listed back).
    pub value: String,
    /// What it is for.
    #[serde(default)]
    pub description: Option<String>,
}

/// A secret without its value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SecretInfo {
    /// Secret name.
    pub name: String,
    /// What it is for.
    pub description: Option<String>,
}

/// `GET /api/settings/secrets`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SecretList {
    /// Names and descriptions, never values.
    pub secrets: Vec<SecretInfo>,
}

/// `DELETE /api/settings/secrets/{name}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct DeletedResponse {
    /// Whether something was deleted.
    pub deleted: bool,
}

/// `GET /alive`, `/health`, `/ready`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StatusResponse {
    /// `ok` or `ready`.
    pub status: String,
}

/// `GET /server_info` (and `/`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServerInfo {
    /// Seconds since start.
    pub uptime: f64,
    /// Seconds since the last request.
    pub idle_time: f64,
    /// Server title.
    pub title: String,
    /// Server version.
    pub version: String,
    /// Engine version.
    pub sdk_version: String,
    /// Tools version.
    pub tools_version: String,
    /// Workspace version.
    pub workspace_version: String,
    /// Build commit.
    pub build_git_sha: String,
    /// Build ref.
    pub build_git_ref: String,
    /// Runtime description (upstream reports Python's; Tandem its own).
    pub python_version: String,
    /// Tool names.
    pub usable_tools: Vec<String>,
    /// Idle timeout of the runtime.
    pub runtime_idle_timeout_seconds: Option<u64>,
    /// `local`.
    pub conversation_runtime: String,
    /// Other runtimes.
    pub available_conversation_runtimes: Vec<String>,
    /// Feature flags.
    pub capabilities: Vec<String>,
    /// Ingress URL of an app backend.
    pub app_backend_ingress_url: Option<String>,
    /// Longest foreground terminal timeout.
    pub max_foreground_terminal_timeout_seconds: Option<u64>,
    /// Path of the API docs.
    pub docs: String,
    /// Path of the ReDoc page.
    pub redoc: String,
    /// The model of the server's default LLM profile, when it has one (Tandem addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_model: Option<String>,
    /// True when the default profile is the scripted demo LLM (Tandem addition).
    #[serde(default)]
    pub demo: bool,
    /// The home folder of the user the server runs as: a client's default workspace folder.
    /// Only given to a caller with a valid session key (Tandem addition).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home_dir: Option<String>,
    /// True when the server has a desktop to show: its `/sockets/vnc/{id}` reaches a VNC
    /// server (Tandem addition; false from servers that do not say).
    #[serde(default)]
    pub desktop: bool,
}

/// First frame of an authenticating socket client: `{"type":"auth","session_api_key":"..."}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SocketAuthFrame {
    /// `auth`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The session key.
    #[serde(default)]
    pub session_api_key: Option<String>,
}

/// A client frame of `/sockets/pty/{id}` (Tandem).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PtyClientFrame {
    /// Authenticate (first frame).
    Auth {
        /// The session key.
        #[serde(default)]
        session_api_key: Option<String>,
    },
    /// Keys typed into the terminal.
    Input {
        /// The bytes, as text.
        data: String,
    },
    /// The viewer's terminal size changed.
    Resize {
        /// Rows.
        rows: u16,
        /// Columns.
        cols: u16,
    },
}

/// A text frame the server sends on `/sockets/pty/{id}` (Tandem); the terminal's output
/// itself comes as binary frames.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum PtyServerFrame {
    /// A client frame was refused, or the shell failed.
    Error {
        /// Machine-readable code (`invalid_frame`), when there is one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        /// What went wrong.
        detail: String,
    },
}

impl PtyServerFrame {
    /// An error frame.
    pub fn error(code: Option<&str>, detail: impl Into<String>) -> Self {
        Self::Error {
            code: code.map(str::to_owned),
            detail: detail.into(),
        }
    }

    /// The frame as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A text frame of `/sockets/vnc/{id}` (Tandem); the desktop itself comes as binary RFB frames.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum VncServerFrame {
    /// The desktop cannot be shown: the server has none, or its VNC server does not answer.
    Error {
        /// Why.
        message: String,
    },
}

impl VncServerFrame {
    /// An error frame.
    pub fn error(message: impl Into<String>) -> Self {
        Self::Error {
            message: message.into(),
        }
    }

    /// The frame as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// One entry of the workspace tree (Tandem).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkspaceEntry {
    /// Path relative to the workspace root, `/`-separated.
    pub path: String,
    /// `file`, `dir` or `symlink`.
    pub kind: String,
    /// Bytes (files only).
    pub size: Option<u64>,
    /// Modification time, milliseconds since the epoch.
    pub mtime_ms: Option<u64>,
}

/// `GET /api/conversations/{id}/workspace/tree` (Tandem).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkspaceTree {
    /// Absolute workspace root.
    pub root: String,
    /// Entries, depth-first, sorted by path.
    pub entries: Vec<WorkspaceEntry>,
    /// Whether the listing was cut at the entry limit.
    pub truncated: bool,
}

/// `GET /api/conversations/{id}/workspace/file` (Tandem).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkspaceFile {
    /// Path relative to the workspace root.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Modification time, milliseconds since the epoch (pass it back to detect conflicts).
    pub mtime_ms: u64,
    /// Whether the file is binary (then `content` is `null`).
    pub binary: bool,
    /// The text, when it is text.
    pub content: Option<String>,
}

/// `PUT /api/conversations/{id}/workspace/file` (Tandem).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WriteWorkspaceFileRequest {
    /// Path relative to the workspace root (or absolute inside it).
    pub path: String,
    /// The new text.
    pub content: String,
    /// The `mtime_ms` the editor read; a different current one answers 409.
    #[serde(default)]
    pub expected_mtime_ms: Option<u64>,
}

/// One changed file in a workspace diff (Tandem).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct FileDiff {
    /// Path relative to the workspace root.
    pub path: String,
    /// `added`, `modified` or `deleted`.
    pub status: String,
    /// Unified diff (empty for binary files).
    pub diff: String,
    /// Whether either side is binary.
    pub binary: bool,
}

/// `POST /api/conversations/{id}/workspace/reject-hunk` (Tandem): takes one hunk of a file's
/// changes back out of the file, and tells the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RejectHunkRequest {
    /// The file, relative to the workspace root (as in the diff).
    pub path: String,
    /// The hunk as the diff shows it, from its `@@ -a,b +c,d @@` line to the line before the
    /// next hunk; a hunk no longer in the file's diff answers 409.
    pub hunk: String,
    /// Why (told to the agent with the hunk).
    #[serde(default)]
    pub reason: Option<String>,
}

/// What a rejected hunk did (Tandem).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct RejectHunkResponse {
    /// The file.
    pub path: String,
    /// Whether the file still exists (rejecting all of an added file removes it).
    pub exists: bool,
    /// The file's size and modification time after the revert (when it exists).
    #[serde(default)]
    pub file: Option<WorkspaceFile>,
    /// Whether the agent was told (a message it reads at its next step).
    pub agent_told: bool,
}

/// `GET /api/conversations/{id}/workspace/diff` (Tandem): changes since the baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct WorkspaceDiff {
    /// When the baseline was taken (ISO 8601 UTC).
    pub baseline_at: String,
    /// Changed files, sorted by path.
    pub files: Vec<FileDiff>,
}
