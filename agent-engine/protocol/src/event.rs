//! Events: the append-only log of a conversation, and the frames of its WebSocket stream.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::kind::tagged_enum;
use crate::{
    Action, Content, Extra, Message, MessageToolCall, Observation, SecurityRisk, TextContent,
};

/// Who an event comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The agent (LLM output and the agent's own errors).
    Agent,
    /// The person or client.
    User,
    /// Tools and the engine itself.
    Environment,
}

/// Fields every event has.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct EventBase {
    /// UUID (dashed).
    pub id: String,
    /// ISO 8601 local time without zone, microseconds (`2026-11-22T12:36:29.858788`).
    pub timestamp: String,
    /// Who the event comes from.
    pub source: Source,
    /// Previous event on the active branch, or the action an observation answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
}

impl EventBase {
    /// A fresh id and the current time.
    pub fn new(source: Source, parent_id: Option<String>) -> Self {
        Self {
            id: new_event_id(),
            timestamp: now_timestamp(),
            source,
            parent_id,
        }
    }
}

/// A new random event id.
pub fn new_event_id() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// The current local time in the upstream event timestamp format.
pub fn now_timestamp() -> String {
    chrono::Local::now()
        .naive_local()
        .format("%Y-%m-%dT%H:%M:%S%.6f")
        .to_string()
}

/// The system prompt and the tools offered to the model; the first event of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SystemPromptEvent {
    #[serde(flatten)]
    #[allow(missing_docs)]
    pub base: EventBase,
    /// The rendered system prompt.
    pub system_prompt: TextContent,
    /// The tools, as upstream describes them (`ToolDefinition` JSON).
    #[serde(default)]
    pub tools: Vec<serde_json::Value>,
    /// Context appended per turn, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dynamic_context: Option<TextContent>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// A chat message from the user or a text reply from the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct MessageEvent {
    #[serde(flatten)]
    #[allow(missing_docs)]
    pub base: EventBase,
    /// The message.
    pub llm_message: Message,
    /// The LLM response that produced it (agent messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm_response_id: Option<String>,
    /// Skills activated by this message's keywords.
    #[serde(default)]
    pub activated_skills: Vec<String>,
    /// Extra content added for the LLM (e.g. skill text), not shown as the message.
    #[serde(default)]
    pub extended_content: Vec<Content>,
    /// Free-form sender label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<String>,
    /// Critic result, if a critic ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critic_result: Option<serde_json::Value>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// A tool call the agent made. `action` is absent when the call could not be parsed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ActionEvent {
    #[serde(flatten)]
    #[allow(missing_docs)]
    pub base: EventBase,
    /// Text the model wrote alongside the call.
    #[serde(default)]
    pub thought: Vec<Content>,
    /// Reasoning text from OpenAI-compatible servers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Thinking blocks (Anthropic).
    #[serde(default)]
    pub thinking_blocks: Vec<serde_json::Value>,
    /// Responses API reasoning item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses_reasoning_item: Option<serde_json::Value>,
    /// The parsed action; absent when the tool is unknown or the arguments are malformed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Action>,
    /// The tool the model called.
    pub tool_name: String,
    /// The provider's id of the call.
    pub tool_call_id: String,
    /// The raw call.
    pub tool_call: MessageToolCall,
    /// The LLM response this call came from; calls of one response share it.
    pub llm_response_id: String,
    /// Risk the model (or the analyzer) assigned.
    #[serde(default)]
    pub security_risk: SecurityRisk,
    /// Critic result, if a critic ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critic_result: Option<serde_json::Value>,
    /// One-line summary (`tool: args`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// What a tool returned for an action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ObservationEvent {
    #[serde(flatten)]
    #[allow(missing_docs)]
    pub base: EventBase,
    /// The tool.
    pub tool_name: String,
    /// The call answered.
    pub tool_call_id: String,
    /// The result.
    pub observation: Observation,
    /// The `ActionEvent` answered.
    pub action_id: String,
    /// Extra content for the LLM.
    #[serde(default)]
    pub extended_content: Vec<Content>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// How an error should be treated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ErrorClassification {
    /// `agent_action`, `transient`, `internal`, `auth`, ...
    pub kind: String,
    /// Whether trying again may succeed.
    pub retryable: bool,
    /// What the user should do: `retry`, `none`, `fix_config`, ...
    #[serde(default = "none")]
    pub user_action: String,
    /// Id for correlating with logs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_id: Option<String>,
}

fn none() -> String {
    "none".to_owned()
}

impl ErrorClassification {
    /// An error in the agent's tool call that the model can fix by trying again.
    pub fn agent_action() -> Self {
        Self {
            kind: "agent_action".into(),
            retryable: true,
            user_action: "retry".into(),
            error_id: None,
        }
    }

    /// An engine-side error nobody can retry.
    pub fn internal() -> Self {
        Self {
            kind: "internal".into(),
            retryable: false,
            user_action: "none".into(),
            error_id: None,
        }
    }
}

/// An error the model sees as the result of its tool call (unknown tool, malformed arguments,
/// a restart while the tool ran). The loop continues.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct AgentErrorEvent {
    #[serde(flatten)]
    #[allow(missing_docs)]
    pub base: EventBase,
    /// The tool called.
    pub tool_name: String,
    /// The call answered.
    pub tool_call_id: String,
    /// What went wrong, for the model.
    pub error: String,
    /// How to treat it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classification: Option<ErrorClassification>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// The user rejected a pending action; the tool never ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct UserRejectObservation {
    #[serde(flatten)]
    #[allow(missing_docs)]
    pub base: EventBase,
    /// The tool.
    pub tool_name: String,
    /// The call answered.
    pub tool_call_id: String,
    /// Why, for the model.
    #[serde(default = "rejected")]
    pub rejection_reason: String,
    /// `user` (or `hook`).
    #[serde(default = "user")]
    pub rejection_source: String,
    /// The rejected `ActionEvent`.
    pub action_id: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

fn rejected() -> String {
    "User rejected the action".to_owned()
}
fn user() -> String {
    "user".to_owned()
}

macro_rules! bare_event {
    ($($(#[$m:meta])* $name:ident,)*) => {$(
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
        pub struct $name {
            #[serde(flatten)]
            #[allow(missing_docs)]
            pub base: EventBase,
            /// Fields this version does not know, kept verbatim.
            #[serde(flatten)]
            #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
            pub extra: Extra,
        }

        impl $name {
            /// A new event of this kind.
            pub fn new(source: Source, parent_id: Option<String>) -> Self {
                Self { base: EventBase::new(source, parent_id), extra: Extra::new() }
            }
        }
    )*};
}

bare_event! {
    /// The user paused the run; the in-flight step finished first.
    PauseEvent,
    /// The user interrupted the run; the in-flight LLM call and tool were cancelled.
    InterruptEvent,
    /// Someone asked for the history to be condensed.
    CondensationRequest,
}

/// The run stopped on an error outside the model's control (LLM failure, budget, ...).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ConversationErrorEvent {
    #[serde(flatten)]
    #[allow(missing_docs)]
    pub base: EventBase,
    /// Machine-readable code, e.g. `LLMAuthenticationError`.
    pub code: String,
    /// Human-readable detail.
    pub detail: String,
    /// How to treat it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classification: Option<ErrorClassification>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Older events were summarised; the LLM view drops `forgotten_event_ids` and inserts the
/// summary at `summary_offset`. The log itself keeps everything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct Condensation {
    #[serde(flatten)]
    #[allow(missing_docs)]
    pub base: EventBase,
    /// Events no longer shown to the LLM.
    #[serde(default)]
    pub forgotten_event_ids: Vec<String>,
    /// Summary of what was forgotten.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Where in the view the summary goes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_offset: Option<i64>,
    /// The summarising LLM response.
    #[serde(default)]
    pub llm_response_id: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// A change to one field of the conversation state (`key` = field, `value` = new value), or
/// with `key: "full_state"` the whole state (sent on subscribe and after each run; never
/// persisted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ConversationStateUpdateEvent {
    #[serde(flatten)]
    #[allow(missing_docs)]
    pub base: EventBase,
    /// The state field.
    #[serde(default)]
    pub key: String,
    /// Its new value.
    #[serde(default)]
    pub value: serde_json::Value,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// A streamed piece of the model's reply (transient: never persisted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct StreamingDeltaEvent {
    #[serde(flatten)]
    #[allow(missing_docs)]
    pub base: EventBase,
    /// Text delta.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    /// Reasoning delta.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// An error about a client's WebSocket frame (WebSocket only; never persisted).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ServerErrorEvent {
    #[serde(flatten)]
    #[allow(missing_docs)]
    pub base: EventBase,
    /// Machine-readable code.
    pub code: String,
    /// What was wrong.
    pub detail: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

tagged_enum! {
    /// One event of a conversation, discriminated by `kind`.
    pub enum Event tag "kind" {
        /// System prompt and tools.
        SystemPrompt(SystemPromptEvent) = "SystemPromptEvent",
        /// A user or agent message.
        Message(MessageEvent) = "MessageEvent",
        /// A tool call.
        Action(ActionEvent) = "ActionEvent",
        /// A tool result.
        Observation(ObservationEvent) = "ObservationEvent",
        /// A tool-call error the model sees.
        AgentError(AgentErrorEvent) = "AgentErrorEvent",
        /// A rejected action.
        UserReject(UserRejectObservation) = "UserRejectObservation",
        /// The run was paused.
        Pause(PauseEvent) = "PauseEvent",
        /// The run was interrupted.
        Interrupt(InterruptEvent) = "InterruptEvent",
        /// The run stopped on an error.
        ConversationError(ConversationErrorEvent) = "ConversationErrorEvent",
        /// Condensation was requested.
        CondensationRequest(CondensationRequest) = "CondensationRequest",
        /// History was condensed.
        Condensation(Condensation) = "Condensation",
        /// A state field changed.
        StateUpdate(ConversationStateUpdateEvent) = "ConversationStateUpdateEvent",
        /// A streamed delta (transient).
        StreamingDelta(StreamingDeltaEvent) = "StreamingDeltaEvent",
        /// A WebSocket frame error (transient).
        ServerError(ServerErrorEvent) = "ServerErrorEvent",
    }
}

impl Event {
    /// The common fields, `None` for unknown kinds.
    pub fn base(&self) -> Option<&EventBase> {
        Some(match self {
            Self::SystemPrompt(e) => &e.base,
            Self::Message(e) => &e.base,
            Self::Action(e) => &e.base,
            Self::Observation(e) => &e.base,
            Self::AgentError(e) => &e.base,
            Self::UserReject(e) => &e.base,
            Self::Pause(e) => &e.base,
            Self::Interrupt(e) => &e.base,
            Self::CondensationRequest(e) => &e.base,
            Self::ConversationError(e) => &e.base,
            Self::Condensation(e) => &e.base,
            Self::StateUpdate(e) => &e.base,
            Self::StreamingDelta(e) => &e.base,
            Self::ServerError(e) => &e.base,
            Self::Unknown(_) => return None,
        })
    }

    /// The event id (also read from unknown kinds).
    pub fn id(&self) -> &str {
        match self.base() {
            Some(b) => &b.id,
            None => self.raw_str("id"),
        }
    }

    /// The timestamp (also read from unknown kinds).
    pub fn timestamp(&self) -> &str {
        match self.base() {
            Some(b) => &b.timestamp,
            None => self.raw_str("timestamp"),
        }
    }

    /// The source, `None` for unknown kinds without a readable one.
    pub fn source(&self) -> Option<Source> {
        match self.base() {
            Some(b) => Some(b.source),
            None => match self.raw_str("source") {
                "agent" => Some(Source::Agent),
                "user" => Some(Source::User),
                "environment" => Some(Source::Environment),
                _ => None,
            },
        }
    }

    fn raw_str(&self, key: &str) -> &str {
        match self {
            Self::Unknown(v) => v.get(key).and_then(|s| s.as_str()).unwrap_or(""),
            _ => "",
        }
    }

    /// Whether this kind is only streamed, never written to the log.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::StreamingDelta(_) | Self::ServerError(_) => true,
            Self::StateUpdate(e) => e.key == "full_state",
            _ => false,
        }
    }

    /// A state update event.
    pub fn state_update(key: &str, value: serde_json::Value, parent_id: Option<String>) -> Self {
        Self::StateUpdate(ConversationStateUpdateEvent {
            base: EventBase::new(Source::Environment, parent_id),
            key: key.to_owned(),
            value,
            extra: Extra::new(),
        })
    }
}
