//! [`OpenAiChat`]: the client of OpenAI Chat Completions and every server that speaks it
//! (LiteLLM proxies, OpenRouter, vLLM, Ollama, DeepSeek, ...).
//!
//! One call is `POST {base_url}/chat/completions`, as JSON or as an SSE stream (when the caller
//! wants deltas or the configuration says `stream`), retried per the [`RetryPolicy`] and
//! abandoned at once when the cancellation token fires. Request building lives in `request`,
//! lenient reply types in `reply`, stream assembly in `stream`, and the mapping of HTTP
//! failures to [`LlmError`] in `http_error`.

pub(crate) mod http_error;
pub(crate) mod reply;
mod request;
pub(crate) mod stream;

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use tandem_protocol::LlmConfig;
use tokio_util::sync::CancellationToken;

use crate::error::{LlmError, Result};
use crate::provider::transport::{Body, Transport};
use crate::retry::RetryPolicy;
use crate::{Llm, LlmRequest, LlmResponse, StreamDelta};

/// OpenAI Chat Completions client. Its `Debug` output never shows the API key.
#[derive(Clone)]
pub struct OpenAiChat {
    config: LlmConfig,
    /// Endpoint, headers (authorization and extra headers) and timeout.
    transport: Transport,
    retry: RetryPolicy,
}

impl std::fmt::Debug for OpenAiChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiChat")
            .field("model", &self.config.model)
            .field("endpoint", &self.transport.endpoint.as_str())
            .field(
                "api_key",
                &self.config.api_key.as_ref().map(|_| "**********"),
            )
            .field("timeout", &self.transport.timeout)
            .field("retry", &self.retry)
            .finish_non_exhaustive()
    }
}

impl OpenAiChat {
    /// A client for `config`. The base URL defaults to `https://api.openai.com/v1` (or the
    /// provider's own for `deepseek/`, `openrouter/`, `ollama/`, ...). Fails with
    /// [`LlmError::Config`] for an empty model, a bad URL or a header that cannot be sent.
    pub fn new(config: LlmConfig) -> Result<Self> {
        if config.model.trim().is_empty() {
            return Err(LlmError::Config("the model name is empty".into()));
        }
        let base = crate::provider::base_url(&config, &crate::provider::route(&config))?;
        let transport = Transport::new(
            &format!("{base}/chat/completions"),
            headers(&config)?,
            &config,
        )?;
        let retry = RetryPolicy::from_config(&config);
        Ok(Self {
            config,
            transport,
            retry,
        })
    }

    /// Replaces the retry policy taken from the configuration.
    pub fn with_retry_policy(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The retry policy in use.
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.retry
    }

    /// The URL requests go to (`.../chat/completions`).
    pub fn endpoint(&self) -> &str {
        self.transport.endpoint.as_str()
    }

    /// The request body this client sends for `request` (what goes on the wire, minus headers).
    pub fn request_body(&self, request: &LlmRequest) -> serde_json::Value {
        request::body(&self.config, request, self.streams(request))
    }

    fn streams(&self, request: &LlmRequest) -> bool {
        request.on_delta.is_some() || self.config.stream
    }

    /// One attempt: send, check the status, read JSON or SSE.
    async fn attempt(
        &self,
        body: Bytes,
        on_delta: Option<&tokio::sync::mpsc::UnboundedSender<StreamDelta>>,
    ) -> Result<LlmResponse> {
        let started = Instant::now();
        let timeout = self.transport.timeout;
        let assembled = match self.transport.post(body, started).await? {
            Body::Stream(response) => stream::read_stream(response, on_delta, timeout).await?,
            Body::Whole(bytes) => {
                let assembled = reply::Assembled::from_json(&bytes, timeout)?;
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
        let mut response = assembled.into_response(&self.config, started.elapsed());
        crate::prices::apply_to_response(&self.config, &mut response);
        Ok(response)
    }
}

impl Llm for OpenAiChat {
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
                        tracing::debug!(
                            model = %self.config.model,
                            endpoint = %self.transport.endpoint,
                            attempt,
                            "LLM request"
                        );
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

/// The authorization header of `config` (the transport adds the extra headers).
fn headers(config: &LlmConfig) -> Result<HeaderMap> {
    let mut headers = HeaderMap::new();
    if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
        let mut value = HeaderValue::from_str(&format!("Bearer {key}"))
            .map_err(|_| LlmError::Config("the API key contains invalid characters".into()))?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    Ok(headers)
}

/// The error for a failure below HTTP (connect, reset, timeout, undecodable body).
pub(crate) fn transport_error(error: &reqwest::Error, timeout: Duration) -> LlmError {
    if error.is_timeout() {
        return LlmError::Timeout(timeout);
    }
    let mut message = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    if error.is_decode() {
        LlmError::MalformedResponse(message)
    } else if error.is_builder() {
        LlmError::Config(message)
    } else {
        LlmError::Connection(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_errors() {
        assert!(matches!(
            OpenAiChat::new(LlmConfig::new(" ")),
            Err(LlmError::Config(_))
        ));
        assert!(matches!(
            OpenAiChat::new(LlmConfig::new("litellm_proxy/x")),
            Err(LlmError::Config(_))
        ));
        let mut config = LlmConfig::new("openai/x");
        config.base_url = Some("ftp://example.com".into());
        assert!(matches!(OpenAiChat::new(config), Err(LlmError::Config(_))));
        let mut config = LlmConfig::new("openai/x");
        config.api_key = Some("bad\nkey".into());
        assert!(matches!(OpenAiChat::new(config), Err(LlmError::Config(_))));
    }

    #[test]
    fn endpoints() {
        let endpoint = |model: &str, base: Option<&str>| {
            let mut config = LlmConfig::new(model);
            config.base_url = base.map(str::to_owned);
            OpenAiChat::new(config).unwrap().endpoint().to_owned()
        };
        assert_eq!(
            endpoint("openai/gpt-5", None),
            "https://api.openai.com/v1/chat/completions"
        );
        assert_eq!(
            endpoint("openrouter/a/b", None),
            "https://openrouter.ai/api/v1/chat/completions"
        );
        assert_eq!(
            endpoint("litellm_proxy/x", Some("http://proxy:4000/")),
            "http://proxy:4000/chat/completions"
        );
    }
}
