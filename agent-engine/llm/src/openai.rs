//! [`OpenAiChat`]: the client of OpenAI Chat Completions and every server that speaks it
//! (LiteLLM proxies, OpenRouter, vLLM, Ollama, DeepSeek, ...).
//!
//! One call is `POST {base_url}/chat/completions`, as JSON or as an SSE stream (when the caller
//! wants deltas or the configuration says `stream`), retried per the [`RetryPolicy`](crate::RetryPolicy) and
//! abandoned at once when the cancellation token fires, by the shared [`ProtocolClient`].
//! Request building lives in `request`, lenient reply types in `reply`, stream assembly in
//! `stream`, and the mapping of HTTP failures to [`LlmError`](crate::LlmError) in
//! `http_error`.

pub(crate) mod http_error;
pub(crate) mod reply;
mod request;
pub(crate) mod stream;

use crate::provider::assembled::Assembled;
use crate::provider::client::{BuildBody, ProtocolClient, ReadJson, WireProtocol};

/// OpenAI Chat Completions client. The base URL defaults to `https://api.openai.com/v1` (or
/// the provider's own for `deepseek/`, `openrouter/`, `ollama/`, ...); requests go to
/// `.../chat/completions`.
pub type OpenAiChat = ProtocolClient<ChatWire>;

/// The OpenAI Chat Completions wire protocol.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChatWire;

impl WireProtocol for ChatWire {
    const CLIENT: &'static str = "OpenAiChat";
    const ORIGIN: &'static str = "completion";
    const BODY: BuildBody = request::body;
    const READ_JSON: ReadJson =
        |body, timeout| reply::Assembled::from_json(body, timeout).map(Assembled::from);
    type Stream = stream::ChunkEvents;

    fn endpoint(base: &str) -> String {
        format!("{base}/chat/completions")
    }
}

#[cfg(test)]
mod tests {
    use tandem_protocol::LlmConfig;

    use super::*;
    use crate::LlmError;

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
