//! `tandem-llm`: the engine's view of a language model.
//!
//! [`Llm`] is the one trait the agent loop calls; each wire protocol is a client implementing
//! it ([`OpenAiChat`] for OpenAI Chat Completions and every OpenAI-compatible server). Clients
//! retry retryable failures with backoff (honouring `retry-after`), measure latency and
//! tokens, and report failures as [`LlmError`]s with an upstream-compatible code.
//!
//! Depends on `tandem-protocol` only; knows nothing of conversations, tools or servers.

mod anthropic;
pub mod completion_log;
mod error;
pub mod held_env;
mod openai;
pub mod prices;
pub mod prompt_tools;
pub mod provider;
mod responses;
mod retry;
pub mod router;
pub mod tokens;

use std::time::Duration;

use futures::future::BoxFuture;
use tandem_protocol::{LlmConfig, Message, TokenUsage};
use tokio_util::sync::CancellationToken;

pub use anthropic::{ANTHROPIC_VERSION, AnthropicMessages, default_max_tokens, supports_thinking};
pub use completion_log::LoggingLlm;
pub use error::{LlmError, Result};
pub use openai::OpenAiChat;
pub use prompt_tools::PromptToolCalling;
pub use provider::{Protocol, Route, WireOptions, client_for};
pub use responses::OpenAiResponses;
pub use retry::{RetryNotice, RetryPolicy};
pub use router::{FallbackRouter, MultimodalRouter, RandomRouter, RoundRobinRouter};

/// One completion request.
#[derive(Debug, Clone, Default)]
pub struct LlmRequest {
    /// The conversation as the model sees it (system first).
    pub messages: Vec<Message>,
    /// Tools in OpenAI function format: `{"type":"function","function":{name,description,parameters}}`.
    pub tools: Vec<serde_json::Value>,
    /// Provider prompt-cache key (the conversation id).
    pub prompt_cache_key: Option<String>,
    /// Where streamed deltas go, when the caller wants them (streaming is used when set).
    pub on_delta: Option<tokio::sync::mpsc::UnboundedSender<StreamDelta>>,
    /// Where each retry of a failed attempt is announced before its wait, when the caller
    /// wants to show the schedule.
    pub on_retry: Option<tokio::sync::mpsc::UnboundedSender<RetryNotice>>,
}

/// A piece of a streamed reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StreamDelta {
    /// Text delta.
    pub content: Option<String>,
    /// Reasoning delta.
    pub reasoning_content: Option<String>,
}

/// A completed reply.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmResponse {
    /// Provider response id (`chatcmpl-...`).
    pub id: String,
    /// The model that answered.
    pub model: String,
    /// The assistant message: text content and/or tool calls (arguments as the model wrote them).
    pub message: Message,
    /// `stop`, `tool_calls`, `length`, ... as the provider said it.
    pub finish_reason: Option<String>,
    /// Token counts of this call.
    pub usage: TokenUsage,
    /// Cost of this call in USD (0 when the price is unknown).
    pub cost: f64,
    /// Wall time of the successful attempt.
    pub latency: Duration,
}

/// A language model the agent can call.
pub trait Llm: Send + Sync {
    /// The configuration (model, usage id, ...).
    fn config(&self) -> &LlmConfig;

    /// Completes `request`; cancelling `cancel` aborts the call with [`LlmError::Cancelled`].
    fn completion<'a>(
        &'a self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>>;
}

/// The client an agent uses for `config`: the wire protocol its `provider/model` name calls
/// for, tools described in the prompt when the model has no native function calling, and raw
/// completion logs when `log_completions` is on. What the CLI, the server and the desktop all
/// build their agents with.
pub fn agent_llm(config: LlmConfig) -> Result<std::sync::Arc<dyn Llm>> {
    let prompt_tools = prompt_tools::needs_prompt_tools(&config);
    let client = client_for(config)?;
    let client: std::sync::Arc<dyn Llm> = if prompt_tools {
        std::sync::Arc::new(PromptToolCalling::new(client))
    } else {
        client
    };
    Ok(match LoggingLlm::from_config(client) {
        Ok(logging) => std::sync::Arc::new(logging),
        Err(plain) => plain,
    })
}
