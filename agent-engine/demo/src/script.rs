//! What the scripted server answers: [`Step`]s, consumed in order, or made by a [`Responder`].
//!
//! Everything here deserialises from JSON so that a script can live in a file (see the crate
//! docs for the format).

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Makes the answer to a request: called with the request body and the index of the request
/// among those answered by the script or responder (requests answered by the canned no-tools
/// text do not count), starting at 0.
pub type Responder = Arc<dyn Fn(&Value, usize) -> Step + Send + Sync>;

/// A whole script: the steps, and optionally the text that answers requests without tools
/// (title and summary calls) so that they do not consume steps.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "ScriptFile")]
pub struct Script {
    /// Answers, in order; each request consumes one.
    pub steps: Vec<Step>,
    /// Answer to requests that carry no `tools`, when set.
    pub no_tools_text: Option<String>,
}

/// A script file is either a bare list of steps or an object with `steps` and `no_tools_text`.
#[derive(Deserialize)]
#[serde(untagged)]
enum ScriptFile {
    Steps(Vec<Step>),
    Full {
        #[serde(default)]
        steps: Vec<Step>,
        #[serde(default)]
        no_tools_text: Option<String>,
    },
}

impl From<ScriptFile> for Script {
    fn from(file: ScriptFile) -> Self {
        match file {
            ScriptFile::Steps(steps) => Self {
                steps,
                no_tools_text: None,
            },
            ScriptFile::Full {
                steps,
                no_tools_text,
            } => Self {
                steps,
                no_tools_text,
            },
        }
    }
}

impl Script {
    /// A script of these steps.
    pub fn new(steps: impl IntoIterator<Item = Step>) -> Self {
        Self {
            steps: steps.into_iter().collect(),
            no_tools_text: None,
        }
    }

    /// Answers requests without tools with `text` instead of consuming a step.
    pub fn with_no_tools_text(mut self, text: impl Into<String>) -> Self {
        self.no_tools_text = Some(text.into());
        self
    }

    /// Parses a script from JSON text.
    pub fn from_json(text: &str) -> serde_json::Result<Self> {
        serde_json::from_str(text)
    }
}

impl From<Vec<Step>> for Script {
    fn from(steps: Vec<Step>) -> Self {
        Self::new(steps)
    }
}

/// One answer of the scripted server, discriminated by `type`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Step {
    /// A successful completion (JSON or SSE, as the request asks).
    Reply(Reply),
    /// An error status with an OpenAI-style error body.
    Error(ErrorReply),
    /// A 200 reply whose body is not valid JSON (or, when streaming, an SSE event whose data is
    /// not valid JSON).
    Garbled {
        /// Wait this long before answering.
        #[serde(default)]
        delay_ms: u64,
    },
    /// A reply cut in half: the first half of the JSON body, or the first half of the SSE
    /// chunks with no finish reason and no `[DONE]`.
    Truncated(Reply),
    /// A verbatim HTTP answer, for replaying recorded provider traffic.
    Raw(RawReply),
}

impl Step {
    /// A reply with this text.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Reply(Reply::text(text))
    }

    /// A reply with one tool call.
    pub fn tool_call(name: impl Into<String>, arguments: Value) -> Self {
        Self::Reply(Reply::tool_calls(vec![ToolCallSpec::new(name, arguments)]))
    }

    /// A reply with these tool calls.
    pub fn tool_calls(calls: Vec<ToolCallSpec>) -> Self {
        Self::Reply(Reply::tool_calls(calls))
    }

    /// An error with this status and message.
    pub fn error(status: u16, message: impl Into<String>) -> Self {
        Self::Error(ErrorReply {
            status,
            body: Some(Value::String(message.into())),
            ..ErrorReply::default()
        })
    }

    /// A 429 asking to wait `retry_after` (a `retry-after` header value: seconds or HTTP-date).
    pub fn rate_limited(retry_after: impl Into<String>) -> Self {
        Self::Error(ErrorReply {
            status: 429,
            body: Some(Value::String(
                "Rate limit reached, please retry later.".into(),
            )),
            retry_after: Some(retry_after.into()),
            ..ErrorReply::default()
        })
    }
}

/// A successful completion.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reply {
    /// The assistant's text, if any.
    pub text: Option<String>,
    /// Reasoning text: `reasoning_content` in Chat (as DeepSeek, vLLM and LiteLLM send it), a
    /// signed `thinking` block in Anthropic Messages (when `thinking` is empty), a reasoning
    /// item's summary in Responses.
    pub reasoning: Option<String>,
    /// Anthropic thinking blocks, in order, before the text (ignored by the other protocols).
    pub thinking: Vec<ThinkingSpec>,
    /// Responses reasoning item `encrypted_content`; made up from the reasoning when the
    /// request asks for `reasoning.encrypted_content` and this is absent.
    pub encrypted_reasoning: Option<String>,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCallSpec>,
    /// Token counts; computed from the request and reply sizes when absent.
    pub usage: Option<UsageSpec>,
    /// Prompt tokens written to the provider cache (Anthropic `cache_creation_input_tokens`).
    pub cache_write_tokens: u64,
    /// Leave `usage` out of the reply entirely.
    pub no_usage: bool,
    /// `stop` or `tool_calls` by default.
    pub finish_reason: Option<String>,
    /// Wait this long before answering.
    pub delay_ms: u64,
    /// When streaming, wait this long between chunks.
    pub chunk_delay_ms: u64,
    /// The reply's `model`; the request's model when absent.
    pub model: Option<String>,
}

impl Reply {
    /// A reply with this text.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// A reply with these tool calls.
    pub fn tool_calls(calls: Vec<ToolCallSpec>) -> Self {
        Self {
            tool_calls: calls,
            ..Self::default()
        }
    }
}

/// A tool call in a scripted reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallSpec {
    /// The call id; `call_<request>_<position>` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The tool's name.
    pub name: String,
    /// The arguments: a JSON value (serialised), or a string sent verbatim so that malformed
    /// JSON can be scripted.
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

impl ToolCallSpec {
    /// A call of `name` with these arguments.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self {
            id: None,
            name: name.into(),
            arguments,
        }
    }

    /// The arguments as they go on the wire.
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            Value::String(raw) => raw.clone(),
            other => other.to_string(),
        }
    }
}

/// Scripted token counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct UsageSpec {
    /// Prompt tokens.
    pub prompt_tokens: u64,
    /// Completion tokens.
    pub completion_tokens: u64,
    /// Prompt tokens served from the cache (`prompt_tokens_details.cached_tokens`).
    pub cached_tokens: u64,
    /// Reasoning tokens (`completion_tokens_details.reasoning_tokens`).
    pub reasoning_tokens: u64,
}

/// An Anthropic thinking block in a scripted reply: readable (`thinking` with an optional
/// `signature`, made up when absent) or redacted (`redacted` opaque data).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ThinkingSpec {
    /// The reasoning text.
    pub thinking: String,
    /// The signature; `sig_<request>_<position>` when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// Opaque data of a `redacted_thinking` block (the block is redacted when set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redacted: Option<String>,
}

impl ThinkingSpec {
    /// A readable thinking block with this signature.
    pub fn signed(thinking: impl Into<String>, signature: impl Into<String>) -> Self {
        Self {
            thinking: thinking.into(),
            signature: Some(signature.into()),
            redacted: None,
        }
    }

    /// A redacted thinking block.
    pub fn redacted(data: impl Into<String>) -> Self {
        Self {
            redacted: Some(data.into()),
            ..Self::default()
        }
    }
}

/// An error answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ErrorReply {
    /// HTTP status.
    pub status: u16,
    /// The body: a string becomes OpenAI's `{"error":{"message":...}}` (or is sent verbatim
    /// when `content_type` is set); any other JSON value is sent as it is. A generic OpenAI
    /// error body when absent.
    pub body: Option<Value>,
    /// The `retry-after` header: seconds or an HTTP-date (a JSON number is accepted too).
    #[serde(deserialize_with = "string_or_number")]
    pub retry_after: Option<String>,
    /// Content type of a verbatim string body (e.g. `text/html`).
    pub content_type: Option<String>,
    /// Wait this long before answering.
    pub delay_ms: u64,
}

/// A verbatim answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RawReply {
    /// HTTP status; 200 when 0.
    pub status: u16,
    /// Content type; `application/json` when absent.
    pub content_type: Option<String>,
    /// Extra headers.
    pub headers: Vec<(String, String)>,
    /// The body, sent byte for byte.
    pub body: String,
    /// Wait this long before answering.
    pub delay_ms: u64,
}

fn string_or_number<'de, D>(deserializer: D) -> Result<Option<String>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    let value = Option::<Value>::deserialize(deserializer)?;
    Ok(match value {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s),
        Some(other) => Some(other.to_string()),
    })
}
