//! [`AnthropicMessages`]: the client of Anthropic's Messages API.
//!
//! One call is `POST {base}/v1/messages` (base `https://api.anthropic.com` by default) with
//! `x-api-key` and `anthropic-version: 2023-06-01`, as JSON or as an SSE stream (when the
//! caller wants deltas or the configuration says `stream`), made by the shared
//! [`ProtocolClient`] (retries, cancellation, transport). What is Anthropic's own is here:
//! the endpoint and headers; request building lives in `request`, reply and stream assembly
//! in `reply`.

pub(crate) mod reply;
mod request;

use reqwest::header::{HeaderMap, HeaderValue};
use tandem_protocol::LlmConfig;

use crate::error::Result;
use crate::provider::client::{
    BuildBody, ProtocolClient, ReadJson, WireProtocol, api_key, secret_header,
};

pub use request::{default_max_tokens, supports_thinking};

/// The API version header every request carries.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// Anthropic Messages client for `anthropic/claude-...` models (and bare `claude-...` names,
/// which keep their name). A base URL ending in `/v1` is accepted as well as the bare host;
/// requests go to `.../v1/messages`.
pub type AnthropicMessages = ProtocolClient<MessagesWire>;

/// The Anthropic Messages wire protocol.
#[derive(Debug, Clone, Copy, Default)]
pub struct MessagesWire;

impl WireProtocol for MessagesWire {
    const CLIENT: &'static str = "AnthropicMessages";
    const ORIGIN: &'static str = "completion";
    const BODY: BuildBody = request::body;
    const READ_JSON: ReadJson = reply::MessageAssembler::from_json;
    type Stream = reply::MessageAssembler;

    fn endpoint(base: &str) -> String {
        let base = base.strip_suffix("/v1").unwrap_or(base);
        format!("{base}/v1/messages")
    }

    fn headers(config: &LlmConfig) -> Result<HeaderMap> {
        let mut headers = HeaderMap::new();
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = api_key(config) {
            headers.insert("x-api-key", secret_header(key)?);
        }
        Ok(headers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::LlmError;

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
