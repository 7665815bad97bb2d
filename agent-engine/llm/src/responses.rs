//! [`OpenAiResponses`]: the client of the OpenAI Responses API (and servers that mirror it).
//!
//! One call is `POST {base}/responses` (base `https://api.openai.com/v1` by default) with a
//! bearer key, as JSON or as an SSE stream (when the caller wants deltas or the configuration
//! says `stream`), made by the shared [`ProtocolClient`] (retries, cancellation, transport).
//! Nothing is stored server-side (`store: false`): reasoning items come back (encrypted when
//! `enable_encrypted_reasoning`) on the assistant message and are sent back on later turns. Request building lives in `request`, reply and stream assembly in `reply`.

pub(crate) mod reply;
mod request;

use crate::provider::client::{BuildBody, ProtocolClient, ReadJson, WireProtocol};

/// OpenAI Responses client for `openai/gpt-5-codex`, or any model with
/// `api_mode: "responses"`; requests go to `.../responses`.
pub type OpenAiResponses = ProtocolClient<ResponsesWire>;

/// The OpenAI Responses wire protocol.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResponsesWire;

impl WireProtocol for ResponsesWire {
    const CLIENT: &'static str = "OpenAiResponses";
    const ORIGIN: &'static str = "responses";
    const BODY: BuildBody = request::body;
    const READ_JSON: ReadJson = reply::ResponseAssembler::from_json;
    type Stream = reply::ResponseAssembler;

    fn endpoint(base: &str) -> String {
        format!("{base}/responses")
    }
}

#[cfg(test)]
mod tests {
    use tandem_protocol::LlmConfig;

    use super::*;
    use crate::LlmError;

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
