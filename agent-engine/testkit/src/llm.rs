//! What tests of Tandem's LLM clients share: a configuration that points a client at a test
//! server and fails fast, and the tool their requests offer the model. Plain values only
//! (`LlmConfig` is a `tandem-protocol` type): this crate never depends on `tandem-llm`.

use serde_json::{Value, json};
use tandem_protocol::LlmConfig;

/// `model` sending to `base_url`, failing fast: no retries (a test that wants them sets
/// `num_retries`, and then waits tens of milliseconds between attempts, not seconds) and a
/// 60 s timeout, so a request nobody answers fails the test instead of stalling it for the
/// default 300 s, while a loaded machine still gets its answers. No API key: a test that
/// checks the key sets its own.
pub fn config(model: &str, base_url: &str) -> LlmConfig {
    LlmConfig {
        base_url: Some(base_url.to_owned()),
        num_retries: 0,
        retry_min_wait: 0.0,
        retry_max_wait: 0.05,
        retry_multiplier: 0.01,
        timeout: Some(60.0),
        ..LlmConfig::new(model)
    }
}

/// The `terminal` tool as a request offers it (OpenAI function form): one string argument,
/// `command`.
pub fn terminal_tool() -> Value {
    json!({"type": "function", "function": {
        "name": "terminal", "description": "Run a command",
        "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
    }})
}
