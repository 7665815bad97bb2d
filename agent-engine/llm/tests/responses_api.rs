//! `OpenAiResponses` against the scripted testkit server over real loopback HTTP: the exact
//! request (instructions, input items, tools, reasoning, include/store), replies and streams
//! with reasoning items, the reasoning item and `fc_` ids sent back across a tool turn (whether
//! or not the configuration asks for reasoning), upstream's default effort for reasoning models,
//! usage with cached and reasoning tokens, retries, errors and bad input.

use std::time::Duration;

use serde_json::json;
use tandem_llm::{LlmError, LlmRequest, LlmResponse, OpenAiResponses, StreamDelta};
use tandem_protocol::{Content, LlmConfig, Message};
use tandem_testkit::{
    ErrorReply, RawReply, Reply, ScriptedLlmServer, Step, ToolCallSpec, UsageSpec, llm,
};

use crate::complete;

const KEY: &str = "sk-test-responses";

fn config(base: &str, retries: u32) -> LlmConfig {
    let mut config = LlmConfig {
        api_key: Some(KEY.to_owned()),
        num_retries: retries,
        reasoning_effort: Some("high".into()),
        ..llm::config("openai/gpt-5-codex", base)
    };
    config
        .extra
        .insert("reasoning_summary".into(), json!("detailed"));
    config
}

fn client(server: &ScriptedLlmServer) -> OpenAiResponses {
    OpenAiResponses::new(config(&server.base_url(), 0)).unwrap()
}

fn request() -> LlmRequest {
    LlmRequest {
        messages: vec![
            Message::system("You are helpful."),
            Message::user("list files"),
        ],
        tools: vec![llm::terminal_tool()],
        prompt_cache_key: Some("conv-1".into()),
        ..LlmRequest::default()
    }
}

fn reasoning_tool_step() -> Step {
    Step::Reply(Reply {
        text: Some("Listing.".into()),
        reasoning: Some("The user wants the files listed.".into()),
        tool_calls: vec![
            ToolCallSpec {
                id: Some("call_ls".into()),
                ..ToolCallSpec::new("terminal", json!({"command": "ls"}))
            },
            ToolCallSpec {
                id: Some("call_pwd".into()),
                ..ToolCallSpec::new("terminal", json!({"command": "pwd"}))
            },
        ],
        usage: Some(UsageSpec {
            prompt_tokens: 80,
            completion_tokens: 30,
            cached_tokens: 50,
            reasoning_tokens: 12,
        }),
        ..Reply::default()
    })
}

#[tokio::test]
async fn request_shape() {
    let server = ScriptedLlmServer::start(vec![Step::text("hi")]);
    let response = complete(&client(&server), request()).await.unwrap();
    assert_eq!(response.message, Message::assistant("hi"));
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    let captured = server.captured().pop().unwrap();
    assert_eq!(captured.path, "/v1/responses");
    assert_eq!(captured.headers["authorization"], format!("Bearer {KEY}"));
    let body = captured.body;
    assert_eq!(body["model"], "gpt-5-codex");
    assert_eq!(body["instructions"], "You are helpful.");
    assert_eq!(
        body["input"],
        json!([{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]}])
    );
    assert_eq!(body["tools"][0]["name"], "terminal");
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(
        body["reasoning"],
        json!({"effort": "high", "summary": "detailed"})
    );
    assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(body["store"], false);
    assert_eq!(body["prompt_cache_key"], "conv-1");
    assert_eq!(server.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn reasoning_round_trip_across_a_tool_turn() {
    let server = ScriptedLlmServer::start(vec![reasoning_tool_step(), Step::text("Done.")]);
    let llm = client(&server);
    let first = complete(&llm, request()).await.unwrap();
    assert_eq!(first.finish_reason.as_deref(), Some("tool_calls"));
    let item = first.message.responses_reasoning_item.clone().unwrap();
    assert_eq!(item["encrypted_content"], "gAAAA_scripted_0000");
    assert_eq!(
        first.message.reasoning_content.as_deref(),
        Some("The user wants the files listed.")
    );
    let calls = first.message.tool_calls.clone().unwrap();
    assert_eq!(calls[0].id, "call_ls");
    assert_eq!(
        calls[0].responses_item_id.as_deref(),
        Some("fc_scripted_0000_0")
    );
    assert_eq!(calls[0].origin, "responses");
    assert_eq!(first.usage.prompt_tokens, 80);
    assert_eq!(first.usage.cache_read_tokens, 50);
    assert_eq!(first.usage.reasoning_tokens, 12);

    let mut next = request();
    next.messages.push(first.message.clone());
    for call in &calls {
        next.messages.push(Message::tool(
            &call.id,
            "terminal",
            vec![Content::text("out")],
        ));
    }
    complete(&llm, next).await.unwrap();
    let input = server.last_request().unwrap()["input"].clone();
    assert_eq!(input[1]["type"], "reasoning");
    assert_eq!(input[1]["id"], "rs_scripted_0000");
    assert_eq!(input[1]["encrypted_content"], "gAAAA_scripted_0000");
    assert_eq!(
        input[2],
        json!({"type": "message", "role": "assistant",
        "content": [{"type": "output_text", "text": "Listing."}]})
    );
    assert_eq!(input[3]["type"], "function_call");
    assert_eq!(input[3]["id"], "fc_scripted_0000_0");
    assert_eq!(input[3]["call_id"], "call_ls");
    assert_eq!(
        input[5],
        json!({"type": "function_call_output", "call_id": "call_ls", "output": "out"})
    );
    assert_eq!(server.violations(), Vec::<String>::new());
}

/// A client for `model` whose configuration says nothing about reasoning, or sets `effort`.
fn plain_client(server: &ScriptedLlmServer, model: &str, effort: Option<&str>) -> OpenAiResponses {
    let mut config = config(&server.base_url(), 0);
    config.model = model.to_owned();
    config.reasoning_effort = effort.map(str::to_owned);
    config.extra.remove("reasoning_summary");
    OpenAiResponses::new(config).unwrap()
}

#[tokio::test]
async fn reasoning_goes_back_when_the_configuration_asks_for_none() {
    // No effort configured (upstream's default applies) and effort explicitly none: the
    // reasoning item the provider returned goes back either way.
    for (effort, reasoning) in [(None, Some(json!({"effort": "high"}))), (Some(""), None)] {
        let server = ScriptedLlmServer::start(vec![reasoning_tool_step(), Step::text("Done.")]);
        let llm = plain_client(&server, "openai/gpt-5", effort);
        let first = complete(&llm, request()).await.unwrap();
        let mut next = request();
        next.messages.push(first.message.clone());
        for call in first.message.tool_calls.iter().flatten() {
            next.messages.push(Message::tool(
                &call.id,
                "terminal",
                vec![Content::text("out")],
            ));
        }
        complete(&llm, next).await.unwrap();
        let requests = server.requests();
        for body in &requests {
            assert_eq!(body.get("reasoning").cloned(), reasoning, "{effort:?}");
            assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
            assert_eq!(body["store"], false);
        }
        let input = requests[1]["input"].clone();
        assert_eq!(
            input[1],
            json!({"type": "reasoning", "id": "rs_scripted_0000",
                "summary": [{"type": "summary_text", "text": "The user wants the files listed."}],
                "encrypted_content": "gAAAA_scripted_0000"}),
            "{effort:?}"
        );
        assert_eq!(input[3]["type"], "function_call");
        assert_eq!(input[3]["id"], "fc_scripted_0000_0");
        assert_eq!(server.violations(), Vec::<String>::new());
    }
}

#[tokio::test]
async fn reasoning_models_get_upstreams_default_effort() {
    let cases = [
        ("openai/gpt-5", None, Some("high")),
        ("openai/gpt-5-codex", None, Some("high")),
        ("openai/o3", None, Some("high")),
        ("openai/o4-mini", None, Some("high")),
        ("openai/gpt-5", Some("minimal"), Some("minimal")),
        ("openai/o3", Some("low"), Some("low")),
        ("openai/gpt-4.1", None, None),
        ("openai/gpt-4o", None, None),
    ];
    for (model, configured, sent) in cases {
        let server = ScriptedLlmServer::start(vec![Step::text("hi")]);
        complete(&plain_client(&server, model, configured), request())
            .await
            .unwrap();
        let body = server.last_request().unwrap();
        assert_eq!(
            body.pointer("/reasoning/effort").and_then(|e| e.as_str()),
            sent,
            "{model} {configured:?}"
        );
        // Encrypted reasoning is asked for exactly when the model reasons.
        assert_eq!(body.get("include").is_some(), sent.is_some(), "{model}");
    }
}

#[tokio::test]
async fn streaming_delivers_deltas_and_the_same_message() {
    let server = ScriptedLlmServer::start(vec![reasoning_tool_step(), reasoning_tool_step()]);
    let llm = client(&server);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<StreamDelta>();
    let mut streamed_request = request();
    streamed_request.on_delta = Some(tx);
    let streamed = complete(&llm, streamed_request).await.unwrap();
    let whole = complete(&llm, request()).await.unwrap();
    assert_eq!(server.requests()[0]["stream"], true);
    let normalise = |r: &LlmResponse| {
        let mut m = r.message.clone();
        m.responses_reasoning_item = None;
        for call in m.tool_calls.iter_mut().flatten() {
            call.responses_item_id = None;
        }
        m
    };
    assert_eq!(normalise(&streamed), normalise(&whole));
    assert_eq!(streamed.usage.cache_read_tokens, 50);
    assert_eq!(
        streamed.message.tool_calls.unwrap()[1].arguments,
        r#"{"command":"pwd"}"#
    );
    let mut text = String::new();
    let mut reasoning = String::new();
    while let Ok(delta) = rx.try_recv() {
        text.push_str(delta.content.as_deref().unwrap_or_default());
        reasoning.push_str(delta.reasoning_content.as_deref().unwrap_or_default());
    }
    assert_eq!(text, "Listing.");
    assert_eq!(reasoning, "The user wants the files listed.");
}

#[tokio::test]
async fn errors_retries_and_bad_input() {
    let server = ScriptedLlmServer::start(vec![
        Step::error(401, "Incorrect API key provided"),
        Step::Error(ErrorReply {
            status: 400,
            body: Some(json!({"error": {"message": "Your input exceeds the context window of this model.",
                "type": "invalid_request_error", "code": "context_length_exceeded"}})),
            ..ErrorReply::default()
        }),
        Step::rate_limited("4"),
        Step::Garbled { delay_ms: 0 },
        Step::Truncated(Reply::text("cut")),
        Step::Raw(RawReply {
            content_type: Some("text/event-stream".into()),
            body: "event: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\
                   \"error\":{\"code\":\"server_error\",\"message\":\"The model crashed\"}}}\n\n"
                .into(),
            ..RawReply::default()
        }),
    ]);
    let llm = client(&server);
    assert!(matches!(
        complete(&llm, request()).await,
        Err(LlmError::Auth { .. })
    ));
    assert!(matches!(
        complete(&llm, request()).await,
        Err(LlmError::ContextWindowExceeded(_))
    ));
    assert_eq!(
        complete(&llm, request()).await.unwrap_err().retry_after(),
        Some(Duration::from_secs(4))
    );
    let mut streaming = request();
    streaming.on_delta = Some(tokio::sync::mpsc::unbounded_channel().0);
    assert!(matches!(
        complete(&llm, streaming.clone()).await,
        Err(LlmError::MalformedResponse(_))
    ));
    assert!(matches!(
        complete(&llm, streaming.clone()).await,
        Err(LlmError::MalformedResponse(_))
    ));
    assert_eq!(
        complete(&llm, streaming).await.unwrap_err(),
        LlmError::ServiceUnavailable {
            status: 500,
            message: "The model crashed".into()
        }
    );

    let server = ScriptedLlmServer::start(vec![
        Step::Error(ErrorReply {
            status: 503,
            ..ErrorReply::default()
        }),
        Step::Error(ErrorReply {
            status: 429,
            ..ErrorReply::default()
        }),
        Step::text("ok"),
    ]);
    let llm = OpenAiResponses::new(config(&server.base_url(), 2)).unwrap();
    assert_eq!(
        complete(&llm, request()).await.unwrap().message,
        Message::assistant("ok")
    );
    assert_eq!(server.request_count(), 3);
}
