//! `AnthropicMessages` against the scripted testkit server over real loopback HTTP: the exact
//! request (headers, system, tools, thinking, cache breakpoints), replies and streams with
//! thinking blocks, tool use across turns with signatures intact, usage with cache tokens,
//! retries and error mapping, bad input.

use std::io::{Read, Write};
use std::time::Duration;

use serde_json::{Value, json};
use tandem_llm::{AnthropicMessages, LlmError, LlmRequest, LlmResponse, StreamDelta};
use tandem_protocol::{Content, LlmConfig, Message, ThinkingBlock};
use tandem_testkit::{
    ErrorReply, RawReply, Reply, ScriptedLlmServer, Step, ThinkingSpec, ToolCallSpec, UsageSpec,
    llm,
};

use crate::complete;

const KEY: &str = "sk-ant-test-secret";

fn config(base: &str, retries: u32) -> LlmConfig {
    LlmConfig {
        api_key: Some(KEY.to_owned()),
        num_retries: retries,
        max_output_tokens: Some(8000),
        ..llm::config("anthropic/claude-sonnet-4-5", base)
    }
}

fn client(server: &ScriptedLlmServer) -> AnthropicMessages {
    AnthropicMessages::new(config(&server.anthropic_base_url(), 0)).unwrap()
}

fn request() -> LlmRequest {
    LlmRequest {
        messages: vec![
            Message::system("You are helpful."),
            Message::user("list files"),
        ],
        tools: vec![llm::terminal_tool()],
        ..LlmRequest::default()
    }
}

fn thinking_tool_step(signature: &str) -> Step {
    Step::Reply(Reply {
        text: Some("I will list them.".into()),
        thinking: vec![
            ThinkingSpec::signed("The user wants a listing.", signature),
            ThinkingSpec::redacted("REDACTED-BYTES"),
        ],
        tool_calls: vec![
            ToolCallSpec {
                id: Some("toolu_ls".into()),
                ..ToolCallSpec::new("terminal", json!({"command": "ls"}))
            },
            ToolCallSpec::new("terminal", json!({"command": "pwd"})),
        ],
        usage: Some(UsageSpec {
            prompt_tokens: 100,
            completion_tokens: 20,
            cached_tokens: 60,
            reasoning_tokens: 0,
        }),
        cache_write_tokens: 30,
        ..Reply::default()
    })
}

#[tokio::test]
async fn request_shape_and_headers() {
    let server = ScriptedLlmServer::start(vec![Step::text("hi")]);
    complete(&client(&server), request()).await.unwrap();
    let captured = server.captured().pop().unwrap();
    assert_eq!(captured.path, "/v1/messages");
    assert_eq!(captured.headers["x-api-key"], KEY);
    assert_eq!(captured.headers["anthropic-version"], "2023-06-01");
    assert!(!captured.headers.contains_key("authorization"));
    let body = captured.body;
    assert_eq!(body["model"], "claude-sonnet-4-5");
    assert_eq!(body["max_tokens"], 8000);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "You are helpful.", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": [{"type": "text", "text": "list files",
            "cache_control": {"type": "ephemeral"}}]}])
    );
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 7999})
    );
    assert_eq!(server.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn thinking_round_trip_across_a_tool_turn() {
    let server = ScriptedLlmServer::start(vec![thinking_tool_step("sig-A"), Step::text("Done.")]);
    let llm = client(&server);
    let first = complete(&llm, request()).await.unwrap();
    assert_eq!(first.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        first.message.thinking_blocks,
        vec![
            ThinkingBlock::Thinking {
                thinking: "The user wants a listing.".into(),
                signature: Some("sig-A".into())
            },
            ThinkingBlock::RedactedThinking {
                data: "REDACTED-BYTES".into()
            },
        ]
    );
    assert_eq!(
        first.message.reasoning_content.as_deref(),
        Some("The user wants a listing.")
    );
    let calls = first.message.tool_calls.clone().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0].arguments, r#"{"command":"ls"}"#);
    assert_eq!(first.usage.cache_read_tokens, 60);
    assert_eq!(first.usage.cache_write_tokens, 30);
    assert_eq!(first.usage.prompt_tokens, 190);
    assert_eq!(first.usage.completion_tokens, 20);

    let mut next = request();
    next.messages.push(first.message.clone());
    for call in &calls {
        next.messages.push(Message::tool(
            &call.id,
            "terminal",
            vec![Content::text("out")],
        ));
    }
    let second = complete(&llm, next).await.unwrap();
    assert_eq!(second.message, Message::assistant("Done."));
    let sent = server.last_request().unwrap();
    let assistant = &sent["messages"][1];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["content"][0],
        json!({"type": "thinking", "thinking": "The user wants a listing.", "signature": "sig-A"})
    );
    assert_eq!(
        assistant["content"][1],
        json!({"type": "redacted_thinking", "data": "REDACTED-BYTES"})
    );
    let results = sent["messages"][2]["content"].as_array().unwrap();
    assert_eq!(
        results.len(),
        2,
        "consecutive tool results merged into one user turn"
    );
    assert!(results.iter().all(|r| r["type"] == "tool_result"));
    assert_eq!(server.violations(), Vec::<String>::new());
}

#[tokio::test]
async fn streaming_delivers_deltas_and_the_same_message() {
    let server = ScriptedLlmServer::start(vec![
        thinking_tool_step("sig-S"),
        thinking_tool_step("sig-S"),
    ]);
    let llm = client(&server);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<StreamDelta>();
    let mut streamed_request = request();
    streamed_request.on_delta = Some(tx);
    let streamed = complete(&llm, streamed_request).await.unwrap();
    let whole = complete(&llm, request()).await.unwrap();
    assert_eq!(server.requests()[0]["stream"], true);
    let ids = |r: &LlmResponse| {
        r.message
            .tool_calls
            .clone()
            .unwrap()
            .iter()
            .map(|c| c.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&streamed), vec!["toolu_ls", "toolu_0000_1"]);
    assert_eq!(ids(&whole), vec!["toolu_ls", "toolu_0001_1"]);
    let mut normalised = streamed.message.clone();
    normalised.tool_calls = whole.message.tool_calls.clone();
    assert_eq!(normalised, whole.message);
    assert_eq!(streamed.usage.cache_read_tokens, 60);
    assert_eq!(streamed.usage.completion_tokens, 20);
    let mut text = String::new();
    let mut thinking = String::new();
    while let Ok(delta) = rx.try_recv() {
        text.push_str(delta.content.as_deref().unwrap_or_default());
        thinking.push_str(delta.reasoning_content.as_deref().unwrap_or_default());
    }
    assert_eq!(text, "I will list them.");
    assert_eq!(thinking, "The user wants a listing.");
}

#[tokio::test]
async fn errors_map_to_classes() {
    let server = ScriptedLlmServer::start(vec![
        Step::error(401, "invalid x-api-key"),
        Step::error(400, "prompt is too long: 210000 tokens > 200000 maximum"),
        Step::rate_limited("7"),
        Step::Error(ErrorReply {
            status: 429,
            ..ErrorReply::default()
        }),
        Step::Error(ErrorReply {
            status: 529,
            body: Some(json!("Overloaded")),
            ..ErrorReply::default()
        }),
        Step::Error(ErrorReply {
            status: 502,
            content_type: Some("text/html".into()),
            body: Some(json!(
                "<html><head><title>502 Bad Gateway</title></head></html>"
            )),
            ..ErrorReply::default()
        }),
    ]);
    let llm = client(&server);
    assert!(matches!(
        complete(&llm, request()).await,
        Err(LlmError::Auth { status: 401, .. })
    ));
    assert!(matches!(
        complete(&llm, request()).await,
        Err(LlmError::ContextWindowExceeded(_))
    ));
    assert_eq!(
        complete(&llm, request()).await.unwrap_err().retry_after(),
        Some(Duration::from_secs(7))
    );
    let limited = complete(&llm, request()).await.unwrap_err();
    assert!(
        matches!(
            limited,
            LlmError::RateLimited {
                retry_after: None,
                ..
            }
        ),
        "{limited:?}"
    );
    assert_eq!(
        complete(&llm, request()).await.unwrap_err(),
        LlmError::ServiceUnavailable {
            status: 529,
            message: "Overloaded".into()
        }
    );
    assert_eq!(
        complete(&llm, request()).await.unwrap_err(),
        LlmError::ServiceUnavailable {
            status: 502,
            message: "HTML error page: 502 Bad Gateway".into()
        }
    );
}

#[tokio::test]
async fn overloaded_and_rate_limited_are_retried() {
    let server = ScriptedLlmServer::start(vec![
        Step::Error(ErrorReply {
            status: 529,
            ..ErrorReply::default()
        }),
        Step::rate_limited("0"),
        Step::text("finally"),
    ]);
    let llm = AnthropicMessages::new(config(&server.anthropic_base_url(), 3)).unwrap();
    let response = complete(&llm, request()).await.unwrap();
    assert_eq!(response.message, Message::assistant("finally"));
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn bad_input_never_panics() {
    let server = ScriptedLlmServer::start(vec![
        Step::Garbled { delay_ms: 0 },
        Step::Truncated(Reply::text("a reply cut in half")),
        Step::Raw(RawReply {
            content_type: Some("text/event-stream".into()),
            body: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\"}}\n\n\
                   event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
                .into(),
            ..RawReply::default()
        }),
        Step::Raw(RawReply { body: "{\"type\":\"message\",\"content\":null}".into(), ..RawReply::default() }),
        Step::Raw(RawReply {
            body: json!({"id": "m", "type": "message", "content": [
                {"type": "tool_use", "id": "toolu_x", "name": "terminal"},
                {"type": "server_thing", "x": 1}], "stop_reason": "pause_turn"})
            .to_string(),
            ..RawReply::default()
        }),
    ]);
    let llm = client(&server);
    assert!(matches!(
        complete(&llm, request()).await,
        Err(LlmError::MalformedResponse(_))
    ));
    assert!(matches!(
        complete(&llm, request()).await,
        Err(LlmError::MalformedResponse(_))
    ));
    let mut streaming = request();
    streaming.on_delta = Some(tokio::sync::mpsc::unbounded_channel().0);
    assert!(matches!(
        complete(&llm, streaming).await,
        Err(LlmError::ServiceUnavailable { status: 529, .. })
    ));
    assert!(matches!(
        complete(&llm, request()).await,
        Err(LlmError::MalformedResponse(_))
    ));
    let odd = complete(&llm, request()).await.unwrap();
    assert_eq!(odd.finish_reason.as_deref(), Some("pause_turn"));
    assert_eq!(odd.message.tool_calls.unwrap()[0].arguments, "{}");
}

#[tokio::test]
async fn truncated_stream_and_connection_reset() {
    let server = ScriptedLlmServer::start(vec![Step::Truncated(thinking_reply())]);
    let llm = client(&server);
    let mut streaming = request();
    streaming.on_delta = Some(tokio::sync::mpsc::unbounded_channel().0);
    assert!(matches!(
        complete(&llm, streaming).await,
        Err(LlmError::MalformedResponse(_))
    ));

    // A server that reads the request and closes the connection without answering.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(1) {
            let mut stream = stream.unwrap();
            let mut buf = [0u8; 4096];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 500\r\n\r\n{\"id\"");
        }
    });
    let llm = AnthropicMessages::new(config(&format!("http://{addr}"), 0)).unwrap();
    let error = complete(&llm, request()).await.unwrap_err();
    assert!(
        matches!(
            error,
            LlmError::Connection(_) | LlmError::MalformedResponse(_)
        ),
        "{error:?}"
    );
    assert!(error.is_retryable());
}

fn thinking_reply() -> Reply {
    Reply {
        text: Some("partial text that will never finish".into()),
        reasoning: Some("some reasoning".into()),
        ..Reply::default()
    }
}

#[test]
fn body_value_round_trips_via_parse_reply() {
    let llm = AnthropicMessages::new(config("http://127.0.0.1:9", 0)).unwrap();
    let reply: Value = json!({"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1}});
    let response = llm
        .parse_reply("application/json", reply.to_string().as_bytes())
        .unwrap();
    assert_eq!(response.message, Message::assistant("ok"));
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
}
