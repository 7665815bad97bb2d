//! [`OpenAiResponses`]: the client of the OpenAI Responses API (and servers that mirror it).
//!
//! One call is `POST {base}/responses` (base `https://api.openai.com/v1` by default) with a
//! bearer key, as JSON or as an SSE stream (when the caller wants deltas or the configuration
//! says `stream`), retried per the [`RetryPolicy`] and abandoned at once when the cancellation
//! token fires. Nothing is stored server-side (`store: false`): reasoning items come back
//! (encrypted when `enable_encrypted_reasoning`) on the assistant message and are sent back on
//! later turns. Request building lives in `request`, reply and stream assembly in `reply`.

pub(crate) mod reply;
mod request;

use std::time::Instant;

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use tandem_protocol::LlmConfig;
use tokio_util::sync::CancellationToken;

use crate::error::{LlmError, Result};
use crate::provider::transport::{Body, Transport, read_events, replay_events};
use crate::provider::{self, WireOptions};
use crate::retry::RetryPolicy;
use crate::{Llm, LlmRequest, LlmResponse, StreamDelta};

/// OpenAI Responses client. Its `Debug` output never shows the API key.
#[derive(Clone)]
pub struct OpenAiResponses {
    config: LlmConfig,
    options: WireOptions,
    wire_model: String,
    transport: Transport,
    retry: RetryPolicy,
}

impl std::fmt::Debug for OpenAiResponses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiResponses")
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

impl OpenAiResponses {
    /// A client for `config` (`openai/gpt-5-codex`, or any model with `api_mode: "responses"`).
    /// Fails with [`LlmError::Config`] for an empty model, a bad URL
    /// or a header that cannot be sent.
    pub fn new(config: LlmConfig) -> Result<Self> {
        if config.model.trim().is_empty() {
            return Err(LlmError::Config("the model name is empty".into()));
        }
        let route = provider::route(&config);
        let base = provider::base_url(&config, &route)?;
        let endpoint = format!("{base}/responses");
        let mut headers = HeaderMap::new();
        if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}"))
                .map_err(|_| LlmError::Config("the API key contains invalid characters".into()))?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let transport = Transport::new(&endpoint, headers, &config)?;
        let options = WireOptions::of(&config);
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

    /// The URL requests go to (`.../responses`).
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

    /// Parses a whole reply as received on the wire (a JSON response, or an SSE body when
    /// `content_type` is `text/event-stream`), as a call would: for recorded traffic and
    /// benchmarks.
    pub fn parse_reply(&self, content_type: &str, body: &[u8]) -> Result<LlmResponse> {
        let timeout = self.transport.timeout;
        let assembled = if content_type.starts_with("text/event-stream") {
            let text = std::str::from_utf8(body)
                .map_err(|e| LlmError::MalformedResponse(format!("stream is not UTF-8: {e}")))?;
            let mut assembler = reply::ResponseAssembler::default();
            replay_events(text, |name, data| assembler.push(name, data, None, timeout))?;
            assembler.finish()?
        } else {
            reply::ResponseAssembler::from_json(body, timeout)?
        };
        Ok(assembled.into_response(&self.config, std::time::Duration::ZERO, "responses"))
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
                let mut assembler = reply::ResponseAssembler::default();
                read_events(response, timeout, |name, data| {
                    assembler.push(name, data, on_delta, timeout)
                })
                .await?;
                assembler.finish()?
            }
            Body::Whole(bytes) => {
                let assembled = reply::ResponseAssembler::from_json(&bytes, timeout)?;
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
        let mut response = assembled.into_response(&self.config, started.elapsed(), "responses");
        // Cost and context window from the price table, as the Chat client fills them in.
        crate::prices::apply_to_response(&self.config, &mut response);
        Ok(response)
    }
}

impl Llm for OpenAiResponses {
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
        let endpoint = |model: &str, base: Option<&str>| {
            let mut config = LlmConfig::new(model);
            config.base_url = base.map(str::to_owned);
            OpenAiResponses::new(config).unwrap().endpoint().to_owned()
        };
        assert_eq!(
            endpoint("openai/gpt-5-codex", None),
            "https://api.openai.com/v1/responses"
        );
        assert_eq!(
            endpoint("openai/gpt-5", Some("http://127.0.0.1:9/v1/")),
            "http://127.0.0.1:9/v1/responses"
        );
        let mut config = LlmConfig::new("openai/x");
        config.api_key = Some("bad\nkey".into());
        assert!(matches!(
            OpenAiResponses::new(config),
            Err(LlmError::Config(_))
        ));
        assert!(matches!(
            OpenAiResponses::new(LlmConfig::new("hosted_vllm/x")),
            Err(LlmError::Config(_))
        ));
    }
}
