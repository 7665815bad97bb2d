//! The embedded price table: lookups by the names users write, costs with cache and reasoning
//! tokens, configuration overrides, and the OpenAI client filling in cost and context window.

use tandem_llm::prices::{self, ModelInfo, Prices};
use tandem_llm::{Llm, LlmRequest, OpenAiChat};
use tandem_protocol::{LlmConfig, Message, TokenUsage};
use tandem_testkit::{Reply, ScriptedLlmServer, Step, UsageSpec};
use tokio_util::sync::CancellationToken;

fn usage(
    prompt: u64,
    completion: u64,
    cache_read: u64,
    cache_write: u64,
    reasoning: u64,
) -> TokenUsage {
    TokenUsage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        cache_read_tokens: cache_read,
        cache_write_tokens: cache_write,
        reasoning_tokens: reasoning,
        ..TokenUsage::default()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn lookups_by_every_form_of_name() {
    let bare = ModelInfo::lookup("gpt-4o").unwrap();
    assert_eq!(bare.name, "gpt-4o");
    assert_eq!(ModelInfo::lookup("openai/gpt-4o").unwrap().name, "gpt-4o");
    assert_eq!(ModelInfo::lookup("OpenAI/GPT-4o").unwrap().name, "gpt-4o");
    assert_eq!(
        ModelInfo::lookup("litellm_proxy/gpt-4o").unwrap().name,
        "gpt-4o"
    );
    let claude = ModelInfo::lookup("anthropic/claude-sonnet-4-5").unwrap();
    assert_eq!(claude.name, "claude-sonnet-4-5");
    assert_eq!(claude.litellm_provider.as_deref(), Some("anthropic"));
    assert_eq!(
        ModelInfo::lookup("openrouter/anthropic/claude-sonnet-4-5")
            .unwrap()
            .name,
        "claude-sonnet-4-5"
    );
    // A provider-specific key wins over the bare name when it exists.
    let gemini = ModelInfo::lookup("gemini/gemini-2.5-pro").unwrap();
    assert_eq!(gemini.name, "gemini/gemini-2.5-pro");
    let deepseek = ModelInfo::lookup("deepseek/deepseek-chat").unwrap();
    assert_eq!(deepseek.name, "deepseek/deepseek-chat");
    assert!(ModelInfo::lookup("openai/fake").is_none());
    assert!(ModelInfo::lookup("").is_none());
    assert!(ModelInfo::lookup("nobody/never-heard-of-it").is_none());
}

#[test]
fn table_fields_are_read() {
    let gpt5 = ModelInfo::lookup("openai/gpt-5").unwrap();
    assert_eq!(gpt5.input_cost_per_token, Some(1.25e-6));
    assert_eq!(gpt5.output_cost_per_token, Some(1e-5));
    assert_eq!(gpt5.cache_read_input_token_cost, Some(1.25e-7));
    assert_eq!(gpt5.context_window(), Some(272_000));
    assert_eq!(gpt5.supports_function_calling, Some(true));
    assert_eq!(gpt5.supports_vision, Some(true));
    assert_eq!(gpt5.supports_reasoning, Some(true));
    assert_eq!(gpt5.mode.as_deref(), Some("chat"));
    let reasoner = ModelInfo::lookup("deepseek/deepseek-reasoner").unwrap();
    assert_eq!(reasoner.supports_function_calling, Some(false));
}

#[test]
fn cost_with_cache_and_reasoning_tokens() {
    let claude = ModelInfo::lookup("claude-sonnet-4-5").unwrap();
    // 10k prompt of which 6k read from and 1k written to the cache; 500 out, 200 reasoning.
    let cost = claude.cost(&usage(10_000, 500, 6_000, 1_000, 200));
    let expected = 3_000.0 * 3e-6 + 6_000.0 * 3e-7 + 1_000.0 * 3.75e-6 + 500.0 * 1.5e-5;
    assert!(close(cost, expected), "{cost} != {expected}");

    // A separate reasoning price is used for reasoning tokens.
    let prices = Prices {
        input: 1.0,
        output: 2.0,
        cache_read: 0.5,
        cache_write: 1.5,
        reasoning: 3.0,
    };
    assert!(close(
        prices.cost(&usage(10, 10, 4, 2, 3)),
        4.0 + 2.0 + 3.0 + 14.0 + 9.0
    ));
    // Inconsistent counts never go negative.
    assert!(close(prices.cost(&usage(1, 1, 5, 5, 5)), 2.5 + 7.5 + 3.0));
    assert_eq!(Prices::default().cost(&usage(100, 100, 0, 0, 0)), 0.0);
}

#[test]
fn configuration_overrides_win() {
    let mut config = LlmConfig::new("openai/gpt-4o");
    let table = prices::cost_for(&config, &usage(1_000, 100, 400, 0, 0));
    assert!(close(
        table,
        600.0 * 2.5e-6 + 400.0 * 1.25e-6 + 100.0 * 1e-5
    ));
    config.input_cost_per_token = Some(1e-6);
    config.output_cost_per_token = Some(2e-6);
    let overridden = prices::cost_for(&config, &usage(1_000, 100, 400, 0, 0));
    // The table's cache-read price stays: the override is for uncached input.
    assert!(close(
        overridden,
        600.0 * 1e-6 + 400.0 * 1.25e-6 + 100.0 * 2e-6
    ));

    let mut unknown = LlmConfig::new("openai/my-finetune");
    assert_eq!(prices::cost_for(&unknown, &usage(1_000, 100, 0, 0, 0)), 0.0);
    unknown.input_cost_per_token = Some(1e-6);
    unknown.output_cost_per_token = Some(2e-6);
    assert!(close(
        prices::cost_for(&unknown, &usage(1_000, 100, 500, 0, 50)),
        1e-3 + 2e-4
    ));
    assert_eq!(prices::context_window_for(&unknown), None);
    assert_eq!(
        prices::context_window_for(&LlmConfig::new("gpt-4o")),
        Some(128_000)
    );
}

#[test]
fn capability_helpers() {
    let mut config = LlmConfig::new("deepseek/deepseek-reasoner");
    assert!(!prices::supports_native_tools(&config));
    config.native_tool_calling = Some(true);
    assert!(prices::supports_native_tools(&config));
    let mut gpt = LlmConfig::new("openai/gpt-5");
    assert!(prices::supports_native_tools(&gpt));
    gpt.native_tool_calling = Some(false);
    assert!(!prices::supports_native_tools(&gpt));
    assert!(prices::supports_native_tools(&LlmConfig::new(
        "openai/unknown-model"
    )));
    assert!(prices::supports_vision(&LlmConfig::new("openai/gpt-4o")));
    assert!(!prices::supports_vision(&LlmConfig::new(
        "deepseek/deepseek-reasoner"
    )));
    assert!(!prices::supports_vision(&LlmConfig::new(
        "openai/unknown-model"
    )));
}

#[tokio::test]
async fn the_openai_client_prices_its_calls() {
    let server = ScriptedLlmServer::start(vec![Step::Reply(Reply {
        text: Some("hi".into()),
        usage: Some(UsageSpec {
            prompt_tokens: 1_000,
            completion_tokens: 100,
            cached_tokens: 400,
            ..UsageSpec::default()
        }),
        ..Reply::default()
    })]);
    let llm = OpenAiChat::new(server.llm_config("openai/gpt-4o")).unwrap();
    let request = LlmRequest {
        messages: vec![Message::user("hello")],
        ..LlmRequest::default()
    };
    let response = llm
        .completion(request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.usage.cache_read_tokens, 400);
    assert!(
        close(
            response.cost,
            600.0 * 2.5e-6 + 400.0 * 1.25e-6 + 100.0 * 1e-5
        ),
        "{}",
        response.cost
    );
    assert_eq!(response.usage.context_window, 128_000);
}
