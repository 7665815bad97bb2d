//! `client_for` picks the protocol by model name and every client honours the settings that
//! apply to all (extra headers, litellm_extra_body, drop_params, seed, top_k,
//! max_message_chars, disable_vision), checked on the wire against the scripted server.

use serde_json::{Value, json};
use tandem_llm::{Llm, LlmRequest, Protocol, client_for, provider};
use tandem_protocol::{Content, ImageContent, LlmConfig, Message, Role};
use tandem_testkit::{ScriptedLlmServer, Step};
use tokio_util::sync::CancellationToken;

fn config(model: &str, server: &ScriptedLlmServer) -> LlmConfig {
    let mut config = LlmConfig {
        api_key: Some("k".into()),
        max_message_chars: Some(20),
        seed: Some(7),
        extra_headers: Some([("x-team".to_owned(), "tandem".to_owned())].into()),
        ..server.llm_config(model)
    };
    config.extra.insert(
        "litellm_extra_body".into(),
        json!({"metadata": {"run": "r1"}}),
    );
    config.extra.insert("disable_vision".into(), json!(true));
    config.extra.insert("top_k".into(), json!(40));
    config
}

fn request() -> LlmRequest {
    LlmRequest {
        messages: vec![
            Message::system("sys"),
            Message::new(
                Role::User,
                vec![
                    Content::text("x".repeat(100)),
                    Content::Image(ImageContent {
                        image_urls: vec!["data:image/png;base64,AAAA".into()],
                        ..ImageContent::default()
                    }),
                ],
            ),
        ],
        ..LlmRequest::default()
    }
}

#[tokio::test]
async fn each_protocol_gets_the_common_settings() {
    for (model, path) in [
        ("openai/gpt-4o", "/v1/chat/completions"),
        ("anthropic/claude-3-5-haiku", "/v1/messages"),
        ("openai/gpt-5-codex", "/v1/responses"),
        ("openrouter/qwen/qwen3-coder", "/v1/chat/completions"),
        ("gemini/gemini-2.5-pro", "/v1/chat/completions"),
    ] {
        let server = ScriptedLlmServer::start(vec![Step::text("ok")]);
        let llm = client_for(config(model, &server)).unwrap();
        let response = llm
            .completion(request(), CancellationToken::new())
            .await
            .unwrap();
        assert_eq!(response.message, Message::assistant("ok"), "{model}");
        let captured = server.captured().pop().unwrap();
        assert_eq!(captured.path, path, "{model}");
        assert_eq!(captured.headers["x-team"], "tandem", "{model}");
        let body = captured.body;
        assert_eq!(body["metadata"], json!({"run": "r1"}), "{model}");
        let text = body.to_string();
        assert!(
            !text.contains("base64,AAAA") && !text.contains("AAAA\""),
            "{model}: images stripped: {text}"
        );
        assert!(text.contains("truncated"), "{model}: long text cut: {text}");
        assert!(!text.contains(&"x".repeat(50)), "{model}");
        assert_eq!(server.violations(), Vec::<String>::new(), "{model}");
        if path != "/v1/messages" {
            assert_eq!(
                body.get("top_k").and_then(Value::as_f64),
                if path.contains("chat") {
                    Some(40.0)
                } else {
                    None
                }
            );
        } else {
            assert_eq!(body["top_k"], 40);
        }
    }
}

#[test]
fn routes_by_prefix_and_keys_from_the_environment() {
    let route = |m: &str| provider::route(&LlmConfig::new(m));
    assert_eq!(
        route("anthropic/claude-opus-4-1").protocol,
        Protocol::Anthropic
    );
    assert_eq!(route("openai/o3").protocol, Protocol::Chat);
    assert_eq!(route("openai/gpt-5-codex").protocol, Protocol::Responses);
    assert_eq!(
        route("deepseek/deepseek-chat").default_base_url,
        Some("https://api.deepseek.com/v1")
    );
    assert_eq!(route("mistral/devstral").key_env, Some("MISTRAL_API_KEY"));
    assert_eq!(route("ollama/qwen3").key_env, None);
    assert_eq!(route("xai/grok-4").wire_model, "grok-4");
    let mut explicit = LlmConfig::new("together_ai/x");
    explicit.api_key = Some("mine".into());
    assert_eq!(
        provider::with_env_key(explicit).api_key.as_deref(),
        Some("mine")
    );
    assert!(client_for(LlmConfig::new("hosted_vllm/m")).is_err());
    assert_eq!(
        client_for(LlmConfig::new("anthropic/claude-sonnet-4-5"))
            .unwrap()
            .config()
            .model,
        "anthropic/claude-sonnet-4-5"
    );
}
