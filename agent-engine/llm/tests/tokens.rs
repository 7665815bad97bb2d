//! Token counting with the compiled-in tiktoken encodings.

use tandem_llm::tokens::{Encoding, count_message_tokens, count_request_tokens, count_text_tokens};
use tandem_protocol::{Content, ImageContent, Message, MessageToolCall, Role};

#[test]
fn encodings_by_model() {
    for model in [
        "gpt-4o",
        "openai/gpt-4o-mini",
        "openai/gpt-5",
        "o3",
        "openai/o4-mini",
        "gpt-4.1",
        "openrouter/openai/gpt-oss-120b",
    ] {
        assert_eq!(Encoding::for_model(model), Encoding::O200k, "{model}");
    }
    for model in [
        "gpt-4",
        "gpt-3.5-turbo",
        "anthropic/claude-sonnet-4-5",
        "ollama/llama3",
        "openai/omni-x",
    ] {
        assert_eq!(Encoding::for_model(model), Encoding::Cl100k, "{model}");
    }
}

#[test]
fn text_counts_match_the_encodings() {
    // Known counts: "hello world" is two tokens in both encodings.
    assert_eq!(count_text_tokens("gpt-4o", "hello world"), 2);
    assert_eq!(count_text_tokens("gpt-4", "hello world"), 2);
    assert_eq!(count_text_tokens("gpt-4o", ""), 0);
    // Special-token text is ordinary text, never a panic.
    assert!(count_text_tokens("gpt-4o", "<|endoftext|>") > 1);
    let long = "word ".repeat(1000);
    let n = count_text_tokens("anthropic/claude-sonnet-4-5", &long);
    assert!((900..=1100).contains(&n), "{n}");
}

#[test]
fn message_counts_include_overhead_calls_and_images() {
    let model = "openai/gpt-4o";
    let empty = count_message_tokens(model, &[]);
    assert_eq!(empty, 3);
    let one = count_message_tokens(model, &[Message::user("hello world")]);
    assert_eq!(one, 3 + 4 + 2);

    let mut assistant = Message::new(Role::Assistant, Vec::new());
    assistant.tool_calls = Some(vec![MessageToolCall {
        id: "call_1".into(),
        name: "terminal".into(),
        arguments: r#"{"command":"ls -la"}"#.into(),
        origin: "completion".into(),
        ..MessageToolCall::default()
    }]);
    let with_call = count_message_tokens(model, &[assistant]);
    assert!(with_call > 3 + 4 + 5, "{with_call}");

    let image = Message::new(
        Role::User,
        vec![Content::Image(ImageContent {
            image_urls: vec![
                "data:image/png;base64,AAAA".into(),
                "https://x/y.png".into(),
            ],
            ..ImageContent::default()
        })],
    );
    assert_eq!(count_message_tokens(model, &[image]), 3 + 4 + 2 * 85);

    let tools = vec![serde_json::json!({"type": "function", "function": {"name": "terminal"}})];
    assert!(count_request_tokens(model, &[], &tools) > empty);
}
