//! DTOs of the OpenAI-compatible gateway (`/v1/models`, `/v1/chat/completions`,
//! `/v1/responses`) and of the server's LLM profiles (`/api/profiles`), in the shapes of
//! OpenAI's API and of the OpenHands agent server 1.58 respectively. Requests are read
//! tolerantly: unknown OpenAI parameters are accepted and kept in `extra`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::{Extra, LlmConfig};

/// A chat message of the OpenAI-compatible gateway (`content` is a string or a list of parts).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChatMessage {
    /// `system`, `user`, `assistant`, `tool`, `developer`.
    pub role: String,
    /// Text, or `[{"type":"text","text"}, {"type":"image_url","image_url":{"url"}}]`.
    #[serde(default)]
    pub content: Value,
}

/// `stream_options` of a chat completion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct StreamOptions {
    /// End the stream with a chunk carrying `usage` (and `choices: []`).
    #[serde(default)]
    pub include_usage: bool,
}

/// `POST /v1/chat/completions`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChatCompletionRequest {
    /// `openhands_{profile}` (or `tandem_{profile}`).
    pub model: String,
    /// The chat so far; the latest user message is the task, `system` / `developer` messages
    /// are appended to the agent's system prompt of a new conversation.
    pub messages: Vec<ChatMessage>,
    /// Stream the answer as `chat.completion.chunk` events.
    #[serde(default)]
    pub stream: bool,
    /// Streaming options.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_options: Option<StreamOptions>,
    /// Other OpenAI parameters (accepted, not used).
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Token counts in OpenAI's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct ChatUsage {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Sum of both.
    pub total_tokens: u64,
}

/// One choice of a completion.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChatChoice {
    /// Always 0.
    pub index: u32,
    /// The assistant's message.
    pub message: ChatMessage,
    /// `stop`.
    pub finish_reason: String,
}

/// `POST /v1/chat/completions` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChatCompletionResponse {
    /// `chatcmpl-...`.
    pub id: String,
    /// `chat.completion`.
    pub object: String,
    /// Unix seconds.
    pub created: i64,
    /// The model as requested.
    pub model: String,
    /// One choice.
    pub choices: Vec<ChatChoice>,
    /// Tokens this request's LLM calls used.
    pub usage: ChatUsage,
}

/// What a streamed chunk adds to the assistant's message.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct ChatDelta {
    /// `assistant`, on the first chunk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// Text to append.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}

/// One choice of a streamed chunk.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChatChunkChoice {
    /// Always 0.
    pub index: u32,
    /// What this chunk adds.
    pub delta: ChatDelta,
    /// `stop` on the last content chunk, else `null`.
    pub finish_reason: Option<String>,
}

/// A `chat.completion.chunk` of a streamed completion (`data:` of the SSE stream, which ends
/// with `data: [DONE]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ChatCompletionChunk {
    /// `chatcmpl-...`, the same on every chunk.
    pub id: String,
    /// `chat.completion.chunk`.
    pub object: String,
    /// Unix seconds.
    pub created: i64,
    /// The model as requested.
    pub model: String,
    /// One choice, or none on the usage chunk.
    pub choices: Vec<ChatChunkChoice>,
    /// On the last chunk when `stream_options.include_usage` was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<ChatUsage>,
}

/// One model of `GET /v1/models`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ModelEntry {
    /// `openhands_{profile}`.
    pub id: String,
    /// `model`.
    pub object: String,
    /// Unix seconds.
    pub created: i64,
    /// `tandem`.
    pub owned_by: String,
}

/// `GET /v1/models`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ModelList {
    /// `list`.
    pub object: String,
    /// The profiles.
    pub data: Vec<ModelEntry>,
}

/// An error in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OpenAiErrorResponse {
    /// The error.
    pub error: OpenAiError,
}

/// The inner error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OpenAiError {
    /// For people.
    pub message: String,
    /// `invalid_request_error`, `authentication_error`, `not_found_error`, `server_error`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// The request field at fault, if one is.
    #[serde(default)]
    pub param: Option<String>,
    /// Machine-readable code.
    pub code: Option<String>,
}

/// One item of a Responses `input` list: a message (`type` `message` or absent).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResponseInputItem {
    /// `message` (the only kind the gateway takes).
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `user`, `system`, `developer`, `assistant`.
    #[serde(default)]
    pub role: String,
    /// Text, or `[{"type":"input_text","text"}, {"type":"input_image","image_url"}]`.
    #[serde(default)]
    pub content: Value,
}

/// The `input` of a Responses request: text or message items.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum ResponseInput {
    /// One user message.
    Text(String),
    /// Messages; the system and developer ones become instructions.
    Items(Vec<ResponseInputItem>),
}

/// `POST /v1/responses`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResponseRequest {
    /// `openhands_{profile}` (or `tandem_{profile}`).
    pub model: String,
    /// The user's turn.
    pub input: ResponseInput,
    /// Appended to the agent's system prompt of a new conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// Continues the conversation of that response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_response_id: Option<String>,
    /// Stream the standard `response.*` events.
    #[serde(default)]
    pub stream: bool,
    /// Echoed in the response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<BTreeMap<String, String>>,
    /// Other OpenAI parameters (accepted, not used).
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// An `output_text` part of a Responses message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResponseOutputText {
    /// `output_text`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The text.
    pub text: String,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub annotations: Vec<Value>,
}

impl ResponseOutputText {
    /// An `output_text` part of `text`.
    pub fn new(text: impl Into<String>) -> Self {
        Self {
            kind: "output_text".into(),
            text: text.into(),
            annotations: Vec::new(),
        }
    }
}

/// The assistant message of a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResponseOutputMessage {
    /// `msg_...`.
    pub id: String,
    /// `message`.
    #[serde(rename = "type")]
    pub kind: String,
    /// `assistant`.
    pub role: String,
    /// `in_progress` or `completed`.
    pub status: String,
    /// The final answer as one `output_text` part (none while in progress).
    pub content: Vec<ResponseOutputText>,
}

/// Cached prompt tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct InputTokensDetails {
    /// Prompt tokens read from the provider's cache.
    pub cached_tokens: u64,
}

/// Reasoning tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct OutputTokensDetails {
    /// Reasoning tokens.
    pub reasoning_tokens: u64,
}

/// Token counts of a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct ResponseUsage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Of which cached.
    pub input_tokens_details: InputTokensDetails,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Of which reasoning.
    pub output_tokens_details: OutputTokensDetails,
    /// Sum of input and output.
    pub total_tokens: u64,
}

/// Why a response failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResponseError {
    /// Machine-readable code.
    pub code: String,
    /// For people.
    pub message: String,
}

/// `POST /v1/responses` answer (and the `response` of its stream events).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResponseObject {
    /// `resp_...`; pass it as `previous_response_id` to continue.
    pub id: String,
    /// `response`.
    pub object: String,
    /// Unix seconds.
    pub created_at: f64,
    /// Unix seconds, once completed.
    pub completed_at: Option<f64>,
    /// `in_progress`, `completed` or `failed`.
    pub status: String,
    /// Why it failed.
    pub error: Option<ResponseError>,
    /// Always `null`.
    #[schema(value_type = Option<Object>)]
    pub incomplete_details: Option<Value>,
    /// As requested.
    pub instructions: Option<String>,
    /// As requested.
    pub metadata: BTreeMap<String, String>,
    /// The model as requested.
    pub model: String,
    /// The assistant message (empty while in progress).
    pub output: Vec<ResponseOutputMessage>,
    /// Always false.
    pub parallel_tool_calls: bool,
    /// As requested.
    pub previous_response_id: Option<String>,
    /// Always `none`: the agent's tools stay inside the server.
    pub tool_choice: String,
    /// Always empty.
    #[schema(value_type = Vec<Object>)]
    pub tools: Vec<Value>,
    /// Tokens this request's LLM calls used (`null` while in progress).
    pub usage: Option<ResponseUsage>,
}

/// One event of a streamed response (`event: <type>`, `data:` this object). The sequence is
/// `response.created`, `response.in_progress`, `response.output_item.added`,
/// `response.content_part.added`, `response.output_text.delta`, `response.output_text.done`,
/// `response.content_part.done`, `response.output_item.done`, `response.completed` (or
/// `response.failed`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ResponseStreamEvent {
    /// The event's type.
    #[serde(rename = "type")]
    pub kind: String,
    /// 0, 1, 2, ... in the order sent.
    pub sequence_number: u64,
    /// The response (`created`, `in_progress`, `completed`, `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<ResponseObject>,
    /// Index of the output item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_index: Option<u32>,
    /// The output item (`output_item.*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<ResponseOutputMessage>,
    /// Id of the output item (content and text events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_id: Option<String>,
    /// Index of the content part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content_index: Option<u32>,
    /// The content part (`content_part.*`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<ResponseOutputText>,
    /// Text added (`output_text.delta`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<String>,
    /// The whole text (`output_text.done`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Always empty (text events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<Object>>)]
    pub logprobs: Option<Vec<Value>>,
}

impl ResponseStreamEvent {
    /// An event of `kind` with nothing else set.
    pub fn new(kind: &str, sequence_number: u64) -> Self {
        Self {
            kind: kind.to_owned(),
            sequence_number,
            response: None,
            output_index: None,
            item: None,
            item_id: None,
            content_index: None,
            part: None,
            delta: None,
            text: None,
            logprobs: None,
        }
    }
}

/// One saved LLM profile of `GET /api/profiles` (never its key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProfileInfo {
    /// The profile's name.
    pub name: String,
    /// Its model.
    pub model: Option<String>,
    /// Its base URL.
    pub base_url: Option<String>,
    /// Always `null` (Tandem has no provider connections).
    pub provider_connection_id: Option<String>,
    /// Always false.
    #[serde(default)]
    pub provider_connection_broken: bool,
    /// Whether it holds an API key.
    #[serde(default)]
    pub api_key_set: bool,
}

/// `GET /api/profiles`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProfileListResponse {
    /// The saved profiles, by name.
    pub profiles: Vec<ProfileInfo>,
    /// The profile last activated, if it still exists.
    pub active_profile: Option<String>,
}

/// `GET /api/profiles/{name}`: the profile's LLM config, its secrets masked (`api_key` is
/// `null`, other secret fields `**********`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProfileDetailResponse {
    /// The profile's name.
    pub name: String,
    /// The LLM config without secrets.
    #[schema(value_type = Object)]
    pub config: Value,
    /// Whether it holds an API key.
    #[serde(default)]
    pub api_key_set: bool,
}

/// `POST /api/profiles/{name}`: save an LLM config under a name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct SaveProfileRequest {
    /// The LLM config (upstream's `LLM`).
    pub llm: LlmConfig,
    /// Whether to keep the API key with the profile (encrypted at rest).
    #[serde(default = "yes")]
    pub include_secrets: bool,
}

fn yes() -> bool {
    true
}

/// The answer of saving or deleting a profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ProfileMutationResponse {
    /// The profile's name.
    pub name: String,
    /// What happened.
    pub message: String,
}

/// `POST /api/profiles/{name}/activate`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct ActivateProfileResponse {
    /// The profile's name.
    pub name: String,
    /// What happened.
    pub message: String,
    /// Whether agent settings were changed (Tandem's server keeps none: false).
    #[serde(default)]
    pub llm_applied: bool,
}
