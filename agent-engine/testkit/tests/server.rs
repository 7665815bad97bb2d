//! The scripted server speaks OpenAI Chat Completions: JSON and SSE shapes, errors, capture,
//! exhaustion and invariant checks, over real loopback HTTP.

use std::sync::Arc;

use serde_json::{Value, json};
use tandem_testkit::{Reply, Script, ScriptedLlmServer, Step, ToolCallSpec, UsageSpec};

fn request(stream: bool) -> Value {
    let mut body = json!({
        "model": "fake",
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "You are helpful."}]},
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        ],
        "tools": [{"type": "function", "function": {"name": "terminal", "parameters": {}}}],
    });
    if stream {
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

async fn post(server: &ScriptedLlmServer, body: &Value) -> reqwest::Response {
    reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url()))
        .header("authorization", "Bearer sk-test")
        .json(body)
        .send()
        .await
        .unwrap()
}

/// The `data:` payloads of an SSE body.
fn sse_data(body: &str) -> Vec<String> {
    body.split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .map(str::to_owned)
        .collect()
}

#[tokio::test]
async fn json_reply_has_openai_shape() {
    let server = ScriptedLlmServer::start(vec![Step::Reply(Reply {
        text: Some("Hello".into()),
        tool_calls: vec![ToolCallSpec::new("terminal", json!({"command": "ls"}))],
        usage: Some(UsageSpec {
            prompt_tokens: 10,
            completion_tokens: 3,
            cached_tokens: 4,
            reasoning_tokens: 1,
        }),
        ..Reply::default()
    })]);
    let response = post(&server, &request(false)).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body,
        json!({
            "id": "chatcmpl-scripted-0000",
            "object": "chat.completion",
            "created": 1_700_000_000u64,
            "model": "fake",
            "choices": [{
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Hello",
                    "tool_calls": [{"id": "call_0000_0", "type": "function",
                        "function": {"name": "terminal", "arguments": "{\"command\":\"ls\"}"}}],
                },
                "finish_reason": "tool_calls",
            }],
            "usage": {
                "prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13,
                "prompt_tokens_details": {"cached_tokens": 4},
                "completion_tokens_details": {"reasoning_tokens": 1},
            },
        })
    );
    assert_eq!(server.remaining_steps(), 0);
    assert!(!server.exhausted());
}

#[tokio::test]
async fn sse_reply_streams_chunks_usage_and_done() {
    let server = ScriptedLlmServer::start(vec![Step::Reply(Reply {
        text: Some("Hello there, this is a longer text".into()),
        tool_calls: vec![ToolCallSpec::new("terminal", json!({"command": "echo hi"}))],
        ..Reply::default()
    })]);
    let response = post(&server, &request(true)).await;
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let data = sse_data(&response.text().await.unwrap());
    assert_eq!(data.last().unwrap(), "[DONE]");
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
    let text: String = chunks
        .iter()
        .filter_map(|c| {
            c.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
        })
        .collect();
    assert_eq!(text, "Hello there, this is a longer text");
    let args: String = chunks
        .iter()
        .filter_map(|c| c.pointer("/choices/0/delta/tool_calls/0/function/arguments"))
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(args, r#"{"command":"echo hi"}"#);
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "tool_calls");
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn exhausted_script_answers_500_and_is_recorded() {
    let server = ScriptedLlmServer::start(vec![Step::text("only one")]);
    assert_eq!(post(&server, &request(false)).await.status(), 200);
    let response = post(&server, &request(false)).await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.unwrap();
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("script exhausted"), "{message}");
    assert!(server.exhausted());
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn captures_bodies_and_headers() {
    let server = ScriptedLlmServer::start(vec![Step::text("a")]);
    let sent = request(false);
    post(&server, &sent).await;
    assert_eq!(server.requests(), vec![sent.clone()]);
    assert_eq!(server.last_request(), Some(sent));
    let captured = server.captured();
    assert_eq!(captured[0].path, "/v1/chat/completions");
    assert_eq!(captured[0].headers["authorization"], "Bearer sk-test");
}

#[tokio::test]
async fn errors_carry_status_body_and_retry_after() {
    let server = ScriptedLlmServer::start(vec![
        Step::rate_limited("3"),
        Step::Error(tandem_testkit::ErrorReply {
            status: 502,
            body: Some(json!("<html><title>502 Bad Gateway</title></html>")),
            content_type: Some("text/html".into()),
            ..Default::default()
        }),
    ]);
    let response = post(&server, &request(false)).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "3");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["type"], "rate_limit_error");
    let response = post(&server, &request(false)).await;
    assert_eq!(response.status(), 502);
    assert_eq!(response.headers()["content-type"], "text/html");
    assert!(response.text().await.unwrap().contains("502 Bad Gateway"));
}

#[tokio::test]
async fn garbled_and_truncated_bodies_are_not_json() {
    let server = ScriptedLlmServer::start(vec![
        Step::Garbled { delay_ms: 0 },
        Step::Truncated(Reply::text("this reply is cut in half")),
    ]);
    for _ in 0..2 {
        let text = post(&server, &request(false)).await.text().await.unwrap();
        assert!(serde_json::from_str::<Value>(&text).is_err(), "{text}");
    }
}

#[tokio::test]
async fn invariant_violations_are_recorded() {
    let server = ScriptedLlmServer::start(vec![Step::text("a")]);
    let mut body = request(false);
    body["messages"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "tool", "tool_call_id": "nope", "name": "terminal", "content": "x"}));
    post(&server, &body).await;
    assert_eq!(
        server.violations(),
        vec!["request #0: message 2: tool result answers unknown tool_call_id `nope`".to_owned()]
    );
}

#[tokio::test]
async fn responder_and_no_tools_text() {
    let server = ScriptedLlmServer::with_responder(Arc::new(|_request: &Value, index: usize| {
        if index < 2 {
            Step::tool_call("terminal", json!({"command": format!("echo {index}")}))
        } else {
            Step::tool_call("finish", json!({"message": "done"}))
        }
    }));
    server.set_no_tools_text("A title");
    let mut no_tools = request(false);
    no_tools.as_object_mut().unwrap().remove("tools");
    let mut names = Vec::new();
    for i in 0..3 {
        if i == 1 {
            let body: Value = post(&server, &no_tools).await.json().await.unwrap();
            assert_eq!(body["choices"][0]["message"]["content"], "A title");
        }
        let body: Value = post(&server, &request(false)).await.json().await.unwrap();
        let call = &body["choices"][0]["message"]["tool_calls"][0]["function"];
        names.push(format!(
            "{} {}",
            call["name"].as_str().unwrap(),
            call["arguments"].as_str().unwrap()
        ));
    }
    assert_eq!(
        names,
        [
            r#"terminal {"command":"echo 0"}"#,
            r#"terminal {"command":"echo 1"}"#,
            r#"finish {"message":"done"}"#,
        ]
    );
}

#[tokio::test]
async fn models_endpoint_lists_a_model() {
    let server = ScriptedLlmServer::start(Vec::<Step>::new());
    let body: Value = reqwest::get(format!("{}/models", server.base_url()))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(body["data"][0]["id"], "scripted");
}

#[test]
fn script_files_parse() {
    let script = Script::from_json(
        r#"{"no_tools_text": "T", "steps": [
            {"type": "reply", "text": "hi", "tool_calls": [{"name": "terminal", "arguments": "{bad"}]},
            {"type": "error", "status": 429, "retry_after": 2},
            {"type": "garbled"}
        ]}"#,
    )
    .unwrap();
    assert_eq!(script.no_tools_text.as_deref(), Some("T"));
    let Step::Reply(reply) = &script.steps[0] else {
        panic!()
    };
    assert_eq!(reply.tool_calls[0].arguments_text(), "{bad");
    let Step::Error(error) = &script.steps[1] else {
        panic!()
    };
    assert_eq!(error.retry_after.as_deref(), Some("2"));
    assert_eq!(
        Script::from_json(r#"[{"type": "reply"}]"#)
            .unwrap()
            .steps
            .len(),
        1
    );
}

#[test]
fn works_from_sync_code_and_stops_on_drop() {
    let server = ScriptedLlmServer::start(vec![Step::text("a")]);
    let addr = server.addr();
    assert!(std::net::TcpStream::connect(addr).is_ok());
    drop(server);
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(std::net::TcpStream::connect(addr).is_err());
}
