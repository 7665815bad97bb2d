//! `OpenAiChat` against the scripted testkit server over real loopback HTTP: replies, streams,
//! usage, retries, error mapping, cancellation and the exact request sent.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_llm::{Llm, LlmError, LlmRequest, OpenAiChat, StreamDelta};
use tandem_protocol::{Content, LlmConfig, Message, MessageToolCall, Role};
use tandem_testkit::{ErrorReply, Reply, ScriptedLlmServer, Step, ToolCallSpec, UsageSpec, llm};
use tokio_util::sync::CancellationToken;

use crate::complete;

const KEY: &str = "sk-test-very-secret-key";

fn config(base_url: &str) -> LlmConfig {
    LlmConfig {
        api_key: Some(KEY.to_owned()),
        ..llm::config("openai/fake", base_url)
    }
}

fn client(server: &ScriptedLlmServer) -> OpenAiChat {
    OpenAiChat::new(config(&server.base_url())).unwrap()
}

fn retrying_client(server: &ScriptedLlmServer, retries: u32) -> OpenAiChat {
    let mut config = config(&server.base_url());
    config.num_retries = retries;
    OpenAiChat::new(config).unwrap()
}

fn request() -> LlmRequest {
    LlmRequest {
        messages: vec![Message::system("You are helpful."), Message::user("hi")],
        tools: vec![llm::terminal_tool()],
        ..LlmRequest::default()
    }
}

#[tokio::test]
async fn json_reply_with_text() {
    let server = ScriptedLlmServer::start(vec![Step::text("Hello there")]);
    let response = complete(&client(&server), request()).await.unwrap();
    assert_eq!(response.id, "chatcmpl-scripted-0000");
    assert_eq!(response.model, "fake");
    assert_eq!(response.message, Message::assistant("Hello there"));
    assert_eq!(response.finish_reason.as_deref(), Some("stop"));
    assert!(response.usage.prompt_tokens > 0);
    assert_eq!(response.usage.model, "openai/fake");
    assert_eq!(response.usage.response_id, "chatcmpl-scripted-0000");
    assert_eq!(response.cost, 0.0);
    assert!(response.latency > Duration::ZERO);
    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(server.last_request().unwrap().get("stream"), None);
}

#[tokio::test]
async fn json_reply_with_several_tool_calls() {
    let server = ScriptedLlmServer::start(vec![Step::Reply(Reply {
        text: Some("Running both.".into()),
        tool_calls: vec![
            ToolCallSpec::new("terminal", json!({"command": "ls"})),
            ToolCallSpec {
                id: Some("call_custom".into()),
                ..ToolCallSpec::new("file_editor", json!("{\"command\": \"vi"))
            },
        ],
        ..Reply::default()
    })]);
    let response = complete(&client(&server), request()).await.unwrap();
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(response.message.text(), "Running both.");
    let call = |id: &str, name: &str, arguments: &str| MessageToolCall {
        id: id.into(),
        responses_item_id: None,
        name: name.into(),
        arguments: arguments.into(),
        origin: "completion".into(),
    };
    assert_eq!(
        response.message.tool_calls,
        Some(vec![
            call("call_0000_0", "terminal", r#"{"command":"ls"}"#),
            call("call_custom", "file_editor", r#"{"command": "vi"#),
        ])
    );
}

#[tokio::test]
async fn sse_stream_delivers_deltas_and_assembles_tool_calls() {
    let server = ScriptedLlmServer::start(vec![Step::Reply(Reply {
        text: Some("Let me look at the files in the workspace.".into()),
        reasoning: Some("The user wants a listing.".into()),
        tool_calls: vec![
            ToolCallSpec::new("terminal", json!({"command": "ls -la /workspace/project"})),
            ToolCallSpec::new("finish", json!({"message": "all done, nothing else to do"})),
        ],
        usage: Some(UsageSpec {
            prompt_tokens: 42,
            completion_tokens: 7,
            ..UsageSpec::default()
        }),
        ..Reply::default()
    })]);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let response = complete(
        &client(&server),
        LlmRequest {
            on_delta: Some(tx),
            ..request()
        },
    )
    .await
    .unwrap();

    let mut deltas: Vec<StreamDelta> = Vec::new();
    while let Ok(delta) = rx.try_recv() {
        deltas.push(delta);
    }
    assert!(deltas.len() > 4, "text should arrive in pieces: {deltas:?}");
    let text: String = deltas.iter().filter_map(|d| d.content.clone()).collect();
    let reasoning: String = deltas
        .iter()
        .filter_map(|d| d.reasoning_content.clone())
        .collect();
    assert_eq!(text, "Let me look at the files in the workspace.");
    assert_eq!(reasoning, "The user wants a listing.");

    assert_eq!(response.message.text(), text);
    assert_eq!(
        response.message.reasoning_content.as_deref(),
        Some("The user wants a listing.")
    );
    let calls = response.message.tool_calls.unwrap();
    let calls: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), c.arguments.as_str()))
        .collect();
    assert_eq!(
        calls,
        vec![
            (
                "call_0000_0",
                "terminal",
                r#"{"command":"ls -la /workspace/project"}"#
            ),
            (
                "call_0000_1",
                "finish",
                r#"{"message":"all done, nothing else to do"}"#
            ),
        ]
    );
    assert_eq!(response.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(
        (
            response.usage.prompt_tokens,
            response.usage.completion_tokens
        ),
        (42, 7)
    );

    let sent = server.last_request().unwrap();
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"], json!({"include_usage": true}));
}

#[tokio::test]
async fn config_stream_streams_without_a_delta_sink() {
    let server = ScriptedLlmServer::start(vec![Step::text("streamed anyway")]);
    let mut config = config(&server.base_url());
    config.stream = true;
    let llm = OpenAiChat::new(config).unwrap();
    let response = complete(&llm, request()).await.unwrap();
    assert_eq!(response.message.text(), "streamed anyway");
    assert_eq!(server.last_request().unwrap()["stream"], true);
}

#[tokio::test]
async fn usage_is_parsed_and_missing_usage_is_zero() {
    let server = ScriptedLlmServer::start(vec![
        Step::Reply(Reply {
            text: Some("a".into()),
            usage: Some(UsageSpec {
                prompt_tokens: 1000,
                completion_tokens: 50,
                cached_tokens: 600,
                reasoning_tokens: 20,
            }),
            ..Reply::default()
        }),
        Step::Reply(Reply {
            text: Some("b".into()),
            no_usage: true,
            ..Reply::default()
        }),
    ]);
    let mut config = config(&server.base_url());
    config.input_cost_per_token = Some(0.000_002);
    config.output_cost_per_token = Some(0.000_01);
    let llm = OpenAiChat::new(config).unwrap();

    let usage = complete(&llm, request()).await.unwrap();
    assert_eq!(
        (
            usage.usage.prompt_tokens,
            usage.usage.completion_tokens,
            usage.usage.cache_read_tokens,
            usage.usage.reasoning_tokens,
            usage.usage.per_turn_token,
        ),
        (1000, 50, 600, 20, 1050)
    );
    assert!((usage.cost - 0.0025).abs() < 1e-12, "{}", usage.cost);

    let none = complete(&llm, request()).await.unwrap();
    assert_eq!(
        (
            none.usage.prompt_tokens,
            none.usage.completion_tokens,
            none.usage.per_turn_token
        ),
        (0, 0, 0)
    );
    assert_eq!(none.cost, 0.0);
}

#[tokio::test]
async fn rate_limit_with_retry_after_then_success() {
    let server = ScriptedLlmServer::start(vec![Step::rate_limited("0.3"), Step::text("ok")]);
    let mut config = config(&server.base_url());
    config.num_retries = 2;
    config.retry_max_wait = 5.0;
    config.retry_multiplier = 0.0;
    let llm = OpenAiChat::new(config).unwrap();
    let started = Instant::now();
    let response = complete(&llm, request()).await.unwrap();
    assert_eq!(response.message.text(), "ok");
    assert_eq!(server.request_count(), 2);
    // The backoff alone would be 0 s: the wait came from `retry-after`.
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn server_error_then_success() {
    let server = ScriptedLlmServer::start(vec![Step::error(500, "boom"), Step::text("ok")]);
    let response = complete(&retrying_client(&server, 3), request())
        .await
        .unwrap();
    assert_eq!(response.message.text(), "ok");
    assert_eq!(server.request_count(), 2);
    assert_eq!(
        server.requests()[0],
        server.requests()[1],
        "retries resend the same body"
    );
}

#[tokio::test]
async fn retries_give_up_with_the_last_error() {
    let server = ScriptedLlmServer::start(vec![
        Step::error(503, "down 1"),
        Step::error(503, "down 2"),
        Step::error(503, "down 3"),
    ]);
    let error = complete(&retrying_client(&server, 2), request())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::ServiceUnavailable {
            status: 503,
            message: "down 3".into()
        }
    );
    assert_eq!(error.code(), "LLMServiceUnavailableError");
    assert_eq!(server.request_count(), 3);
    assert!(!server.exhausted());
}

#[tokio::test]
async fn unauthorized_fails_at_once() {
    let server = ScriptedLlmServer::start(vec![
        Step::error(401, "Incorrect API key provided"),
        Step::text("never"),
    ]);
    let error = complete(&retrying_client(&server, 5), request())
        .await
        .unwrap_err();
    assert_eq!(
        error,
        LlmError::Auth {
            status: 401,
            message: "Incorrect API key provided".into()
        }
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn context_window_errors_are_recognised() {
    let server = ScriptedLlmServer::start(vec![Step::Error(ErrorReply {
        status: 400,
        body: Some(json!({"error": {
            "message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
            "type": "invalid_request_error",
            "code": "context_length_exceeded",
        }})),
        ..ErrorReply::default()
    })]);
    let error = complete(&retrying_client(&server, 3), request())
        .await
        .unwrap_err();
    assert!(
        matches!(&error, LlmError::ContextWindowExceeded(m) if m.contains("128000")),
        "{error:?}"
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn html_error_page_gives_a_clear_message() {
    let page = "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway</title></head>\n\
                <body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>";
    let server = ScriptedLlmServer::start(vec![Step::Error(ErrorReply {
        status: 502,
        body: Some(json!(page)),
        content_type: Some("text/html".into()),
        ..ErrorReply::default()
    })]);
    let error = complete(&client(&server), request()).await.unwrap_err();
    assert_eq!(
        error,
        LlmError::ServiceUnavailable {
            status: 502,
            message: "HTML error page: 502 Bad Gateway".into()
        }
    );
    assert_eq!(
        error.to_string(),
        "provider unavailable (HTTP 502): HTML error page: 502 Bad Gateway"
    );
}

#[tokio::test]
async fn garbled_sse_is_malformed() {
    let server = ScriptedLlmServer::start(vec![Step::Garbled { delay_ms: 0 }]);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let error = complete(
        &client(&server),
        LlmRequest {
            on_delta: Some(tx),
            ..request()
        },
    )
    .await
    .unwrap_err();
    assert!(matches!(error, LlmError::MalformedResponse(_)), "{error:?}");
}

#[tokio::test]
async fn garbled_and_truncated_json_are_malformed_and_retried() {
    let server = ScriptedLlmServer::start(vec![
        Step::Garbled { delay_ms: 0 },
        Step::Truncated(Reply::text("a reply that is cut in half somewhere")),
        Step::text("third time lucky"),
    ]);
    let error = complete(&client(&server), request()).await.unwrap_err();
    assert!(matches!(error, LlmError::MalformedResponse(_)), "{error:?}");
    let error = complete(&client(&server), request()).await.unwrap_err();
    assert!(matches!(error, LlmError::MalformedResponse(_)), "{error:?}");
    assert!(error.is_retryable());
    let response = complete(&client(&server), request()).await.unwrap();
    assert_eq!(response.message.text(), "third time lucky");
}

#[tokio::test]
async fn truncated_stream_is_malformed() {
    let server = ScriptedLlmServer::start(vec![Step::Truncated(Reply::text(
        "a streamed reply that stops halfway through",
    ))]);
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let error = complete(
        &client(&server),
        LlmRequest {
            on_delta: Some(tx),
            ..request()
        },
    )
    .await
    .unwrap_err();
    assert!(matches!(error, LlmError::MalformedResponse(_)), "{error:?}");
}

/// A client that would retry 5 times with waits of a minute, and a sink for its retry notices.
fn patient_client(base_url: &str) -> OpenAiChat {
    let mut config = config(base_url);
    config.num_retries = 5;
    config.retry_min_wait = 60.0;
    config.retry_max_wait = 60.0;
    OpenAiChat::new(config).unwrap()
}

/// Completes with a retry sink; the error and the retries announced. The deadline only guards
/// against a hang: a retried call would wait a minute per retry.
async fn fail_with_notices(llm: &OpenAiChat) -> (LlmError, Vec<tandem_llm::RetryNotice>) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let call = llm.completion(
        LlmRequest {
            on_retry: Some(tx),
            ..request()
        },
        CancellationToken::new(),
    );
    let error = tokio::time::timeout(Duration::from_secs(50), call)
        .await
        .expect("a permanent error was retried")
        .unwrap_err();
    let mut notices = Vec::new();
    while let Ok(n) = rx.try_recv() {
        notices.push(n);
    }
    (error, notices)
}

#[tokio::test]
async fn refused_loopback_port_fails_at_once_naming_base_url() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let llm = patient_client(&format!("http://127.0.0.1:{port}/v1"));
    let (error, notices) = fail_with_notices(&llm).await;
    assert!(matches!(&error, LlmError::Unreachable { .. }), "{error:?}");
    assert!(!error.is_retryable());
    assert_eq!(error.code(), "LLMConnectionError");
    let text = error.to_string();
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
    assert!(text.contains("connection refused"), "{text}");
    assert!(text.contains("check base_url"), "{text}");
    assert!(notices.is_empty(), "{notices:?}");
}

#[tokio::test]
async fn host_that_does_not_resolve_fails_at_once() {
    let llm = patient_client("http://tandem-llm-host.invalid/v1");
    let (error, notices) = fail_with_notices(&llm).await;
    let LlmError::Unreachable { url, reason } = &error else {
        panic!("{error:?}")
    };
    assert!(url.contains("tandem-llm-host.invalid"), "{url}");
    assert!(reason.contains("does not resolve"), "{reason}");
    assert!(notices.is_empty(), "{notices:?}");
}

#[tokio::test]
async fn https_to_a_plain_http_server_fails_at_once() {
    let server = ScriptedLlmServer::start(vec![Step::text("never")]);
    let https = server.base_url().replacen("http://", "https://", 1);
    let (error, notices) = fail_with_notices(&patient_client(&https)).await;
    let LlmError::Unreachable { reason, .. } = &error else {
        panic!("{error:?}")
    };
    assert!(reason.contains("does not speak TLS"), "{reason}");
    assert!(notices.is_empty(), "{notices:?}");
    assert_eq!(server.request_count(), 0);
}

/// A loopback HTTPS server whose certificate (self-signed, made with Debian's openssl) no
/// client trusts; answers how many TLS handshakes it saw.
async fn untrusted_tls_server(
    dir: &std::path::Path,
) -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use tokio_rustls::rustls::pki_types::pem::PemObject;
    use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    let made = std::process::Command::new("openssl")
        .args([
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
        ])
        .args(["-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1"])
        .arg("-keyout")
        .arg(&key)
        .arg("-out")
        .arg(&cert)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(made.success(), "openssl could not make a certificate");
    let certs = CertificateDer::pem_file_iter(&cert)
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    let key = PrivateKeyDer::from_pem_file(&key).unwrap();
    let config = tokio_rustls::rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let handshakes = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = std::sync::Arc::clone(&handshakes);
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let acceptor = acceptor.clone();
            // The client refuses the certificate: the handshake fails on its side.
            tokio::spawn(async move {
                let _ = acceptor.accept(stream).await;
            });
        }
    });
    (format!("https://127.0.0.1:{port}/v1"), handshakes)
}

#[tokio::test]
async fn an_untrusted_tls_certificate_fails_at_once_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (url, handshakes) = untrusted_tls_server(dir.path()).await;
    let (error, notices) = fail_with_notices(&patient_client(&url)).await;
    let LlmError::Unreachable { reason, .. } = &error else {
        panic!("{error:?}")
    };
    assert!(
        reason.contains("certificate") && reason.contains("not trusted"),
        "{reason}"
    );
    assert!(notices.is_empty(), "retried: {notices:?}");
    assert_eq!(
        handshakes.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "a refused certificate is not tried again"
    );
}

#[tokio::test]
async fn rejected_requests_fail_at_once_naming_the_fix() {
    for (status, fix) in [
        (401, "check the API key"),
        (403, "check the API key"),
        (404, "check base_url and the model name"),
        (400, "check the model name"),
    ] {
        let server = ScriptedLlmServer::start(vec![
            Step::error(status, "refused by the provider"),
            Step::text("never"),
        ]);
        let (error, notices) = fail_with_notices(&patient_client(&server.base_url())).await;
        assert!(!error.is_retryable(), "{status}: {error:?}");
        let text = error.to_string();
        assert!(text.contains(fix), "{status}: {text}");
        assert!(text.contains("refused by the provider"), "{status}: {text}");
        assert!(notices.is_empty(), "{status}: {notices:?}");
        assert_eq!(server.request_count(), 1, "{status}");
    }
}

#[tokio::test]
async fn transient_error_is_retried_and_announced() {
    let server = ScriptedLlmServer::start(vec![Step::error(503, "busy"), Step::text("ok")]);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let response = retrying_client(&server, 5)
        .completion(
            LlmRequest {
                on_retry: Some(tx),
                ..request()
            },
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(response.message.text(), "ok");
    assert_eq!(server.request_count(), 2);
    let notice = rx.try_recv().unwrap();
    assert_eq!((notice.retry, notice.max_retries), (1, 5));
    assert!(matches!(
        notice.error,
        LlmError::ServiceUnavailable { status: 503, .. }
    ));
    assert!(rx.try_recv().is_err(), "one retry, one notice");
}

#[tokio::test]
async fn slow_server_times_out() {
    let server = ScriptedLlmServer::start(vec![Step::Reply(Reply {
        delay_ms: 3_000,
        ..Reply::text("late")
    })]);
    let mut config = config(&server.base_url());
    config.timeout = Some(0.2);
    let llm = OpenAiChat::new(config).unwrap();
    let started = Instant::now();
    let error = complete(&llm, request()).await.unwrap_err();
    assert_eq!(error, LlmError::Timeout(Duration::from_millis(200)));
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn cancellation_mid_request_returns_at_once() {
    let server = ScriptedLlmServer::start(vec![Step::Reply(Reply {
        delay_ms: 10_000,
        ..Reply::text("too late")
    })]);
    let llm = retrying_client(&server, 5);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let error = llm.completion(request(), cancel).await.unwrap_err();
    assert_eq!(error, LlmError::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.request_count(), 1);
}

#[tokio::test]
async fn cancellation_mid_stream_and_during_backoff() {
    let server = ScriptedLlmServer::start(vec![
        Step::Reply(Reply {
            chunk_delay_ms: 500,
            ..Reply::text("one two three four five six")
        }),
        Step::rate_limited("30"),
    ]);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let llm = client(&server);
    let call = llm.completion(
        LlmRequest {
            on_delta: Some(tx),
            ..request()
        },
        cancel,
    );
    let watcher = async move {
        // Cancel once the first piece of text has arrived.
        while let Some(delta) = rx.recv().await {
            if delta.content.is_some() {
                trigger.cancel();
            }
        }
    };
    let started = Instant::now();
    let (result, ()) = tokio::join!(call, watcher);
    assert_eq!(result.unwrap_err(), LlmError::Cancelled);
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );

    let mut config = config(&server.base_url());
    config.num_retries = 3;
    config.retry_max_wait = 60.0;
    let llm = OpenAiChat::new(config).unwrap();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    assert_eq!(
        llm.completion(request(), cancel).await.unwrap_err(),
        LlmError::Cancelled
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn exact_request_body_and_headers() {
    let server = ScriptedLlmServer::start(vec![Step::text("ok")]);
    let mut config = config(&server.base_url());
    config.model = "openai/fake".into();
    config.temperature = Some(0.5);
    config.top_p = Some(0.9);
    config.max_output_tokens = Some(1024);
    config.seed = Some(7);
    config.reasoning_effort = Some("high".into());
    config.extra_headers = Some(BTreeMap::from([(
        "X-Tenant".to_owned(),
        "tandem".to_owned(),
    )]));
    let llm = OpenAiChat::new(config).unwrap();

    let mut assistant = Message::new(Role::Assistant, Vec::new());
    assistant.tool_calls = Some(vec![MessageToolCall {
        id: "call_1".into(),
        responses_item_id: None,
        name: "terminal".into(),
        arguments: r#"{"command": "echo hello"}"#.into(),
        origin: "completion".into(),
    }]);
    let request = LlmRequest {
        messages: vec![
            Message::system("You are OpenHands agent."),
            Message::user("Please echo hello"),
            assistant,
            Message::tool(
                "call_1",
                "terminal",
                vec![Content::text("hello\n[Command finished with exit code 0]")],
            ),
        ],
        tools: vec![llm::terminal_tool()],
        prompt_cache_key: Some("f3f1b9f3-463b-4c9e-8fd1-43761f3455e9".into()),
        on_delta: None,
        on_retry: None,
    };
    complete(&llm, request).await.unwrap();

    assert_eq!(
        server.last_request().unwrap(),
        json!({
            "model": "fake",
            "messages": [
                {"role": "system", "content": [{"type": "text", "text": "You are OpenHands agent."}]},
                {"role": "user", "content": [{"type": "text", "text": "Please echo hello"}]},
                {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "terminal", "arguments": "{\"command\": \"echo hello\"}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "name": "terminal",
                    "content": [{"type": "text", "text": "hello\n[Command finished with exit code 0]"}]},
            ],
            "tools": [llm::terminal_tool()],
            "prompt_cache_key": "f3f1b9f3-463b-4c9e-8fd1-43761f3455e9",
            "temperature": 0.5,
            "top_p": 0.9,
            "max_completion_tokens": 1024,
            "seed": 7,
            "reasoning_effort": "high",
        })
    );
    assert_eq!(server.violations(), Vec::<String>::new());
    let captured = server.captured().pop().unwrap();
    assert_eq!(captured.path, "/v1/chat/completions");
    assert_eq!(captured.headers["authorization"], format!("Bearer {KEY}"));
    assert_eq!(captured.headers["x-tenant"], "tandem");
    assert_eq!(captured.headers["content-type"], "application/json");

    let debug = format!("{llm:?}");
    assert!(!debug.contains(KEY), "{debug}");
    assert!(debug.contains("**********"), "{debug}");
}

#[tokio::test]
async fn no_key_means_no_authorization_header() {
    let server = ScriptedLlmServer::start(vec![Step::text("ok")]);
    let mut config = config(&server.base_url());
    config.api_key = None;
    complete(&OpenAiChat::new(config).unwrap(), request())
        .await
        .unwrap();
    assert!(!server.captured()[0].headers.contains_key("authorization"));
}

#[tokio::test]
async fn reasoning_models_get_upstreams_default_effort() {
    // Upstream sends its default effort ("high") to every model that takes one, on Chat
    // Completions too; a configured effort wins; other models get none.
    let cases = [
        ("openai/gpt-5", None, Some("high")),
        ("openai/o3", None, Some("high")),
        ("openai/o3", Some("low"), Some("low")),
        ("openai/gpt-5-mini", Some(""), None),
        ("openai/gpt-4o", None, None),
    ];
    for (model, configured, sent) in cases {
        let server = ScriptedLlmServer::start(vec![Step::text("ok")]);
        let mut config = config(&server.base_url());
        config.model = model.into();
        config.reasoning_effort = configured.map(str::to_owned);
        complete(&OpenAiChat::new(config).unwrap(), request())
            .await
            .unwrap();
        let body = server.last_request().unwrap();
        assert_eq!(
            body.get("reasoning_effort").and_then(Value::as_str),
            sent,
            "{model} {configured:?}"
        );
    }
}
