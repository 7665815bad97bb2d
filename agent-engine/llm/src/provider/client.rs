//! [`ProtocolClient`]: the client every wire protocol shares. It checks the configuration,
//! builds the [`Transport`], serialises the body once per call, retries per the
//! [`RetryPolicy`], abandons the call when the cancellation token fires, reads the reply as
//! JSON or as an SSE stream, and fills in cost from the price table.
//!
//! What a protocol adds is a [`WireProtocol`]: where it posts, how it sends the key, the body
//! it builds and how it reads a reply. `OpenAiChat`, `OpenAiResponses` and `AnthropicMessages`
//! are this client over their protocol.
//!
//! The public client names its protocol, so the traits and the types in their signatures
//! (`Assembled`, `Flow`, the assemblers) are `pub`; they live in private modules, so nothing
//! outside the crate can name them or implement a protocol.

use std::marker::PhantomData;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};
use tandem_protocol::LlmConfig;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use crate::error::{LlmError, Result};
use crate::provider::assembled::{Assembled, send_delta};
use crate::provider::transport::{Body, Flow, Transport, read_events, replay_events};
use crate::provider::{self, WireOptions};
use crate::retry::RetryPolicy;
use crate::{Llm, LlmRequest, LlmResponse, StreamDelta};

/// What one wire protocol puts on the wire and how it reads what comes back.
pub trait WireProtocol: Clone + Send + Sync + 'static {
    /// The client's name in `Debug` output.
    const CLIENT: &'static str;
    /// The API named as the `origin` of the reply's tool calls (`completion` or `responses`).
    const ORIGIN: &'static str;
    /// Puts a streamed reply together.
    type Stream: ReplyAssembler;

    /// Builds the JSON body of a request.
    const BODY: BuildBody;
    /// Reads a whole JSON reply body.
    const READ_JSON: ReadJson;

    /// The URL requests go to, under the configured (or the provider's) base URL.
    fn endpoint(base: &str) -> String;

    /// The headers that carry the key (and any protocol version); the transport adds the
    /// configuration's extra headers. `Authorization: Bearer <key>` unless the protocol says
    /// otherwise, as the OpenAI APIs and the servers that mirror them take it.
    fn headers(config: &LlmConfig) -> Result<HeaderMap> {
        let mut headers = HeaderMap::new();
        if let Some(key) = api_key(config) {
            headers.insert(AUTHORIZATION, secret_header(&format!("Bearer {key}"))?);
        }
        Ok(headers)
    }
}

/// Builds a protocol's JSON body from the configuration, its wire options, the model name the
/// server expects, the request, and whether to ask for a stream.
pub type BuildBody = fn(&LlmConfig, &WireOptions, &str, &LlmRequest, bool) -> serde_json::Value;

/// Reads a protocol's whole JSON reply body; the timeout is reported for 408 error objects.
pub type ReadJson = fn(&[u8], Duration) -> Result<Assembled>;

/// Puts a reply together from the events of its SSE stream.
pub trait ReplyAssembler: Default + Send {
    /// Takes in one event (`name` empty when it has none); `timeout` is reported for
    /// in-stream timeouts.
    fn push(
        &mut self,
        name: &str,
        data: &str,
        on_delta: Option<&UnboundedSender<StreamDelta>>,
        timeout: Duration,
    ) -> Result<Flow>;

    /// The reply, once the stream has ended.
    fn finish(self) -> Result<Assembled>;
}

/// A client of the wire protocol `P`. Its `Debug` output never shows the API key.
#[derive(Clone)]
pub struct ProtocolClient<P> {
    config: LlmConfig,
    options: WireOptions,
    /// The `model` the server expects (the routing prefix dropped where it does not know it).
    wire_model: String,
    /// Endpoint, headers (key and extra headers) and timeout.
    transport: Transport,
    retry: RetryPolicy,
    protocol: PhantomData<P>,
}

impl<P: WireProtocol> std::fmt::Debug for ProtocolClient<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(P::CLIENT)
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

impl<P: WireProtocol> ProtocolClient<P> {
    /// A client for `config`, posting under its base URL or the provider's. Fails with
    /// [`LlmError::Config`] for an empty model, a missing or bad URL or a header that cannot
    /// be sent.
    pub fn new(config: LlmConfig) -> Result<Self> {
        if config.model.trim().is_empty() {
            return Err(LlmError::Config("the model name is empty".into()));
        }
        let route = provider::route(&config);
        let base = provider::base_url(&config, &route)?;
        let transport = Transport::new(&P::endpoint(&base), P::headers(&config)?, &config)?;
        Ok(Self {
            options: WireOptions::of(&config),
            wire_model: route.wire_model,
            retry: RetryPolicy::from_config(&config),
            transport,
            config,
            protocol: PhantomData,
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

    /// The URL requests go to.
    pub fn endpoint(&self) -> &str {
        self.transport.endpoint.as_str()
    }

    /// The request body this client sends for `request` (what goes on the wire, minus headers).
    pub fn request_body(&self, request: &LlmRequest) -> serde_json::Value {
        P::BODY(
            &self.config,
            &self.options,
            &self.wire_model,
            request,
            self.streams(request),
        )
    }

    /// Parses a whole reply as received on the wire (a JSON body, or an SSE body when
    /// `content_type` is `text/event-stream`), as a call would: for recorded traffic and
    /// benchmarks.
    pub fn parse_reply(&self, content_type: &str, body: &[u8]) -> Result<LlmResponse> {
        parse_reply::<P>(&self.config, content_type, body, self.transport.timeout)
    }

    fn streams(&self, request: &LlmRequest) -> bool {
        request.on_delta.is_some() || self.config.stream
    }

    /// One attempt: send, check the status, read JSON or SSE.
    async fn attempt(
        &self,
        body: Bytes,
        on_delta: Option<&UnboundedSender<StreamDelta>>,
    ) -> Result<LlmResponse> {
        let started = Instant::now();
        let timeout = self.transport.timeout;
        let assembled = match self.transport.post(body, started).await? {
            Body::Stream(response) => {
                let mut assembler = P::Stream::default();
                read_events(response, timeout, |name, data| {
                    assembler.push(name, data, on_delta, timeout)
                })
                .await?;
                assembler.finish()?
            }
            Body::Whole(bytes) => {
                let assembled = P::READ_JSON(&bytes, timeout)?;
                // A server that ignored `stream: true` still gives the caller its text.
                send_delta(on_delta, Some(&assembled.text), Some(&assembled.reasoning));
                assembled
            }
        };
        let mut response = assembled.into_response(&self.config, started.elapsed(), P::ORIGIN);
        // Cost and context window from the price table.
        crate::prices::apply_to_response(&self.config, &mut response);
        Ok(response)
    }
}

impl<P: WireProtocol> Llm for ProtocolClient<P> {
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
                .run_observed(&cancel, request.on_retry.as_ref(), |attempt| {
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

/// Parses a whole reply of protocol `P` as received on the wire, without network: a JSON
/// body, or an SSE body (when `content_type` is `text/event-stream`) fed event by event as a
/// live stream is.
pub(crate) fn parse_reply<P: WireProtocol>(
    config: &LlmConfig,
    content_type: &str,
    body: &[u8],
    timeout: Duration,
) -> Result<LlmResponse> {
    let assembled = if content_type.trim_start().starts_with("text/event-stream") {
        let text = std::str::from_utf8(body)
            .map_err(|e| LlmError::MalformedResponse(format!("stream is not UTF-8: {e}")))?;
        let mut assembler = P::Stream::default();
        replay_events(text, |name, data| assembler.push(name, data, None, timeout))?;
        assembler.finish()?
    } else {
        P::READ_JSON(body, timeout)?
    };
    Ok(assembled.into_response(config, Duration::ZERO, P::ORIGIN))
}

/// The configured API key, when there is one.
pub(crate) fn api_key(config: &LlmConfig) -> Option<&str> {
    config.api_key.as_deref().filter(|k| !k.is_empty())
}

/// `value` as a header value that is never logged.
pub(crate) fn secret_header(value: &str) -> Result<HeaderValue> {
    let mut value = HeaderValue::from_str(value)
        .map_err(|_| LlmError::Config("the API key contains invalid characters".into()))?;
    value.set_sensitive(true);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use tandem_protocol::Content;

    use super::*;

    #[test]
    fn recorded_chat_stream_is_read_as_a_live_call_reads_it() {
        let config = LlmConfig::new("openai/gpt-4o");
        let sse = concat!(
            "data: {\"id\":\"c1\",\"model\":\"m\",\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}],",
            "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1}}\n\n",
            "data: [DONE]\n\n",
            "data: {not read after [DONE]\n\n",
        );
        let response = provider::parse_reply(&config, "text/event-stream", sse.as_bytes()).unwrap();
        assert_eq!(response.id, "c1");
        assert_eq!(response.message.content, vec![Content::text("Hi")]);
        assert_eq!(response.finish_reason.as_deref(), Some("stop"));
        assert_eq!(response.usage.per_turn_token, 4);

        let failed = "event: error\ndata: {\"error\":{\"message\":\"boom\"}}\n\n";
        assert!(matches!(
            provider::parse_reply(&config, " text/event-stream", failed.as_bytes()),
            Err(LlmError::ServiceUnavailable { status: 500, .. })
        ));
    }

    #[test]
    fn clients_show_no_key_in_debug() {
        let mut config = LlmConfig::new("anthropic/claude-sonnet-4-5");
        config.api_key = Some("sk-ant-secret".into());
        let debug = format!("{:?}", crate::AnthropicMessages::new(config).unwrap());
        assert!(debug.starts_with("AnthropicMessages {"), "{debug}");
        assert!(!debug.contains("sk-ant-secret"), "{debug}");
    }
}
