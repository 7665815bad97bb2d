//! [`AnthropicMessages`]: the client of Anthropic's Messages API.
//!
//! One call is `POST {base}/v1/messages` (base `https://api.anthropic.com` by default) with
//! `x-api-key` and `anthropic-version: 2023-06-01`, as JSON or as an SSE stream (when the
//! caller wants deltas or the configuration says `stream`), retried per the [`RetryPolicy`]
//! and abandoned at once when the cancellation token fires. Request building lives in
//! `request`, reply and stream assembly in `reply`.

pub(crate) mod reply;
mod request;

use std::time::Instant;

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use tandem_protocol::LlmConfig;
use tokio_util::sync::CancellationToken;

use crate::error::{LlmError, Result};
use crate::provider::transport::{Body, Transport, read_events, replay_events};
use crate::provider::{self, WireOptions};
use crate::retry::RetryPolicy;
use crate::{Llm, LlmRequest, LlmResponse, StreamDelta};

pub use request::{default_max_tokens, supports_thinking};

/// The API version header every request carries.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Anthropic Messages client. Its `Debug` output never shows the API key.
#[derive(Clone)]
pub struct AnthropicMessages {
    config: LlmConfig,
    options: WireOptions,
    wire_model: String,
    transport: Transport,
    retry: RetryPolicy,
}

impl std::fmt::Debug for AnthropicMessages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnthropicMessages")
            .field("model", &self.config.model)
            .field("endpoint", &self.transport.endpoint.as_str())
            .field(
                "api_key",
                &self.config.api_key.as_ref().map(|_| "**********"),
            )
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl AnthropicMessages {
    /// A client for `config` (`anthropic/claude-...`). A base URL ending in `/v1` is accepted
    /// as well as the bare host. Fails with [`LlmError::Config`] for an empty model, a bad URL
    /// or a header that cannot be sent.
    pub fn new(config: LlmConfig) -> Result<Self> {
        if config.model.trim().is_empty() {
            return Err(LlmError::Config("the model name is empty".into()));
        }
        let route = provider::route(&config);
        let base = provider::base_url(&config, &route)?;
        let base = base.strip_suffix("/v1").unwrap_or(&base);
        let endpoint = format!("{base}/v1/messages");
        let mut headers = HeaderMap::new();
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
            let mut value = HeaderValue::from_str(key)
                .map_err(|_| LlmError::Config("the API key contains invalid characters".into()))?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        let transport = Transport::new(&endpoint, headers, &config)?;
        let options = WireOptions::of(&config);
        // A model routed here by a bare `claude-...` name keeps its name.
        let wire_model = route.wire_model;
        let retry = RetryPolicy::from_config(&config);
        Ok(Self {
            config,
            options,
            wire_model,
            transport,
            retry,
        })
    }

    /// Replaces the retry policy taken from the configuration.
    pub fn with_retry_policy(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The URL requests go to (`.../v1/messages`).
    pub fn endpoint(&self) -> &str {
        self.transport.endpoint.as_str()
    }

    /// The request body this client sends for `request` (what goes on the wire, minus headers).
    pub fn request_body(&self, request: &LlmRequest) -> serde_json::Value {
        request::body(
            &self.config,
            &self.options,
            &self.wire_model,
            request,
            self.streams(request),
        )
    }

    /// Parses a whole reply as received on the wire (a JSON message, or an SSE body when
    /// `content_type` is `text/event-stream`), as a call would: for recorded traffic and
    /// benchmarks.
    pub fn parse_reply(&self, content_type: &str, body: &[u8]) -> Result<LlmResponse> {
        let timeout = self.transport.timeout;
        let assembled = if content_type.starts_with("text/event-stream") {
            let text = std::str::from_utf8(body)
                .map_err(|e| LlmError::MalformedResponse(format!("stream is not UTF-8: {e}")))?;
            let mut assembler = reply::MessageAssembler::default();
            replay_events(text, |name, data| assembler.push(name, data, None, timeout))?;
            assembler.finish()?
        } else {
            reply::MessageAssembler::from_json(body, timeout)?
        };
        Ok(assembled.into_response(&self.config, std::time::Duration::ZERO, "completion"))
    }

    fn streams(&self, request: &LlmRequest) -> bool {
        request.on_delta.is_some() || self.config.stream
    }

    async fn attempt(
        &self,
        body: Bytes,
        on_delta: Option<&tokio::sync::mpsc::UnboundedSender<StreamDelta>>,
    ) -> Result<LlmResponse> {
        let started = Instant::now();
        let timeout = self.transport.timeout;
        let assembled = match self.transport.post(body, started).await? {
            Body::Stream(response) => {
                let mut assembler = reply::MessageAssembler::default();
                read_events(response, timeout, |name, data| {
                    assembler.push(name, data, on_delta, timeout)
                })
                .await?;
                assembler.finish()?
            }
            Body::Whole(bytes) => {
                let assembled = reply::MessageAssembler::from_json(&bytes, timeout)?;
                // A server that ignored `stream: true` still gives the caller its text.
                if let Some(sink) = on_delta
                    && (!assembled.text.is_empty() || !assembled.reasoning.is_empty())
                {
                    let _ = sink.send(StreamDelta {
                        content: (!assembled.text.is_empty()).then(|| assembled.text.clone()),
                        reasoning_content: (!assembled.reasoning.is_empty())
                            .then(|| assembled.reasoning.clone()),
                    });
                }
                assembled
            }
        };
        let mut response = assembled.into_response(&self.config, started.elapsed(), "completion");
        // Cost and context window from the price table, as the Chat client fills them in.
        crate::prices::apply_to_response(&self.config, &mut response);
        Ok(response)
    }
}

impl Llm for AnthropicMessages {
    fn config(&self) -> &LlmConfig {
        &self.config
    }

    fn completion<'a>(
        &'a self,
        request: LlmRequest,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<LlmResponse>> {
        Box::pin(async move {
            let body = serde_json::to_vec(&self.request_body(&request))
                .map_err(|e| LlmError::Config(format!("cannot serialise the request: {e}")))?;
            let body = Bytes::from(body);
            let on_delta = request.on_delta.as_ref();
            self.retry
                .run(&cancel, |attempt| {
                    let body = body.clone();
                    let cancel = &cancel;
                    async move {
                        tracing::debug!(model = %self.config.model, endpoint = %self.transport.endpoint, attempt, "LLM request");
                        tokio::select! {
                            biased;
                            () = cancel.cancelled() => Err(LlmError::Cancelled),
                            result = self.attempt(body, on_delta) => result,
                        }
                    }
                })
                .await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_and_config_errors() {
        let endpoint = |base: Option<&str>| {
            let mut config = LlmConfig::new("anthropic/claude-sonnet-4-5");
            config.base_url = base.map(str::to_owned);
            AnthropicMessages::new(config)
                .unwrap()
                .endpoint()
                .to_owned()
        };
        assert_eq!(endpoint(None), "https://api.anthropic.com/v1/messages");
        assert_eq!(
            endpoint(Some("http://127.0.0.1:9/v1/")),
            "http://127.0.0.1:9/v1/messages"
        );
        assert_eq!(
            endpoint(Some("http://127.0.0.1:9")),
            "http://127.0.0.1:9/v1/messages"
        );
        let mut config = LlmConfig::new("anthropic/x");
        config.api_key = Some("bad\nkey".into());
        assert!(matches!(
            AnthropicMessages::new(config),
            Err(LlmError::Config(_))
        ));
        assert!(matches!(
            AnthropicMessages::new(LlmConfig::new("")),
            Err(LlmError::Config(_))
        ));
    }
}
