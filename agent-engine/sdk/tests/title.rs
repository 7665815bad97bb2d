//! Titles: asked of the LLM without tools, cleaned, and falling back to a truncation.

use tandem_llm::OpenAiChat;
use tandem_protocol::LlmConfig;
use tandem_sdk::generate_title;
use tandem_sdk::title::{MAX_TITLE_CHARS, clean_title, fallback_title};
use tandem_testkit::{Script, ScriptedLlmServer, Step};
use tokio_util::sync::CancellationToken;

fn client(server: &ScriptedLlmServer) -> OpenAiChat {
    let mut config = LlmConfig::new("openai/titler");
    config.base_url = Some(server.base_url());
    config.num_retries = 0;
    OpenAiChat::new(config).unwrap()
}

#[tokio::test]
async fn the_llm_writes_the_title() {
    let server = ScriptedLlmServer::start(
        Script::new(Vec::new()).with_no_tools_text("\"Fix the Login Redirect Bug.\"\n"),
    );
    let title = generate_title(
        &client(&server),
        "The login page redirects in a loop, please fix it",
        CancellationToken::new(),
    )
    .await;
    assert_eq!(title, "Fix the Login Redirect Bug");
    let request = server.last_request().unwrap();
    assert!(request.get("tools").is_none());
    let prompt = request["messages"][0]["content"].to_string();
    assert!(
        prompt.contains("at most 8 words") && prompt.contains("redirects in a loop"),
        "{prompt}"
    );
}

#[tokio::test]
async fn failures_and_empty_replies_fall_back_to_the_message() {
    let message = "  \nPlease add a --verbose flag to the CLI so that every request and response gets printed while debugging\nmore";
    let server = ScriptedLlmServer::start(vec![Step::error(500, "boom"), Step::text("  \n ")]);
    let llm = client(&server);
    let expected = fallback_title(message);
    assert!(
        expected.ends_with('…') && expected.chars().count() <= MAX_TITLE_CHARS,
        "{expected}"
    );
    assert!(expected.starts_with("Please add a --verbose flag"));
    assert_eq!(
        generate_title(&llm, message, CancellationToken::new()).await,
        expected
    );
    assert_eq!(
        generate_title(&llm, message, CancellationToken::new()).await,
        expected
    );

    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let server = ScriptedLlmServer::start(vec![Step::text("never")]);
    assert_eq!(
        generate_title(&client(&server), "short task", cancelled).await,
        "short task"
    );
}

#[test]
fn cleaning() {
    assert_eq!(
        clean_title("Title: **Refactor the parser**"),
        "Refactor the parser"
    );
    assert_eq!(clean_title("# Add tests!\nbecause..."), "Add tests");
    assert_eq!(clean_title("'Update   README'."), "Update README");
    assert_eq!(clean_title("“Quoted title”"), "Quoted title");
    assert_eq!(clean_title(""), "");
    let long = clean_title(&"word ".repeat(40));
    assert!(
        long.chars().count() <= MAX_TITLE_CHARS && !long.ends_with(' '),
        "{long}"
    );
    assert_eq!(fallback_title("short"), "short");
    let unbroken = fallback_title(&"x".repeat(100));
    assert_eq!(unbroken.chars().count(), MAX_TITLE_CHARS);
}
