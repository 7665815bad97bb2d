//! Provider routing: a `provider/model` name (the form LiteLLM and OpenHands users know) picks
//! the wire protocol, the default base URL, the environment variable holding the key and the
//! model name the server expects. [`client_for`] builds the matching client.
//!
//! The client the three protocols share lives in `client` ([`ProtocolClient`]), its HTTP
//! plumbing in `transport`; the LLM settings every
//! client honours (drop_params, litellm_extra_body, max_message_chars, disable_vision, ...) in
//! `options`.

pub(crate) mod assembled;
pub(crate) mod client;
pub(crate) mod options;
pub(crate) mod transport;

use std::sync::Arc;

use tandem_protocol::LlmConfig;

use crate::Llm;
use crate::anthropic::{AnthropicMessages, MessagesWire};
use crate::error::{LlmError, Result};
use crate::openai::{ChatWire, OpenAiChat};
use crate::responses::{OpenAiResponses, ResponsesWire};

pub use client::ProtocolClient;
pub use options::WireOptions;

/// The wire protocol a model is spoken to in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// OpenAI Chat Completions (`POST {base}/chat/completions`), also every OpenAI-compatible
    /// server.
    Chat,
    /// OpenAI Responses (`POST {base}/responses`).
    Responses,
    /// Anthropic Messages (`POST {base}/v1/messages`).
    Anthropic,
}

/// What a model name routes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The provider prefix (`openai`, `anthropic`, ...); `openai` for bare names.
    pub provider: String,
    /// The protocol spoken.
    pub protocol: Protocol,
    /// Base URL when the configuration has none; `None` for proxies and self-hosted servers
    /// that have no public address to guess.
    pub default_base_url: Option<&'static str>,
    /// Environment variable read for the key when the configuration has none.
    pub key_env: Option<&'static str>,
    /// The `model` the server expects (the routing prefix dropped where the server does not
    /// know it).
    pub wire_model: String,
}

/// A provider known by prefix: base URL, key variable, and whether the server expects the
/// prefix to be dropped from `model`.
struct Known {
    prefix: &'static str,
    protocol: Protocol,
    base_url: Option<&'static str>,
    key_env: Option<&'static str>,
}

const fn known(
    prefix: &'static str,
    protocol: Protocol,
    base_url: Option<&'static str>,
    key_env: Option<&'static str>,
) -> Known {
    Known {
        prefix,
        protocol,
        base_url,
        key_env,
    }
}

/// Providers by prefix (LiteLLM names).
const KNOWN: [Known; 20] = [
    known(
        "openai",
        Protocol::Chat,
        Some("https://api.openai.com/v1"),
        Some("OPENAI_API_KEY"),
    ),
    known(
        "anthropic",
        Protocol::Anthropic,
        Some("https://api.anthropic.com"),
        Some("ANTHROPIC_API_KEY"),
    ),
    known(
        "openrouter",
        Protocol::Chat,
        Some("https://openrouter.ai/api/v1"),
        Some("OPENROUTER_API_KEY"),
    ),
    known(
        "ollama",
        Protocol::Chat,
        Some("http://localhost:11434/v1"),
        None,
    ),
    known(
        "ollama_chat",
        Protocol::Chat,
        Some("http://localhost:11434/v1"),
        None,
    ),
    known(
        "litellm_proxy",
        Protocol::Chat,
        None,
        Some("LITELLM_PROXY_API_KEY"),
    ),
    known(
        "deepseek",
        Protocol::Chat,
        Some("https://api.deepseek.com/v1"),
        Some("DEEPSEEK_API_KEY"),
    ),
    known(
        "gemini",
        Protocol::Chat,
        Some("https://generativelanguage.googleapis.com/v1beta/openai"),
        Some("GEMINI_API_KEY"),
    ),
    known(
        "groq",
        Protocol::Chat,
        Some("https://api.groq.com/openai/v1"),
        Some("GROQ_API_KEY"),
    ),
    known(
        "mistral",
        Protocol::Chat,
        Some("https://api.mistral.ai/v1"),
        Some("MISTRAL_API_KEY"),
    ),
    known(
        "together_ai",
        Protocol::Chat,
        Some("https://api.together.xyz/v1"),
        Some("TOGETHER_API_KEY"),
    ),
    known(
        "xai",
        Protocol::Chat,
        Some("https://api.x.ai/v1"),
        Some("XAI_API_KEY"),
    ),
    known(
        "fireworks_ai",
        Protocol::Chat,
        Some("https://api.fireworks.ai/inference/v1"),
        Some("FIREWORKS_API_KEY"),
    ),
    known(
        "cerebras",
        Protocol::Chat,
        Some("https://api.cerebras.ai/v1"),
        Some("CEREBRAS_API_KEY"),
    ),
    known(
        "moonshot",
        Protocol::Chat,
        Some("https://api.moonshot.ai/v1"),
        Some("MOONSHOT_API_KEY"),
    ),
    known(
        "perplexity",
        Protocol::Chat,
        Some("https://api.perplexity.ai"),
        Some("PERPLEXITYAI_API_KEY"),
    ),
    known(
        "hosted_vllm",
        Protocol::Chat,
        None,
        Some("HOSTED_VLLM_API_KEY"),
    ),
    known(
        "lm_studio",
        Protocol::Chat,
        Some("http://localhost:1234/v1"),
        None,
    ),
    known(
        "llamacpp",
        Protocol::Chat,
        Some("http://localhost:8080/v1"),
        None,
    ),
    known(
        "openai_compatible",
        Protocol::Chat,
        None,
        Some("OPENAI_API_KEY"),
    ),
];

/// The route of `model` under `config` (which may ask for the Responses API with
/// `api_mode: "responses"` in its extra fields).
pub fn route(config: &LlmConfig) -> Route {
    let model = config.model.trim();
    let (prefix, rest) = match model.split_once('/') {
        Some((prefix, rest)) if !rest.is_empty() => (Some(prefix), rest),
        _ => (None, model),
    };
    let found = prefix.and_then(|p| KNOWN.iter().find(|k| k.prefix == p));
    let (provider, mut protocol, base, key_env, wire_model) = match (prefix, found) {
        (_, Some(k)) => (k.prefix, k.protocol, k.base_url, k.key_env, rest),
        // A bare name is an OpenAI model (or a Claude one, as LiteLLM infers).
        (None, None) if is_claude(model) => (
            "anthropic",
            Protocol::Anthropic,
            KNOWN[1].base_url,
            KNOWN[1].key_env,
            model,
        ),
        (None, None) => (
            "openai",
            Protocol::Chat,
            KNOWN[0].base_url,
            KNOWN[0].key_env,
            model,
        ),
        // An unknown prefix is sent whole to an OpenAI-compatible server (`meta-llama/x`).
        (Some(_), None) => (
            "openai",
            Protocol::Chat,
            KNOWN[0].base_url,
            KNOWN[0].key_env,
            model,
        ),
    };
    let options = WireOptions::of(config);
    if protocol == Protocol::Chat {
        match options.api_mode.as_deref() {
            Some("responses") => protocol = Protocol::Responses,
            Some("chat" | "completion" | "completions") => {}
            // Codex models only exist on the Responses API.
            _ if provider == "openai" && wire_model.contains("codex") => {
                protocol = Protocol::Responses;
            }
            _ => {}
        }
    }
    Route {
        provider: provider.to_owned(),
        protocol,
        default_base_url: base,
        key_env,
        wire_model: wire_model.to_owned(),
    }
}

/// Whether a bare model name is a Claude model.
fn is_claude(model: &str) -> bool {
    model.starts_with("claude")
}

/// The model name the server expects for `config` (the routing prefix dropped for known
/// providers, anything else sent as it is).
pub fn wire_model(config: &LlmConfig) -> String {
    route(config).wire_model
}

/// The base URL for `config`: its own, else the provider's default.
pub(crate) fn base_url(config: &LlmConfig, route: &Route) -> Result<String> {
    match config
        .base_url
        .as_deref()
        .map(str::trim)
        .filter(|b| !b.is_empty())
    {
        Some(base) => Ok(base.trim_end_matches('/').to_owned()),
        None => route
            .default_base_url
            .map(|b| b.trim_end_matches('/').to_owned())
            .ok_or_else(|| LlmError::Config(format!("model `{}` needs a base_url", config.model))),
    }
}

/// `config` with the key taken from the provider's environment variable when it has none.
pub fn with_env_key(mut config: LlmConfig) -> LlmConfig {
    let has_key = config.api_key.as_deref().is_some_and(|k| !k.is_empty());
    if !has_key
        && let Some(var) = route(&config).key_env
        && let Some(key) = crate::held_env::var(var)
    {
        config.api_key = Some(key.trim().to_owned());
    }
    config
}

/// The client for `config`: Chat, Responses or Anthropic Messages by [`route`], with the key
/// from the provider's environment variable when the configuration has none.
pub fn client_for(config: LlmConfig) -> Result<Arc<dyn Llm>> {
    let config = with_env_key(config);
    Ok(match route(&config).protocol {
        Protocol::Chat => Arc::new(OpenAiChat::new(config)?),
        Protocol::Responses => Arc::new(OpenAiResponses::new(config)?),
        Protocol::Anthropic => Arc::new(AnthropicMessages::new(config)?),
    })
}

/// Parses a whole reply as received on the wire for `config`'s protocol — a JSON body, or an
/// SSE body when `content_type` is `text/event-stream` — as a call would, without network:
/// for recorded provider traffic and benchmarks.
pub fn parse_reply(
    config: &LlmConfig,
    content_type: &str,
    body: &[u8],
) -> Result<crate::LlmResponse> {
    let timeout = transport::timeout_of(config);
    match route(config).protocol {
        Protocol::Chat => client::parse_reply::<ChatWire>(config, content_type, body, timeout),
        Protocol::Responses => {
            client::parse_reply::<ResponsesWire>(config, content_type, body, timeout)
        }
        Protocol::Anthropic => {
            client::parse_reply::<MessagesWire>(config, content_type, body, timeout)
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn r(model: &str) -> Route {
        route(&LlmConfig::new(model))
    }

    #[test]
    fn prefixes_route() {
        assert_eq!(r("openai/gpt-5").protocol, Protocol::Chat);
        assert_eq!(r("openai/gpt-5").wire_model, "gpt-5");
        assert_eq!(r("openai/gpt-5-codex").protocol, Protocol::Responses);
        assert_eq!(
            r("anthropic/claude-sonnet-4-5").protocol,
            Protocol::Anthropic
        );
        assert_eq!(
            r("anthropic/claude-sonnet-4-5").wire_model,
            "claude-sonnet-4-5"
        );
        assert_eq!(r("claude-opus-4-1").protocol, Protocol::Anthropic);
        assert_eq!(
            r("openrouter/anthropic/claude").wire_model,
            "anthropic/claude"
        );
        assert_eq!(r("openrouter/anthropic/claude").protocol, Protocol::Chat);
        assert_eq!(
            r("gemini/gemini-2.5-pro").default_base_url,
            Some("https://generativelanguage.googleapis.com/v1beta/openai")
        );
        assert_eq!(r("gemini/gemini-2.5-pro").key_env, Some("GEMINI_API_KEY"));
        assert_eq!(r("litellm_proxy/x").default_base_url, None);
        assert_eq!(r("meta-llama/Llama-3").wire_model, "meta-llama/Llama-3");
        assert_eq!(r("gpt-4o").provider, "openai");
        assert_eq!(r("openai/").wire_model, "openai/");
    }

    #[test]
    fn api_mode_picks_responses() {
        let mut config = LlmConfig::new("openai/gpt-5");
        config.extra.insert("api_mode".into(), json!("responses"));
        assert_eq!(route(&config).protocol, Protocol::Responses);
        let mut config = LlmConfig::new("openai/gpt-5-codex");
        config.extra.insert("api_mode".into(), json!("chat"));
        assert_eq!(route(&config).protocol, Protocol::Chat);
    }

    #[test]
    fn base_urls() {
        let config = LlmConfig::new("hosted_vllm/m");
        assert!(matches!(
            base_url(&config, &route(&config)),
            Err(LlmError::Config(_))
        ));
        let mut config = LlmConfig::new("anthropic/claude-x");
        assert_eq!(
            base_url(&config, &route(&config)).unwrap(),
            "https://api.anthropic.com"
        );
        config.base_url = Some(" http://h:1/ ".into());
        assert_eq!(base_url(&config, &route(&config)).unwrap(), "http://h:1");
    }
}
