//! The LLM settings of upstream's `LLM` schema that shape every request whatever the protocol,
//! read from [`LlmConfig::extra`] (where the fields this crate does not model as typed fields
//! live, so persisted configs round-trip byte for byte), with upstream's defaults when absent.
//!
//! [`prepare_messages`] applies `max_message_chars` and `disable_vision` to the conversation;
//! [`finish_body`] merges `litellm_extra_body` and drops the parameters a provider rejects.

use serde_json::{Map, Value, json};
use tandem_protocol::{Content, LlmConfig, Message, TextContent};

/// Settings read from a configuration's extra fields.
#[derive(Debug, Clone, PartialEq)]
pub struct WireOptions {
    /// Put prompt-caching breakpoints on the system prompt and the last user turn (default on).
    pub caching_prompt: bool,
    /// Drop parameters the provider or model rejects instead of failing (default on).
    pub drop_params: bool,
    /// Strip images from the conversation.
    pub disable_vision: bool,
    /// Anthropic extended-thinking budget (upstream's default 200000, clamped to `max_tokens`).
    pub extended_thinking_budget: Option<u64>,
    /// Whether `extended_thinking_budget` was written in the configuration.
    pub thinking_budget_configured: bool,
    /// Responses API reasoning summary level (`auto`, `concise`, `detailed`).
    pub reasoning_summary: Option<String>,
    /// Ask the Responses API for encrypted reasoning and keep nothing server-side (default on).
    pub enable_encrypted_reasoning: bool,
    /// Fields merged into every request body.
    pub litellm_extra_body: Map<String, Value>,
    /// `top_k` sampling.
    pub top_k: Option<f64>,
    /// API version (Azure).
    pub api_version: Option<String>,
    /// `responses` or `chat`: the OpenAI API to use for this model.
    pub api_mode: Option<String>,
}

impl WireOptions {
    /// The options of `config`.
    pub fn of(config: &LlmConfig) -> Self {
        let extra = &config.extra;
        let flag =
            |key: &str, default: bool| extra.get(key).and_then(Value::as_bool).unwrap_or(default);
        let text = |key: &str| {
            extra
                .get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let budget = extra.get("extended_thinking_budget");
        Self {
            caching_prompt: flag("caching_prompt", true),
            drop_params: flag("drop_params", true),
            disable_vision: flag("disable_vision", false),
            extended_thinking_budget: match budget {
                None => Some(200_000),
                Some(v) => v.as_u64(),
            },
            thinking_budget_configured: budget.is_some_and(|v| v.as_u64().is_some()),
            reasoning_summary: text("reasoning_summary"),
            enable_encrypted_reasoning: flag("enable_encrypted_reasoning", true),
            litellm_extra_body: extra
                .get("litellm_extra_body")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            top_k: extra
                .get("top_k")
                .and_then(Value::as_f64)
                .filter(|k| k.is_finite() && *k >= 0.0),
            api_version: text("api_version"),
            api_mode: text("api_mode"),
        }
    }
}

/// The note appended where a message text was cut.
const TRUNCATION_NOTE: &str = "\n\n[... Observation truncated due to length ...]\n\n";

/// The conversation with long texts cut to `max_message_chars` (keeping head and tail, as
/// upstream does) and images removed when vision is disabled. Borrowed when nothing changes.
pub(crate) fn prepare_messages<'a>(
    config: &LlmConfig,
    options: &WireOptions,
    messages: &'a [Message],
) -> std::borrow::Cow<'a, [Message]> {
    let limit = config
        .max_message_chars
        .and_then(|m| usize::try_from(m).ok())
        .filter(|m| *m > 0);
    let too_long = |c: &Content| match (c, limit) {
        (Content::Text(t), Some(limit)) => t.text.chars().count() > limit,
        _ => false,
    };
    let needs_change = messages.iter().any(|m| {
        m.content
            .iter()
            .any(|c| too_long(c) || (options.disable_vision && matches!(c, Content::Image(_))))
    });
    if !needs_change {
        return std::borrow::Cow::Borrowed(messages);
    }
    let changed = messages
        .iter()
        .map(|m| {
            let mut m = m.clone();
            if let Some(limit) = limit {
                for part in &mut m.content {
                    if let Content::Text(t) = part {
                        truncate_text(t, limit);
                    }
                }
            }
            if options.disable_vision {
                // A model without vision reads that an image was there instead of the image
                // (a browser screenshot's page is described by the observation's text).
                for part in &mut m.content {
                    if let Content::Image(image) = part {
                        let n = image.image_urls.len();
                        *part = Content::text(format!(
                            "[{n} image{} not shown: this model does not take images]",
                            if n == 1 { "" } else { "s" }
                        ));
                    }
                }
            }
            m
        })
        .collect::<Vec<_>>();
    std::borrow::Cow::Owned(changed)
}

/// Cuts `text` to about `limit` characters: the first and last halves with a note between.
fn truncate_text(text: &mut TextContent, limit: usize) {
    let count = text.text.chars().count();
    if count <= limit {
        return;
    }
    let head = limit / 2;
    let tail = limit - head;
    let head_text: String = text.text.chars().take(head).collect();
    let tail_text: String = text.text.chars().skip(count - tail).collect();
    text.text = format!("{head_text}{TRUNCATION_NOTE}{tail_text}");
}

/// Parameters each protocol's servers commonly reject for some models, dropped when
/// `drop_params` is on and the request says they do not apply.
pub(crate) fn finish_body(options: &WireOptions, body: &mut Map<String, Value>, drop: &[&str]) {
    if options.drop_params {
        for key in drop {
            body.remove(*key);
        }
    }
    for (key, value) in &options.litellm_extra_body {
        body.insert(key.clone(), value.clone());
    }
}

/// The fields of a Chat-format tool (`{"type":"function","function":{...}}`) that every
/// protocol's tool is made of: `name`, `description` when it is text, and the parameters
/// schema under `schema_key` (an empty object schema when there is none). `None` for a tool in
/// another shape, which is sent as it is.
pub(crate) fn function_tool(tool: &Value, schema_key: &str) -> Option<Map<String, Value>> {
    let function = tool.get("function")?;
    let mut out = Map::new();
    out.insert(
        "name".into(),
        function.get("name").cloned().unwrap_or(json!("")),
    );
    if let Some(description) = function.get("description").filter(|d| d.is_string()) {
        out.insert("description".into(), description.clone());
    }
    out.insert(
        schema_key.into(),
        function
            .get("parameters")
            .filter(|p| p.is_object())
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
    );
    Some(out)
}

/// Whether an OpenAI model is a reasoning model (the gpt-5 family, the o-series, codex): it
/// rejects sampling parameters (`temperature`, `top_p`) and reasons with an effort.
pub(crate) fn is_openai_reasoning_model(wire_model: &str) -> bool {
    let name = wire_model.rsplit('/').next().unwrap_or(wire_model);
    name.starts_with("gpt-5")
        || name.starts_with("o1")
        || name.starts_with("o3")
        || name.starts_with("o4")
        || name.contains("codex")
}

/// Upstream's `reasoning_effort` when a configuration sets none.
pub(crate) const DEFAULT_REASONING_EFFORT: &str = "high";

/// The reasoning effort a request for `wire_model` carries under `config`: the configured one
/// whatever the model (the person asked for it); else upstream's default, `high`, for OpenAI
/// reasoning models that take an effort. An empty configured effort means "send none".
pub(crate) fn reasoning_effort<'a>(config: &'a LlmConfig, wire_model: &str) -> Option<&'a str> {
    match config.reasoning_effort.as_deref().map(str::trim) {
        Some("") => None,
        Some(effort) => Some(effort),
        None => takes_reasoning_effort(wire_model).then_some(DEFAULT_REASONING_EFFORT),
    }
}

/// Whether an OpenAI model takes `reasoning_effort`: every reasoning model but the first o1
/// previews, which reject it.
fn takes_reasoning_effort(wire_model: &str) -> bool {
    let name = wire_model.rsplit('/').next().unwrap_or(wire_model);
    is_openai_reasoning_model(name)
        && !name.starts_with("o1-mini")
        && !name.starts_with("o1-preview")
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use tandem_protocol::{ImageContent, Role};

    use super::*;

    #[test]
    fn defaults_follow_upstream() {
        let options = WireOptions::of(&LlmConfig::new("m"));
        assert!(
            options.caching_prompt && options.drop_params && options.enable_encrypted_reasoning
        );
        assert!(!options.disable_vision);
        assert_eq!(options.extended_thinking_budget, Some(200_000));
        assert!(!options.thinking_budget_configured);
        let mut config = LlmConfig::new("m");
        config.extra.insert("disable_vision".into(), Value::Null);
        config
            .extra
            .insert("extended_thinking_budget".into(), Value::Null);
        config
            .extra
            .insert("litellm_extra_body".into(), json!({"k": 1}));
        let options = WireOptions::of(&config);
        assert!(!options.disable_vision);
        assert_eq!(options.extended_thinking_budget, None);
        let mut body = Map::new();
        body.insert("temperature".into(), json!(1));
        finish_body(&options, &mut body, &["temperature"]);
        assert_eq!(Value::Object(body), json!({"k": 1}));
    }

    #[test]
    fn reasoning_models_get_upstreams_default_effort() {
        let effort = |model: &str, configured: Option<&str>| {
            let mut config = LlmConfig::new(model);
            config.reasoning_effort = configured.map(str::to_owned);
            reasoning_effort(&config, model.split_once('/').map_or(model, |(_, m)| m))
                .map(str::to_owned)
        };
        for model in [
            "openai/gpt-5",
            "openai/gpt-5.1-codex-mini",
            "openai/o3",
            "openai/o4-mini",
            "openai/codex-mini-latest",
            "openrouter/openai/o3",
        ] {
            assert_eq!(effort(model, None).as_deref(), Some("high"), "{model}");
            assert_eq!(
                effort(model, Some("low")).as_deref(),
                Some("low"),
                "{model}"
            );
            assert_eq!(effort(model, Some("")), None, "{model}");
        }
        for model in [
            "openai/gpt-4o",
            "openai/gpt-4.1",
            "openai/o1-mini",
            "anthropic/claude-sonnet-4-5",
        ] {
            assert_eq!(effort(model, None), None, "{model}");
        }
        assert_eq!(
            effort("openai/gpt-4o", Some("medium")).as_deref(),
            Some("medium")
        );
    }

    #[test]
    fn truncates_and_describes_images_in_text() {
        let mut config = LlmConfig::new("m");
        config.max_message_chars = Some(10);
        config.extra.insert("disable_vision".into(), json!(true));
        let messages = vec![Message::new(
            Role::User,
            vec![
                Content::text("abcdefghijklmnopqrstuvwxyz"),
                Content::Image(ImageContent {
                    image_urls: vec!["data:image/png;base64,iVBOR".into()],
                    ..ImageContent::default()
                }),
            ],
        )];
        let out = prepare_messages(&config, &WireOptions::of(&config), &messages);
        assert_eq!(out[0].content.len(), 2);
        assert_eq!(
            out[0].content[1].as_text(),
            Some("[1 image not shown: this model does not take images]")
        );
        let text = out[0].content[0].as_text().unwrap();
        assert!(text.starts_with("abcde") && text.ends_with("vwxyz"));
        assert!(text.contains("truncated"));
        let short = vec![Message::user("hi")];
        assert!(matches!(
            prepare_messages(&config, &WireOptions::of(&config), &short),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
