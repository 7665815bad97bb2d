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
use reqwest::Url;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use tandem_protocol::LlmConfig;
use tokio_util::sync::CancellationToken;

use crate::error::{LlmError, Result};
use crate::retry::RetryPolicy;
use crate::{Llm, LlmRequest, LlmResponse, StreamDelta};

/// The request timeout when the configuration has none (or an unusable one).
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// Longest wait for a TCP/TLS connection, whatever the request timeout.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// OpenAI Chat Completions client. Its `Debug` output never shows the API key.
#[derive(Clone)]
pub struct OpenAiChat {
    config: LlmConfig,
    client: reqwest::Client,
    endpoint: Url,
    /// Authorization and extra headers, sent with every request.
    headers: HeaderMap,
    retry: RetryPolicy,
    timeout: Duration,
}

impl std::fmt::Debug for OpenAiChat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiChat")
            .field("model", &self.config.model)
            .field("endpoint", &self.endpoint.as_str())
            .field(
                "api_key",
                &self.config.api_key.as_ref().map(|_| "**********"),
            )
            .field("timeout", &self.timeout)
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
        let endpoint = format!("{base}/chat/completions");
        let endpoint = Url::parse(&endpoint)
            .map_err(|e| LlmError::Config(format!("bad base_url `{base}`: {e}")))?;
        if !matches!(endpoint.scheme(), "http" | "https") {
            return Err(LlmError::Config(format!(
                "base_url `{base}` is not http(s)"
            )));
        }
        let headers = headers(&config)?;
        let timeout = config
            .timeout
            .filter(|t| t.is_finite() && *t > 0.0)
            .and_then(|t| Duration::try_from_secs_f64(t).ok())
            .unwrap_or(DEFAULT_TIMEOUT);
        let client = reqwest::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT.min(timeout))
            .user_agent(concat!("tandem/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build the HTTP client: {e}")))?;
        let retry = RetryPolicy::from_config(&config);
        Ok(Self {
            config,
            client,
            endpoint,
            headers,
            retry,
            timeout,
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
        self.endpoint.as_str()
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
        let send = self
            .client
            .post(self.endpoint.clone())
            .headers(self.headers.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body)
            .send();
        let response = tokio::time::timeout(self.timeout, send)
            .await
            .map_err(|_| LlmError::Timeout(self.timeout))?
            .map_err(|e| transport_error(&e, self.timeout))?;
        let status = response.status();
        if !status.is_success() {
            let headers = response.headers().clone();
            // The status says what happened; an unreadable body only loses the message.
            let body = match tokio::time::timeout(self.timeout, response.bytes()).await {
                Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
                _ => String::new(),
            };
            return Err(http_error::status_error(
                status.as_u16(),
                &headers,
                &body,
                self.timeout,
            ));
        }
        let is_sse = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
        let assembled = if is_sse {
            stream::read_stream(response, on_delta, self.timeout).await?
        } else {
            let left = self.timeout.saturating_sub(started.elapsed());
            let bytes = tokio::time::timeout(left, response.bytes())
                .await
                .map_err(|_| LlmError::Timeout(self.timeout))?
                .map_err(|e| transport_error(&e, self.timeout))?;
            let assembled = reply::Assembled::from_json(&bytes, self.timeout)?;
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
                            endpoint = %self.endpoint,
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

/// Authorization and extra headers of `config`.
fn headers(config: &LlmConfig) -> Result<HeaderMap> {
    let mut headers = HeaderMap::new();
    if let Some(key) = config.api_key.as_deref().filter(|k| !k.is_empty()) {
        let mut value = HeaderValue::from_str(&format!("Bearer {key}"))
            .map_err(|_| LlmError::Config("the API key contains invalid characters".into()))?;
        value.set_sensitive(true);
        headers.insert(AUTHORIZATION, value);
    }
    for (name, value) in config.extra_headers.iter().flatten() {
        let name = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| LlmError::Config(format!("bad extra header name `{name}`")))?;
        let mut value = HeaderValue::from_str(value)
            .map_err(|_| LlmError::Config(format!("bad value for extra header `{name}`")))?;
        value.set_sensitive(true);
        headers.insert(name, value);
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
