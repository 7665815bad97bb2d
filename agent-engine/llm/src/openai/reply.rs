//! Reading replies leniently: our own serde types over OpenAI's `chat.completion` object that
//! ignore unknown fields, accept `null` anywhere, take content as a string or a list of parts
//! and arguments as a string or an object. [`Assembled`] is what a JSON reply or a finished
//! stream turns into before it takes the shape every protocol's reply takes
//! ([`provider::assembled::Assembled`]) and becomes an [`LlmResponse`](crate::LlmResponse).

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::error::LlmError;
use crate::openai::http_error::{classify, json_code, json_message};
use crate::provider;
use crate::provider::assembled::{AssembledCall, Counts, count};

/// A `chat.completion` object, or a `chat.completion.chunk` of a stream.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Completion {
    pub id: Option<String>,
    pub model: Option<String>,
    pub choices: Option<Vec<Choice>>,
    pub usage: Option<Value>,
    pub error: Option<Value>,
}

/// One choice: `message` in replies, `delta` in chunks.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct Choice {
    pub message: Option<WireMessage>,
    pub delta: Option<WireMessage>,
    pub finish_reason: Option<String>,
}

/// An assistant message or a delta of one.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct WireMessage {
    pub content: Option<Value>,
    pub reasoning_content: Option<String>,
    /// OpenRouter and Ollama call it `reasoning`.
    pub reasoning: Option<String>,
    pub tool_calls: Option<Vec<WireToolCall>>,
}

impl WireMessage {
    /// The text of `content`: a string, or the `text` of every part.
    pub fn text(&self) -> String {
        match &self.content {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect(),
            _ => String::new(),
        }
    }

    /// `reasoning_content`, or `reasoning` when that is what the server sent.
    pub fn reasoning(&self) -> Option<&str> {
        self.reasoning_content
            .as_deref()
            .or(self.reasoning.as_deref())
    }
}

/// A tool call or a fragment of one.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct WireToolCall {
    pub index: Option<u64>,
    pub id: Option<String>,
    pub function: Option<WireFunction>,
}

/// The function of a tool call.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct WireFunction {
    pub name: Option<String>,
    /// A JSON string as OpenAI sends it, or an object as some servers do.
    pub arguments: Option<Value>,
}

impl WireFunction {
    /// The arguments as text.
    pub fn arguments_text(&self) -> String {
        match &self.arguments {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => text.clone(),
            Some(other) => other.to_string(),
        }
    }
}

/// A reply put together, from one JSON object or from a whole stream.
#[derive(Debug, Default)]
pub(crate) struct Assembled {
    pub id: String,
    pub model: String,
    pub text: String,
    pub reasoning: String,
    /// `(id, name, arguments)` in order.
    pub tool_calls: Vec<(String, String, String)>,
    pub finish_reason: Option<String>,
    pub usage: Option<Value>,
}

impl Assembled {
    /// Reads a JSON reply body.
    pub fn from_json(body: &[u8], timeout: Duration) -> Result<Self, LlmError> {
        let completion: Completion = serde_json::from_slice(body).map_err(|e| {
            LlmError::MalformedResponse(format!("reply is not a chat completion: {e}"))
        })?;
        if let Some(error) = error_in_reply(&completion, timeout) {
            return Err(error);
        }
        let Some(choice) = completion.choices.into_iter().flatten().next() else {
            return Err(LlmError::MalformedResponse("reply has no choices".into()));
        };
        let message = choice.message.or(choice.delta).unwrap_or_default();
        let tool_calls = message
            .tool_calls
            .iter()
            .flatten()
            .map(|call| {
                let function = call.function.as_ref();
                (
                    call.id
                        .clone()
                        .filter(|id| !id.is_empty())
                        .unwrap_or_else(new_call_id),
                    function.and_then(|f| f.name.clone()).unwrap_or_default(),
                    function
                        .map(WireFunction::arguments_text)
                        .unwrap_or_default(),
                )
            })
            .collect();
        Ok(Self {
            id: completion.id.unwrap_or_default(),
            model: completion.model.unwrap_or_default(),
            text: message.text(),
            reasoning: message.reasoning().unwrap_or_default().to_owned(),
            tool_calls,
            finish_reason: choice.finish_reason,
            usage: completion.usage,
        })
    }
}

impl From<Assembled> for provider::assembled::Assembled {
    /// The reply in the shape every protocol's takes before it becomes an [`LlmResponse`].
    fn from(reply: Assembled) -> Self {
        Self {
            counts: Some(counts(reply.usage.as_ref().unwrap_or(&Value::Null))),
            id: reply.id,
            model: reply.model,
            text: reply.text,
            reasoning: reply.reasoning,
            tool_calls: reply
                .tool_calls
                .into_iter()
                .map(|(id, name, arguments)| AssembledCall {
                    id,
                    item_id: None,
                    name,
                    arguments,
                })
                .collect(),
            finish_reason: reply.finish_reason,
            ..Self::default()
        }
    }
}

/// An error object inside a 200 reply or a stream chunk (OpenRouter and proxies do this).
pub(crate) fn error_in_reply(completion: &Completion, timeout: Duration) -> Option<LlmError> {
    let error = completion.error.as_ref().filter(|e| !e.is_null())?;
    let wrapped = serde_json::json!({ "error": error });
    let message = json_message(&wrapped).unwrap_or_else(|| error.to_string());
    Some(classify(
        json_code(&wrapped).unwrap_or(500),
        message,
        None,
        timeout,
    ))
}

/// A call id for servers that send none.
pub(crate) fn new_call_id() -> String {
    format!("call_{}", uuid::Uuid::new_v4().simple())
}

/// Token counts of a `usage` object; zeros for whatever is missing.
fn counts(usage: &Value) -> Counts {
    let cache_read = match count(usage, "/prompt_tokens_details/cached_tokens") {
        0 => count(usage, "/prompt_cache_hit_tokens"),
        n => n,
    };
    Counts {
        prompt: count(usage, "/prompt_tokens"),
        completion: count(usage, "/completion_tokens"),
        cache_read,
        cache_write: count(usage, "/cache_creation_input_tokens"),
        reasoning: count(usage, "/completion_tokens_details/reasoning_tokens"),
    }
}

#[cfg(test)]
mod tests {
    use tandem_protocol::LlmConfig;

    use super::*;

    const T: Duration = Duration::from_secs(1);

    #[test]
    fn lenient_reply() {
        let body = br#"{"id":"x","choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],
            "reasoning":"r","tool_calls":[{"function":{"name":"f","arguments":{"k":1}}}],"extra":1},
            "finish_reason":"weird"}],"usage":null,"system_fingerprint":null}"#;
        let reply = Assembled::from_json(body, T).unwrap();
        assert_eq!(reply.text, "ab");
        assert_eq!(reply.reasoning, "r");
        assert_eq!(reply.tool_calls[0].1, "f");
        assert_eq!(reply.tool_calls[0].2, r#"{"k":1}"#);
        assert!(reply.tool_calls[0].0.starts_with("call_"));
        assert_eq!(reply.finish_reason.as_deref(), Some("weird"));
        let response = provider::assembled::Assembled::from(reply).into_response(
            &LlmConfig::new("openai/m"),
            T,
            "completion",
        );
        assert_eq!(response.usage.prompt_tokens, 0);
        assert_eq!(response.usage.response_id, "x");
    }

    #[test]
    fn error_objects_and_empty_choices() {
        let err = Assembled::from_json(br#"{"error":{"message":"upstream down","code":502}}"#, T);
        assert_eq!(
            err.unwrap_err(),
            LlmError::ServiceUnavailable {
                status: 502,
                message: "upstream down".into()
            }
        );
        assert!(matches!(
            Assembled::from_json(br#"{"choices":[]}"#, T),
            Err(LlmError::MalformedResponse(_))
        ));
    }

    #[test]
    fn usage_details_and_cost() {
        let usage = serde_json::json!({"prompt_tokens": 100, "completion_tokens": 10,
            "prompt_tokens_details": {"cached_tokens": 40},
            "completion_tokens_details": {"reasoning_tokens": 3}});
        let mut config = LlmConfig::new("openai/m");
        config.input_cost_per_token = Some(0.001);
        config.output_cost_per_token = Some(0.01);
        let response = provider::assembled::Assembled::from(Assembled {
            usage: Some(usage),
            id: "r".into(),
            ..Assembled::default()
        })
        .into_response(&config, T, "completion");
        assert_eq!(response.usage.cache_read_tokens, 40);
        assert_eq!(response.usage.reasoning_tokens, 3);
        assert_eq!(response.usage.per_turn_token, 110);
        assert!((response.cost - 0.2).abs() < 1e-9);
        assert_eq!(response.message.content, Vec::new());
    }
}
