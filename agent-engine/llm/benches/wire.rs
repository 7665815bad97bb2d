//! Wire benchmark of the LLM layer, per protocol (Chat Completions, Responses, Anthropic
//! Messages):
//!
//! 1. parse throughput of a long streamed reply (≥ 5 MB of SSE recorded from the scripted
//!    server), in MB/s, parsed in-process as a call would;
//! 2. LLM-layer overhead per call without network: building the request body of a typical
//!    agent turn (system prompt, 30 messages, tools) plus parsing a recorded JSON reply, in µs;
//! 3. for context, end-to-end time per call against the zero-latency scripted server on
//!    loopback, in µs.
//!
//! `cargo bench -p tandem-llm --bench wire`
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::json;
use tandem_llm::{AnthropicMessages, Llm, LlmRequest, OpenAiChat, OpenAiResponses, provider};
use tandem_protocol::{Content, LlmConfig, Message, MessageToolCall, Role};
use tandem_testkit::{Reply, ScriptedLlmServer, Step, ToolCallSpec};
use tokio_util::sync::CancellationToken;

const PROTOCOLS: [(&str, &str); 3] = [
    ("Chat", "openai/gpt-4o"),
    ("Responses", "openai/gpt-5-codex"),
    ("Anthropic", "anthropic/claude-sonnet-4-5"),
];

fn config(model: &str, server: &ScriptedLlmServer) -> LlmConfig {
    let mut config = LlmConfig::new(model);
    config.base_url = Some(if model.starts_with("anthropic/") {
        server.anthropic_base_url()
    } else {
        server.base_url()
    });
    config.api_key = Some("k".into());
    config.num_retries = 0;
    config
}

fn tools() -> Vec<serde_json::Value> {
    ["terminal", "file_editor", "task_tracker", "think", "finish"]
        .iter()
        .map(|name| json!({"type": "function", "function": {"name": name, "description": "A tool the agent uses. ".repeat(20),
            "parameters": {"type": "object", "properties": {"command": {"type": "string", "description": "what to run"},
            "path": {"type": "string"}}, "required": ["command"]}}}))
        .collect()
}

/// A typical agent turn: system prompt, then 10 rounds of user/assistant call/tool result.
fn agent_request() -> LlmRequest {
    let mut messages = vec![Message::system("You are OpenHands agent. ".repeat(200))];
    for i in 0..10 {
        messages.push(Message::user(format!(
            "step {i}: please continue with the task"
        )));
        let mut assistant = Message::new(Role::Assistant, vec![Content::text("Running it.")]);
        assistant.tool_calls = Some(vec![MessageToolCall {
            id: format!("call_{i}"),
            name: "terminal".into(),
            arguments: r#"{"command":"ls -la && cat README.md"}"#.into(),
            origin: "completion".into(),
            ..MessageToolCall::default()
        }]);
        messages.push(assistant);
        messages.push(Message::tool(
            format!("call_{i}"),
            "terminal",
            vec![Content::text("output line\n".repeat(40))],
        ));
    }
    LlmRequest {
        messages,
        tools: tools(),
        ..LlmRequest::default()
    }
}

fn small_reply() -> Step {
    Step::Reply(Reply {
        text: Some("I'll run the tests now.".into()),
        tool_calls: vec![ToolCallSpec::new(
            "terminal",
            json!({"command": "cargo test"}),
        )],
        ..Reply::default()
    })
}

/// POSTs `body` to the scripted server and returns the raw reply bytes.
async fn record(server: &ScriptedLlmServer, path: &str, body: &serde_json::Value) -> Vec<u8> {
    let url = format!("http://{}{path}", server.addr());
    let response = reqwest::Client::new()
        .post(url)
        .json(body)
        .send()
        .await
        .unwrap();
    assert!(response.status().is_success());
    response.bytes().await.unwrap().to_vec()
}

fn path_of(model: &str) -> &'static str {
    if model.starts_with("anthropic/") {
        "/v1/messages"
    } else if model.contains("codex") {
        "/v1/responses"
    } else {
        "/v1/chat/completions"
    }
}

fn body_for(model: &str, server: &ScriptedLlmServer, request: &LlmRequest) -> serde_json::Value {
    Builder::new(&config(model, server)).body(request)
}

fn time<T>(iterations: u32, mut f: impl FnMut() -> T) -> Duration {
    let started = Instant::now();
    for _ in 0..iterations {
        std::hint::black_box(f());
    }
    started.elapsed() / iterations
}

#[tokio::main]
async fn main() {
    // A long reply: about 600 kB of text and 120 kB of tool arguments, in ~12-byte pieces.
    let long_text = "The quick brown fox jumps over the lazy dog. ".repeat(14_000);
    let long_args = json!({"command": "echo ".to_owned() + &"x".repeat(120_000)});
    let long = Step::Reply(Reply {
        text: Some(long_text.clone()),
        reasoning: Some("Reasoning about it. ".repeat(2_000)),
        tool_calls: vec![ToolCallSpec::new("terminal", long_args)],
        ..Reply::default()
    });

    println!(
        "tandem-llm wire benchmark (release: {})",
        !cfg!(debug_assertions)
    );
    println!("\n1. stream parse throughput (recorded SSE, parsed in-process)");
    for (name, model) in PROTOCOLS {
        let server = ScriptedLlmServer::start(vec![long.clone()]);
        let mut body = body_for(
            model,
            &server,
            &LlmRequest {
                messages: vec![Message::user("go")],
                tools: tools(),
                ..LlmRequest::default()
            },
        );
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
        let sse = record(&server, path_of(model), &body).await;
        let config = config(model, &server);
        let response = provider::parse_reply(&config, "text/event-stream", &sse).unwrap();
        assert_eq!(
            response.message.content[0].as_text().unwrap().len(),
            long_text.len()
        );
        let iterations = 5;
        let per = time(iterations, || {
            provider::parse_reply(&config, "text/event-stream", &sse).unwrap()
        });
        let mb = sse.len() as f64 / 1_000_000.0;
        println!(
            "   {name:<10} {mb:>6.1} MB of SSE  {:>8.1} ms/parse  {:>7.1} MB/s",
            per.as_secs_f64() * 1e3,
            mb / per.as_secs_f64()
        );
    }

    println!(
        "\n2. LLM-layer overhead per call, no network (build body + serialise + parse recorded JSON reply)"
    );
    let request = agent_request();
    for (name, model) in PROTOCOLS {
        let server = ScriptedLlmServer::start(vec![small_reply()]);
        let body = body_for(model, &server, &request);
        let reply = record(&server, path_of(model), &body).await;
        let config = config(model, &server);
        let builder = Builder::new(&config);
        let per_build = time(2_000, || {
            serde_json::to_vec(&builder.body(&request)).unwrap()
        });
        let per_parse = time(20_000, || {
            provider::parse_reply(&config, "application/json", &reply).unwrap()
        });
        println!(
            "   {name:<10} request {:>6} B  build+serialise {:>7.1} µs  parse {:>6.1} µs  total {:>7.1} µs",
            serde_json::to_vec(&body).unwrap().len(),
            per_build.as_secs_f64() * 1e6,
            per_parse.as_secs_f64() * 1e6,
            (per_build + per_parse).as_secs_f64() * 1e6
        );
    }

    println!(
        "\n3. end-to-end per call on loopback with the zero-latency scripted server (context)"
    );
    for (name, model) in PROTOCOLS {
        let calls = 300;
        let server = ScriptedLlmServer::start(vec![small_reply(); calls + 20]);
        let llm = provider::client_for(config(model, &server)).unwrap();
        for _ in 0..20 {
            llm.completion(request.clone(), CancellationToken::new())
                .await
                .unwrap();
        }
        let started = Instant::now();
        for _ in 0..calls {
            llm.completion(request.clone(), CancellationToken::new())
                .await
                .unwrap();
        }
        let per = started.elapsed() / u32::try_from(calls).unwrap();
        println!(
            "   {name:<10} {:>7.1} µs/call (JSON, {calls} calls)",
            per.as_secs_f64() * 1e6
        );
        assert!(server.violations().is_empty(), "{:?}", server.violations());
    }
}

/// A client of each protocol, built once, for timing request bodies alone.
enum Builder {
    Chat(OpenAiChat),
    Responses(OpenAiResponses),
    Anthropic(AnthropicMessages),
}

impl Builder {
    fn new(config: &LlmConfig) -> Self {
        match provider::route(config).protocol {
            tandem_llm::Protocol::Chat => Self::Chat(OpenAiChat::new(config.clone()).unwrap()),
            tandem_llm::Protocol::Responses => {
                Self::Responses(OpenAiResponses::new(config.clone()).unwrap())
            }
            tandem_llm::Protocol::Anthropic => {
                Self::Anthropic(AnthropicMessages::new(config.clone()).unwrap())
            }
        }
    }

    fn body(&self, request: &LlmRequest) -> serde_json::Value {
        match self {
            Self::Chat(c) => c.request_body(request),
            Self::Responses(c) => c.request_body(request),
            Self::Anthropic(c) => c.request_body(request),
        }
    }
}
