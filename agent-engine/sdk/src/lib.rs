//! `tandem-sdk`: the agent engine.
//!
//! A `Conversation` is an actor that owns its [`ConversationState`](tandem_protocol::ConversationState)
//! and its append-only event log; commands reach it over a channel and events leave through the
//! log (persisted first, then broadcast). The agent loop asks the [`Llm`](tandem_llm::Llm) for
//! the next actions, checks them against the confirmation policy and security analyzer, runs
//! them through the [`Tool`]s, masks secrets, and detects stuck loops.
//!
//! Depends on `tandem-protocol` and `tandem-llm`; knows nothing of HTTP servers or Tauri.

mod agent;
pub mod agent_env;
pub mod condenser;
mod context;
mod conversation;
mod credentials;
mod error;
mod persistence;
pub mod remote;
pub mod run_gate;
mod secrets;
mod security;
mod stuck;
pub mod subagent;
pub mod title;
mod tool;

pub use agent::{llm_view, tool_schemas};
pub use condenser::LlmSummarizingCondenser;
pub use context::{
    AgentContext, MAX_CONTEXT_FILE_BYTES, PromptVars, Skill, SkillActivation, load_user_skills,
    load_workspace_skills, render_system_prompt, tandem_home, user_skills_dir,
};
pub use conversation::branch;
pub use conversation::{
    Command, Conversation, ConversationClient, ConversationHandle, ConversationOptions,
    ConversationView, LLM_RETRY_KEY, QUEUE_KEY, RunState, Runtime, split_edit_note,
};
pub use credentials::{KnownCredentials, MIN_MASKED_LEN, known_credentials};
pub use error::{AgentContextError, Result, SdkError, SkillError, SkillJsonError, ToolCallError};
pub use persistence::{
    ConversationMeta, ConversationStore, EventLog, FORKED_AT, FORKED_FROM, ForkOptions, LoadedLog,
    atomic_write, unmatched_actions,
};
pub use remote::{RemoteConversation, RemoteConversationOptions, RemoteError, RemoteWorkspace};
pub use run_gate::RunGate;
pub use secrets::{Masker, SECRET_MASK, SecretError, SecretMapError, SecretRegistry, SecretSource};
pub use security::{RiskAssessment, RuleAnalyzer, lexical_normalize};
pub use stuck::{StuckDetector, StuckReason};
pub use subagent::{LocalSubAgents, SubAgentType, SubAgents, TaskError, TaskReport, TaskRequest};
pub use tandem_protocol::ToolInputError;
pub use title::generate_title;
pub use tool::{
    FnTool, MadeTools, MakeToolError, Tool, ToolAnnotations, ToolCatalog, ToolContext,
    ToolDefinition, ToolEnv, ToolRegistry, TypedTool,
};
