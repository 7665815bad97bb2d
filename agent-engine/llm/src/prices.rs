//! Model prices, context windows and capability flags from LiteLLM's price table (MIT; see
//! `data/NOTICE.md`), embedded in the binary and parsed once on first use.
//!
//! [`ModelInfo::lookup`] finds a model by the name users write (`openai/gpt-5`,
//! `anthropic/claude-sonnet-4-5`, `openrouter/anthropic/claude-sonnet-4-5`, bare `gpt-4o`);
//! [`cost_for`] prices one call's [`TokenUsage`] with the configuration's overrides applied;
//! [`apply_to_response`] is what a client calls on each reply to fill in cost and context window.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde::Deserialize;
use tandem_protocol::{LlmConfig, TokenUsage};

use crate::LlmResponse;

/// The trimmed table, one model per line (see `data/trim_prices.py`).
const TABLE_JSON: &str = include_str!("../data/model_prices.json");

/// The parsed table. A table that fails to parse (a broken commit) leaves every model unknown
/// rather than taking the engine down; the unit test below keeps that from shipping.
static TABLE: LazyLock<HashMap<String, ModelInfo>> =
    LazyLock::new(
        || match serde_json::from_str::<HashMap<String, ModelInfo>>(TABLE_JSON) {
            Ok(mut table) => {
                for (name, info) in &mut table {
                    info.name.clone_from(name);
                }
                table
            }
            Err(e) => {
                tracing::error!(error = %e, "the embedded model price table does not parse");
                HashMap::new()
            }
        },
    );

/// What the price table knows about one model. Every price is USD per token.
#[derive(Debug, Clone, PartialEq, Default, Deserialize)]
#[serde(default)]
pub struct ModelInfo {
    /// The table key this entry was found under (`gpt-4o`, `gemini/gemini-2.5-pro`, ...).
    #[serde(skip)]
    pub name: String,
    /// Price of an uncached input token.
    pub input_cost_per_token: Option<f64>,
    /// Price of an output token.
    pub output_cost_per_token: Option<f64>,
    /// Price of an input token read from the provider's prompt cache.
    pub cache_read_input_token_cost: Option<f64>,
    /// Price of an input token written to the provider's prompt cache.
    pub cache_creation_input_token_cost: Option<f64>,
    /// Price of a reasoning token, when it differs from the output price.
    pub output_cost_per_reasoning_token: Option<f64>,
    /// Context window (input tokens).
    pub max_input_tokens: Option<u64>,
    /// Longest reply.
    pub max_output_tokens: Option<u64>,
    /// LiteLLM's legacy field: the context window for old entries, the output cap for others.
    pub max_tokens: Option<u64>,
    /// Whether the model takes tools natively.
    pub supports_function_calling: Option<bool>,
    /// Whether the model takes images.
    pub supports_vision: Option<bool>,
    /// Whether the model reasons (and takes `reasoning_effort`).
    pub supports_reasoning: Option<bool>,
    /// Whether the provider caches prompts.
    pub supports_prompt_caching: Option<bool>,
    /// LiteLLM's provider name (`openai`, `anthropic`, `vertex_ai-language-models`, ...).
    pub litellm_provider: Option<String>,
    /// `chat` or `responses`.
    pub mode: Option<String>,
}

impl ModelInfo {
    /// The entry for `model`, trying in turn: the name as given, lowercased, and with each
    /// leading `provider/` segment removed (`openrouter/anthropic/claude-x` → `anthropic/claude-x`
    /// → `claude-x`). `None` for a model the table does not know.
    pub fn lookup(model: &str) -> Option<&'static ModelInfo> {
        let model = model.trim();
        if model.is_empty() {
            return None;
        }
        let lowered = model.to_ascii_lowercase();
        for name in [model, lowered.as_str()] {
            let mut rest = name;
            loop {
                if let Some(info) = TABLE.get(rest) {
                    return Some(info);
                }
                match rest.split_once('/') {
                    Some((_, tail)) if !tail.is_empty() => rest = tail,
                    _ => break,
                }
            }
        }
        None
    }

    /// How many models the embedded table holds.
    pub fn table_len() -> usize {
        TABLE.len()
    }

    /// The context window: `max_input_tokens`, else the legacy `max_tokens`.
    pub fn context_window(&self) -> Option<u64> {
        self.max_input_tokens.or(self.max_tokens).filter(|w| *w > 0)
    }

    /// The cost of `usage` at this model's prices.
    pub fn cost(&self, usage: &TokenUsage) -> f64 {
        Prices::from_info(Some(self)).cost(usage)
    }
}

/// Per-token prices of one call, the table's merged with the configuration's overrides.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Prices {
    /// Uncached input token.
    pub input: f64,
    /// Output token.
    pub output: f64,
    /// Input token read from the cache.
    pub cache_read: f64,
    /// Input token written to the cache.
    pub cache_write: f64,
    /// Reasoning token.
    pub reasoning: f64,
}

impl Prices {
    /// The prices of a table entry (all zero for `None`). Cache and reasoning tokens cost what
    /// input and output tokens cost when the entry gives no separate price.
    pub fn from_info(info: Option<&ModelInfo>) -> Self {
        let input = info.and_then(|i| i.input_cost_per_token).unwrap_or(0.0);
        let output = info.and_then(|i| i.output_cost_per_token).unwrap_or(0.0);
        Self {
            input,
            output,
            cache_read: info
                .and_then(|i| i.cache_read_input_token_cost)
                .unwrap_or(input),
            cache_write: info
                .and_then(|i| i.cache_creation_input_token_cost)
                .unwrap_or(input),
            reasoning: info
                .and_then(|i| i.output_cost_per_reasoning_token)
                .unwrap_or(output),
        }
    }

    /// The prices for `config`: its model's table entry, with `input_cost_per_token` /
    /// `output_cost_per_token` from the configuration winning. Cache and reasoning prices the
    /// table lacks follow the (overridden) input and output prices.
    pub fn for_config(config: &LlmConfig) -> Self {
        let info = ModelInfo::lookup(&config.model);
        let mut prices = Self::from_info(info);
        if let Some(input) = config.input_cost_per_token.filter(|p| p.is_finite()) {
            if info.and_then(|i| i.cache_read_input_token_cost).is_none() {
                prices.cache_read = input;
            }
            if info
                .and_then(|i| i.cache_creation_input_token_cost)
                .is_none()
            {
                prices.cache_write = input;
            }
            prices.input = input;
        }
        if let Some(output) = config.output_cost_per_token.filter(|p| p.is_finite()) {
            if info
                .and_then(|i| i.output_cost_per_reasoning_token)
                .is_none()
            {
                prices.reasoning = output;
            }
            prices.output = output;
        }
        prices
    }

    /// The cost of `usage` in USD. Token counts follow OpenAI's (and LiteLLM's) convention:
    /// `prompt_tokens` includes the cache-read and cache-write tokens, `completion_tokens`
    /// includes the reasoning tokens; each part is charged at its own price. Never negative,
    /// never NaN.
    pub fn cost(&self, usage: &TokenUsage) -> f64 {
        let uncached = usage
            .prompt_tokens
            .saturating_sub(usage.cache_read_tokens)
            .saturating_sub(usage.cache_write_tokens);
        let reasoning = usage.reasoning_tokens.min(usage.completion_tokens);
        let visible = usage.completion_tokens - reasoning;
        let cost = self.input * uncached as f64
            + self.cache_read * usage.cache_read_tokens as f64
            + self.cache_write * usage.cache_write_tokens as f64
            + self.output * visible as f64
            + self.reasoning * reasoning as f64;
        if cost.is_finite() && cost > 0.0 {
            cost
        } else {
            0.0
        }
    }
}

/// The cost in USD of one call of `config`'s model that used `usage` (0 when the model and
/// its prices are unknown).
pub fn cost_for(config: &LlmConfig, usage: &TokenUsage) -> f64 {
    Prices::for_config(config).cost(usage)
}

/// The context window of `config`'s model, when the table knows it.
pub fn context_window_for(config: &LlmConfig) -> Option<u64> {
    ModelInfo::lookup(&config.model).and_then(ModelInfo::context_window)
}

/// Whether `config`'s model takes tools natively: `native_tool_calling` when set, else the
/// table's `supports_function_calling`, else `true` (a model the table does not know is most
/// often an OpenAI-compatible server that does).
pub fn supports_native_tools(config: &LlmConfig) -> bool {
    config.native_tool_calling.unwrap_or_else(|| {
        ModelInfo::lookup(&config.model)
            .and_then(|i| i.supports_function_calling)
            .unwrap_or(true)
    })
}

/// Whether `config`'s model takes images: `false` only when the table says so or does not
/// know the model.
pub fn supports_vision(config: &LlmConfig) -> bool {
    ModelInfo::lookup(&config.model)
        .and_then(|i| i.supports_vision)
        .unwrap_or(false)
}

/// Fills in `response.cost` from the table (and the configuration's overrides) and
/// `response.usage.context_window` when the provider did not say it. Clients call this on
/// every reply.
pub fn apply_to_response(config: &LlmConfig, response: &mut LlmResponse) {
    response.cost = cost_for(config, &response.usage);
    if response.usage.context_window == 0
        && let Some(window) = context_window_for(config)
    {
        response.usage.context_window = window;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_table_parses() {
        assert!(ModelInfo::table_len() > 1000, "{}", ModelInfo::table_len());
        let info = ModelInfo::lookup("gpt-4o").unwrap();
        assert_eq!(info.name, "gpt-4o");
        assert_eq!(info.litellm_provider.as_deref(), Some("openai"));
    }
}
