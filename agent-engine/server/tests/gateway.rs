//! The OpenAI-compatible gateway in process: chat completions (one-shot, continued by the
//! returned header, streamed with a usage chunk; system messages appended to the system prompt,
//! images reaching the model), the Responses API (plain, continued by previous_response_id,
//! streamed), server-side LLM profiles over `/api/profiles` (persisted, keys encrypted and never
//! answered), the one-shot cleanup policy, and OpenAI-shaped errors for bad input.

use crate::harness;

use std::time::Duration;

use harness::{KEY, TestServer};
use serde_json::{Value, json};
use tandem_protocol::LlmConfig;
use tandem_testkit::{ScriptedLlmServer, Step};

const HEADER: &str = "x-openhands-serverconversation-id";
const IMAGE: &str = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

fn profile(llm: &ScriptedLlmServer) -> LlmConfig {
    let mut p = LlmConfig::new("openai/fake");
    p.base_url = Some(llm.base_url());
    p.api_key = Some("sk-profile-key".into());
    p.num_retries = 0;
    p
}

async fn start(llm: &ScriptedLlmServer) -> TestServer {
    let p = profile(llm);
    TestServer::start_with(|c| {
        c.profiles.insert("default".into(), p);
    })
    .await
}

struct Reply {
    status: u16,
    conversation: Option<String>,
    text: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|_| panic!("not JSON: {}", self.text))
    }

    /// The `data:` payloads of an SSE body.
    fn datas(&self) -> Vec<String> {
        self.text
            .lines()
            .filter_map(|l| l.strip_prefix("data: ").or_else(|| l.strip_prefix("data:")))
            .map(str::to_owned)
            .collect()
    }
}

async fn call(
    t: &TestServer,
    method: reqwest::Method,
    path: &str,
    body: Option<String>,
    headers: &[(&str, &str)],
) -> Reply {
    let mut r = t
        .http
        .request(method, t.url(path))
        .header("Authorization", format!("Bearer {KEY}"))
        .timeout(Duration::from_secs(60));
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    if let Some(b) = body {
        r = r.header("content-type", "application/json").body(b);
    }
    let resp = r.send().await.unwrap();
    let status = resp.status().as_u16();
    let conversation = resp
        .headers()
        .get(HEADER)
        .map(|v| v.to_str().unwrap().to_owned());
    Reply {
        status,
        conversation,
        text: resp.text().await.unwrap(),
    }
}

async fn post(t: &TestServer, path: &str, body: Value, headers: &[(&str, &str)]) -> Reply {
    call(
        t,
        reqwest::Method::POST,
        path,
        Some(body.to_string()),
        headers,
    )
    .await
}

/// The LLM requests that ran the agent (with tools), as text.
fn agent_requests(llm: &ScriptedLlmServer) -> Vec<String> {
    llm.requests()
        .into_iter()
        .filter(|r| r.get("tools").is_some_and(|t| !t.is_null()))
        .map(|r| r.to_string())
        .collect()
}

fn assert_openai_error(r: &Reply, status: u16, code: &str) -> Value {
    assert_eq!(r.status, status, "{}", r.text);
    let v = r.json();
    let e = &v["error"];
    assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
    assert!(e["type"].is_string(), "{v}");
    assert_eq!(e["code"], code, "{v}");
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chat_one_shot_then_continued_by_its_header() {
    let llm = harness::llm(vec![
        Step::tool_call("finish", json!({"message": "The answer is 42."})),
        Step::text("continued reply"),
    ]);
    let t = start(&llm).await;
    let models = call(&t, reqwest::Method::GET, "/v1/models", None, &[]).await;
    let ids: Vec<String> = models.json()["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["openhands_default"]);

    let body = json!({"model": "openhands_default", "messages": [
        {"role": "system", "content": "Answer like a pirate."},
        {"role": "user", "content": [{"type": "text", "text": "What is in this picture?"},
                                      {"type": "image_url", "image_url": {"url": IMAGE}}]}]});
    let r = post(&t, "/v1/chat/completions", body, &[]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let v = r.json();
    assert_eq!(v["object"], "chat.completion");
    assert_eq!(v["choices"][0]["message"]["content"], "The answer is 42.");
    assert_eq!(v["choices"][0]["finish_reason"], "stop");
    let u = &v["usage"];
    assert!(u["prompt_tokens"].as_u64().unwrap() > 0, "{u}");
    assert_eq!(
        u["total_tokens"].as_u64().unwrap(),
        u["prompt_tokens"].as_u64().unwrap() + u["completion_tokens"].as_u64().unwrap()
    );
    let id = r
        .conversation
        .expect("a one-shot answer names its conversation");

    let first = agent_requests(&llm).remove(0);
    let sent: Value = serde_json::from_str(&first).unwrap();
    let system = sent["messages"][0].to_string();
    assert!(
        system.contains("Answer like a pirate."),
        "the system message is appended"
    );
    assert!(
        system.len() > "Answer like a pirate.".len() + 500,
        "Tandem's own system prompt stays: {system}"
    );
    let image_part = sent["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|p| p["type"] == "image_url")
        .expect("the image reaches the model as an image part");
    assert_eq!(image_part["image_url"]["url"], IMAGE);

    // The header continues the same conversation, with its history.
    let body = json!({"model": "openhands_default", "messages": [{"role": "user", "content": "and then?"}]});
    let r = post(&t, "/v1/chat/completions", body, &[(HEADER, &id)]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.json()["choices"][0]["message"]["content"],
        "continued reply"
    );
    assert_eq!(r.conversation.as_deref(), Some(id.as_str()));
    let second = agent_requests(&llm).pop().unwrap();
    assert!(second.contains("What is in this picture?") && second.contains("and then?"));
    let (_, n) = t.get("/api/conversations/count").await;
    assert_eq!(n, 1, "one conversation, kept for continuation");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn chat_streams_with_a_final_usage_chunk() {
    let llm = harness::llm(vec![Step::text("streamed reply"), Step::text("again")]);
    let t = start(&llm).await;
    let body = json!({"model": "openhands_default", "stream": true,
        "stream_options": {"include_usage": true},
        "messages": [{"role": "user", "content": "stream it"}]});
    let r = post(&t, "/v1/chat/completions", body, &[]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let id = r
        .conversation
        .clone()
        .expect("a streamed answer names its conversation");
    let datas = r.datas();
    assert_eq!(datas.last().unwrap(), "[DONE]");
    let chunks: Vec<Value> = datas[..datas.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let text: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(text, "streamed reply");
    assert!(
        chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "stop")
    );
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"], json!([]));
    assert!(
        last["usage"]["prompt_tokens"].as_u64().unwrap() > 0,
        "{last}"
    );
    assert!(last["usage"]["completion_tokens"].as_u64().unwrap() > 0);

    // Without include_usage no usage chunk; the header still continues.
    let body = json!({"model": "openhands_default", "stream": true,
        "messages": [{"role": "user", "content": "more"}]});
    let r = post(&t, "/v1/chat/completions", body, &[(HEADER, &id)]).await;
    assert_eq!(r.conversation.as_deref(), Some(id.as_str()));
    assert!(!r.text.contains("\"usage\""), "{}", r.text);
    assert!(r.text.contains("again"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn responses_plain_continued_and_streamed() {
    let llm = harness::llm(vec![
        Step::text("first answer"),
        Step::tool_call("finish", json!({"message": "second answer"})),
        Step::text("streamed answer"),
    ]);
    let t = start(&llm).await;
    let r = post(
        &t,
        "/v1/responses",
        json!({"model": "openhands_default", "input": "hello", "instructions": "Be terse.",
               "metadata": {"k": "v"}}),
        &[],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let v = r.json();
    assert_eq!(v["object"], "response");
    assert_eq!(v["status"], "completed");
    assert_eq!(v["output"][0]["type"], "message");
    assert_eq!(v["output"][0]["content"][0]["type"], "output_text");
    assert_eq!(v["output"][0]["content"][0]["text"], "first answer");
    assert_eq!(v["metadata"]["k"], "v");
    assert!(v["usage"]["input_tokens"].as_u64().unwrap() > 0);
    let first_id = v["id"].as_str().unwrap().to_owned();
    assert!(first_id.starts_with("resp_"));
    let conv = r.conversation.unwrap();
    assert!(agent_requests(&llm)[0].contains("Be terse."));

    let r = post(
        &t,
        "/v1/responses",
        json!({"model": "openhands_default", "previous_response_id": first_id,
               "input": [{"role": "user", "content": [{"type": "input_text", "text": "go on"}]}]}),
        &[],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let v = r.json();
    assert_eq!(v["output"][0]["content"][0]["text"], "second answer");
    assert_eq!(v["previous_response_id"], first_id.as_str());
    assert_eq!(r.conversation.as_deref(), Some(conv.as_str()));
    let second = agent_requests(&llm).pop().unwrap();
    assert!(second.contains("hello") && second.contains("go on"));

    let r = post(
        &t,
        "/v1/responses",
        json!({"model": "openhands_default", "input": "stream please", "stream": true}),
        &[],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let events: Vec<Value> = r
        .datas()
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    let seq: Vec<u64> = events
        .iter()
        .map(|e| e["sequence_number"].as_u64().unwrap())
        .collect();
    assert_eq!(seq, (0..9).collect::<Vec<u64>>());
    assert!(r.text.contains("event: response.completed"));
    assert_eq!(events[4]["delta"], "streamed answer");
    assert_eq!(events[8]["response"]["status"], "completed");
    assert_eq!(
        events[8]["response"]["output"][0]["content"][0]["text"],
        "streamed answer"
    );
    assert!(r.conversation.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn profiles_are_saved_masked_served_and_kept_across_restarts() {
    let llm = harness::llm(vec![
        Step::text("from the work profile"),
        Step::text("after restart"),
    ]);
    let t = TestServer::start().await;
    // Upstream's body: {llm: <LLM model_dump>, include_secrets}.
    let body = json!({"llm": {
        "model": "openai/fake", "api_key": "sk-work-secret", "base_url": llm.base_url(),
        "num_retries": 0, "retry_multiplier": 8.0, "retry_min_wait": 8, "retry_max_wait": 64,
        "timeout": 300, "temperature": null, "usage_id": "default", "openrouter_app_name": "OpenHands",
        "auth_type": "api_key", "provider_connection_id": null, "aws_secret_access_key": "aws-secret"},
        "include_secrets": true});
    let (s, v) = t.post("/api/profiles/work", body).await;
    assert_eq!((s, &v["name"]), (201, &json!("work")), "{v}");
    let (s, list) = t.get("/api/profiles").await;
    assert_eq!(s, 200);
    assert_eq!(list["profiles"][0]["name"], "work");
    assert_eq!(list["profiles"][0]["model"], "openai/fake");
    assert_eq!(list["profiles"][0]["api_key_set"], true);
    assert_eq!(list["active_profile"], Value::Null);
    let (s, detail) = t.get("/api/profiles/work").await;
    assert_eq!(s, 200);
    assert_eq!(detail["config"]["api_key"], Value::Null);
    assert_eq!(detail["config"]["aws_secret_access_key"], "**********");
    assert_eq!(detail["api_key_set"], true);
    for text in [list.to_string(), detail.to_string()] {
        assert!(!text.contains("sk-work-secret") && !text.contains("aws-secret"));
    }
    let on_disk = std::fs::read_to_string(t.home.path().join("profiles/work.json")).unwrap();
    assert!(!on_disk.contains("sk-work-secret") && !on_disk.contains("aws-secret"));
    let (s, a) = t.post("/api/profiles/work/activate", json!({})).await;
    assert_eq!((s, &a["name"]), (200, &json!("work")), "{a}");

    let models = call(&t, reqwest::Method::GET, "/v1/models", None, &[]).await;
    assert!(
        models.text.contains("\"openhands_work\""),
        "{}",
        models.text
    );
    let chat = json!({"model": "openhands_work", "messages": [{"role": "user", "content": "hi"}]});
    let r = post(&t, "/v1/chat/completions", chat.clone(), &[]).await;
    assert_eq!(
        r.json()["choices"][0]["message"]["content"],
        "from the work profile"
    );
    let auth = llm.captured().last().unwrap().headers["authorization"].clone();
    assert_eq!(
        auth, "Bearer sk-work-secret",
        "the chat runs with the profile's key"
    );
    // The conversation the chat made keeps no profile secret in the clear on disk.
    let conversation = r.conversation.clone().unwrap();
    t.wait_status(&conversation, &["finished"]).await;
    assert_no_file_holds(t.home.path(), &["sk-work-secret", "aws-secret"]);

    // A restart keeps the profile, its key and the active one.
    let home = t.stop().await;
    let t = TestServer::start_in(home, |_| {}).await;
    let (_, list) = t.get("/api/profiles").await;
    assert_eq!(list["active_profile"], "work");
    let r = post(&t, "/v1/chat/completions", chat.clone(), &[]).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        r.json()["choices"][0]["message"]["content"],
        "after restart"
    );
    let auth = llm.captured().last().unwrap().headers["authorization"].clone();
    assert_eq!(auth, "Bearer sk-work-secret");

    // Bad names and unknown profiles; deleting is idempotent.
    let (s, v) = t
        .post("/api/profiles/..%2Fx", json!({"llm": {"model": "m"}}))
        .await;
    assert_eq!(s, 422, "{v}");
    let (s, _) = t.post("/api/profiles/nope/activate", json!({})).await;
    assert_eq!(s, 404);
    let (s, _) = t.get("/api/profiles/nope").await;
    assert_eq!(s, 404);
    let (s, v) = t.post("/api/profiles/x", json!({"llm": {}})).await;
    assert_eq!(s, 422, "{v}");
    for _ in 0..2 {
        let (s, v) = t
            .req(reqwest::Method::DELETE, "/api/profiles/work", None)
            .await;
        assert_eq!((s, &v["name"]), (200, &json!("work")));
    }
    let (_, list) = t.get("/api/profiles").await;
    assert_eq!(list, json!({"profiles": [], "active_profile": null}));
    let r = post(&t, "/v1/chat/completions", chat, &[]).await;
    assert_openai_error(&r, 404, "model_not_found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_input_gets_openai_shaped_errors_and_the_server_keeps_serving() {
    let llm = harness::llm(vec![Step::text("still serving")]);
    let t = start(&llm).await;
    let chat = "/v1/chat/completions";
    let r = call(
        &t,
        reqwest::Method::POST,
        chat,
        Some("{not json".into()),
        &[],
    )
    .await;
    assert_openai_error(&r, 400, "invalid_json");
    let r = post(&t, chat, json!({"model": "openhands_default"}), &[]).await;
    let v = assert_openai_error(&r, 422, "invalid_request_body");
    assert_eq!(v["error"]["param"], "messages");
    let r = post(
        &t,
        chat,
        json!({"model": "openhands_default", "messages": "hi"}),
        &[],
    )
    .await;
    assert_openai_error(&r, 422, "invalid_request_body");
    let r = post(
        &t,
        chat,
        json!({"model": "openhands_nope", "messages": [{"role": "user", "content": "x"}]}),
        &[],
    )
    .await;
    let v = assert_openai_error(&r, 404, "model_not_found");
    assert_eq!(v["error"]["param"], "model");
    let r = post(
        &t,
        chat,
        json!({"model": "openhands_default", "messages": [{"role": "system", "content": "x"}]}),
        &[],
    )
    .await;
    let v = assert_openai_error(&r, 400, "invalid_request");
    assert_eq!(v["error"]["param"], "messages");
    let r = post(&t, chat, json!({"model": "openhands_default", "messages": [{"role": "user", "content": [{"type": "audio"}]}]}), &[]).await;
    assert_openai_error(&r, 400, "invalid_request");
    let ok = json!({"model": "openhands_default", "messages": [{"role": "user", "content": "x"}]});
    let r = post(&t, chat, ok.clone(), &[(HEADER, "not-a-uuid")]).await;
    assert_openai_error(&r, 400, "invalid_request");
    let r = post(
        &t,
        "/v1/responses",
        json!({"model": "openhands_default", "input": "x",
        "previous_response_id": "resp_0123456789abcdef0123456789abcdef0123456789abcdef"}),
        &[],
    )
    .await;
    let v = assert_openai_error(&r, 404, "previous_response_not_found");
    assert_eq!(v["error"]["param"], "previous_response_id");
    let r = post(
        &t,
        "/v1/responses",
        json!({"model": "openhands_default", "input": "x", "previous_response_id": "bogus"}),
        &[],
    )
    .await;
    assert_openai_error(&r, 404, "previous_response_not_found");
    let r = post(
        &t,
        "/v1/responses",
        json!({"model": "openhands_default"}),
        &[],
    )
    .await;
    let v = assert_openai_error(&r, 422, "invalid_request_body");
    assert_eq!(v["error"]["param"], "input");
    let r = post(&t, "/v1/responses", json!({"model": "openhands_default", "input": [{"type": "function_call_output", "role": "user", "content": "x"}]}), &[]).await;
    assert_openai_error(&r, 400, "invalid_request");
    let r = call(&t, reqwest::Method::GET, "/v1/nope", None, &[]).await;
    assert_openai_error(&r, 404, "unknown_route");
    let r = call(&t, reqwest::Method::GET, chat, None, &[]).await;
    assert_openai_error(&r, 405, "method_not_allowed");
    let wrong = t
        .http
        .get(t.url("/v1/models"))
        .header("Authorization", "Bearer wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    let v: Value = wrong.json().await.unwrap();
    assert_eq!(v["error"]["type"], "authentication_error");
    let missing = t.http.post(t.url("/v1/responses")).send().await.unwrap();
    assert_eq!(missing.status(), 401);

    // Nothing was left behind, and the server still answers.
    let (_, n) = t.get("/api/conversations/count").await;
    assert_eq!(n, 0);
    let r = post(&t, chat, ok, &[]).await;
    assert_eq!(
        r.json()["choices"][0]["message"]["content"],
        "still serving"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_failed_run_is_an_openai_error_naming_its_conversation() {
    let llm = harness::llm(vec![
        Step::error(400, "the provider refused"),
        Step::error(400, "the provider refused"),
    ]);
    let t = start(&llm).await;
    let r = post(
        &t,
        "/v1/chat/completions",
        json!({"model": "openhands_default", "messages": [{"role": "user", "content": "x"}]}),
        &[],
    )
    .await;
    let v = assert_openai_error(&r, 502, "agent_error");
    assert_eq!(v["error"]["type"], "server_error");
    assert!(r.conversation.is_some());
    let r = post(
        &t,
        "/v1/chat/completions",
        json!({"model": "openhands_default", "stream": true, "messages": [{"role": "user", "content": "x"}]}),
        &[],
    )
    .await;
    assert_eq!(r.status, 200);
    let datas = r.datas();
    let err: Value = serde_json::from_str(&datas[datas.len() - 2]).unwrap();
    assert!(err["error"]["message"].is_string(), "{err}");
    assert_eq!(datas.last().unwrap(), "[DONE]");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_shot_conversations_are_deleted_by_the_retention_policy() {
    let llm = ScriptedLlmServer::with_responder(std::sync::Arc::new(|body: &Value, _| {
        if body.get("tools").is_none_or(Value::is_null) {
            Step::text("title")
        } else {
            Step::text("ok")
        }
    }));
    let p = profile(&llm);
    let t = TestServer::start_with(|c| {
        c.profiles.insert("default".into(), p);
        c.gateway_retention = Duration::from_millis(1500);
        c.gateway_max_retained = 2;
    })
    .await;
    let own = t.create(&llm, json!({})).await;
    let ask = json!({"model": "openhands_default", "messages": [{"role": "user", "content": "x"}]});
    let mut made = Vec::new();
    for _ in 0..3 {
        let r = post(&t, "/v1/chat/completions", ask.clone(), &[]).await;
        assert_eq!(r.status, 200, "{}", r.text);
        made.push(r.conversation.unwrap());
    }
    // A conversation made through /api and continued through the gateway is not the gateway's.
    let r = post(&t, "/v1/chat/completions", ask.clone(), &[(HEADER, &own)]).await;
    assert_eq!(r.status, 200, "{}", r.text);

    // Beyond two, the least recently used goes at once.
    gone(&t, &made[0]).await;
    // Continuing restarts a conversation's clock; unused ones go after the retention.
    let r = post(
        &t,
        "/v1/chat/completions",
        ask.clone(),
        &[(HEADER, &made[2])],
    )
    .await;
    assert_eq!(r.status, 200);
    gone(&t, &made[1]).await;
    gone(&t, &made[2]).await;
    let (s, _) = t.get(&format!("/api/conversations/{own}")).await;
    assert_eq!(s, 200, "the /api conversation stays");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_run_whose_client_went_away_is_still_stopped_at_the_gateway_timeout() {
    let llm = harness::llm(vec![
        Step::tool_call(
            "terminal",
            json!({"command": "sleep 120", "security_risk": "LOW"}),
        ),
        Step::text("never needed"),
    ]);
    let p = profile(&llm);
    let t = TestServer::start_with(|c| {
        c.profiles.insert("default".into(), p);
        c.gateway_timeout = Duration::from_secs(2);
    })
    .await;
    let id = uuid::Uuid::new_v4().hyphenated().to_string();
    let ask = json!({"model": "openhands_default", "messages": [{"role": "user", "content": "x"}]});
    // The client gives up while the agent's command runs.
    let gave_up = t
        .http
        .post(t.url("/v1/chat/completions"))
        .header("Authorization", format!("Bearer {KEY}"))
        .header(HEADER, &id)
        .json(&ask)
        .timeout(Duration::from_millis(300))
        .send()
        .await;
    assert!(gave_up.is_err(), "the request should not have answered yet");
    t.wait_status(&id, &["running"]).await;
    // The gateway's timeout still interrupts the run (paused, the agent's command cut short).
    t.wait_status(&id, &["paused"]).await;
}

/// Waits (20 s at most) until conversation `id` is deleted.
async fn gone(t: &TestServer, id: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (s, _) = t.get(&format!("/api/conversations/{id}")).await;
        if s == 404 {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{id} was never deleted"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Asserts no file under `dir` contains any of `secrets`.
fn assert_no_file_holds(dir: &std::path::Path, secrets: &[&str]) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            assert_no_file_holds(&path, secrets);
        } else if let Ok(text) = std::fs::read(&path) {
            let text = String::from_utf8_lossy(&text);
            for s in secrets {
                assert!(!text.contains(s), "{} holds `{s}`", path.display());
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_profiles_key_goes_only_to_the_profiles_own_endpoint() {
    let own = harness::llm(vec![Step::text("from the profile's endpoint")]);
    let other = harness::llm(vec![Step::text("from another endpoint")]);
    let t = start(&own).await;
    let bearer = "Bearer sk-profile-key";
    for (llm, expect_key) in [(&other, false), (&own, true)] {
        let mut agent = TestServer::agent(llm);
        agent["llm"]
            .as_object_mut()
            .unwrap()
            .remove("api_key")
            .unwrap();
        let body = json!({"agent": agent, "workspace": {"kind": "LocalWorkspace",
            "working_dir": t.workspace.to_string_lossy()}});
        let (status, info) = t.post("/api/conversations", body).await;
        if status == 201 {
            let id = info["id"].as_str().unwrap();
            t.message(id, "hello", true).await;
            t.wait_status(id, &["finished", "error", "idle"]).await;
        }
        let keys: Vec<String> = llm
            .captured()
            .iter()
            .filter_map(|r| r.headers.get("authorization").cloned())
            .collect();
        if expect_key {
            assert_eq!(status, 201, "{info}");
            assert!(keys.iter().any(|k| k == bearer), "{keys:?}");
        } else {
            assert!(keys.iter().all(|k| k != bearer), "{keys:?}");
        }
    }
}

/// The LLM requests that asked for a title (no tools), as text.
fn title_requests(llm: &ScriptedLlmServer) -> Vec<String> {
    llm.requests()
        .into_iter()
        .filter(|r| r.get("tools").is_none_or(Value::is_null))
        .map(|r| r.to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gateway_conversations_are_titled_only_when_the_request_asks() {
    let llm = ScriptedLlmServer::with_responder(std::sync::Arc::new(|body: &Value, _| {
        if body.get("tools").is_none_or(Value::is_null) {
            Step::text("A generated title")
        } else {
            Step::text("ok")
        }
    }));
    let t = start(&llm).await;
    let ask = json!({"model": "openhands_default", "messages": [{"role": "user", "content": "x"}]});
    let plain = post(&t, "/v1/chat/completions", ask.clone(), &[]).await;
    assert_eq!(plain.status, 200, "{}", plain.text);
    let plain = plain.conversation.unwrap();
    let mut by_body = ask.clone();
    by_body["autotitle"] = json!(true);
    let titled = post(&t, "/v1/chat/completions", by_body, &[]).await;
    assert_eq!(titled.status, 200, "{}", titled.text);
    let titled = titled.conversation.unwrap();
    let by_header = post(
        &t,
        "/v1/responses",
        json!({"model": "openhands_default", "input": "x"}),
        &[("X-Tandem-Autotitle", "true")],
    )
    .await;
    assert_eq!(by_header.status, 200, "{}", by_header.text);
    let by_header = by_header.conversation.unwrap();
    // The asked-for titles arrive (the call runs beside the agent's turn).
    for id in [&titled, &by_header] {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            let (_, info) = t.get(&format!("/api/conversations/{id}")).await;
            if info["title"] == "A generated title" {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "no title: {info}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    // Only those two asked: the plain request cost no title call, and has no generated title.
    assert_eq!(title_requests(&llm).len(), 2, "{:?}", title_requests(&llm));
    let (_, info) = t.get(&format!("/api/conversations/{plain}")).await;
    assert_ne!(info["title"], "A generated title", "{info}");
    // A value that is not a boolean is refused, naming the field.
    let mut bad = ask.clone();
    bad["autotitle"] = json!("yes");
    let r = post(&t, "/v1/chat/completions", bad, &[]).await;
    let v = assert_openai_error(&r, 400, "invalid_request");
    assert_eq!(v["error"]["param"], "autotitle");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_profile_whose_host_does_not_resolve_answers_its_error_at_once() {
    let mut p = LlmConfig::new("openai/fake");
    p.base_url = Some("http://tandem-gateway-llm.invalid/v1".into());
    p.api_key = Some("sk-profile-key".into());
    // The agent's usual schedule: 5 retries 8–64 s apart, minutes in all.
    p.num_retries = 5;
    p.retry_min_wait = 8.0;
    p.retry_max_wait = 64.0;
    p.retry_multiplier = 8.0;
    let t = TestServer::start_with(|c| {
        c.profiles.insert("default".into(), p);
    })
    .await;
    let ask = json!({"model": "openhands_default", "messages": [{"role": "user", "content": "x"}]});
    // `call` gives up after 60 s: a retried request would wait 8 s + 16 s + ... first.
    let r = post(&t, "/v1/chat/completions", ask.clone(), &[]).await;
    let v = assert_openai_error(&r, 502, "agent_error");
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.contains("tandem-gateway-llm.invalid"), "{message}");
    assert!(message.contains("does not resolve"), "{message}");
    assert!(message.contains("check base_url"), "{message}");
    // No retry was scheduled.
    let id = r.conversation.unwrap();
    let events = t.events(&id).await;
    assert!(
        !events.iter().any(|e| e["key"] == "llm_retry"),
        "{events:?}"
    );
    // Streamed, the same error is the last chunk before [DONE].
    let mut streamed = ask;
    streamed["stream"] = json!(true);
    let r = post(&t, "/v1/chat/completions", streamed, &[]).await;
    assert_eq!(r.status, 200);
    let datas = r.datas();
    let err: Value = serde_json::from_str(&datas[datas.len() - 2]).unwrap();
    let message = err["error"]["message"].as_str().unwrap();
    assert!(message.contains("does not resolve"), "{err}");
    assert_eq!(datas.last().unwrap(), "[DONE]");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_provider_rate_limit_past_its_retries_answers_429() {
    let llm = harness::llm(vec![Step::error(429, "slow down")]);
    let t = start(&llm).await;
    let r = post(
        &t,
        "/v1/chat/completions",
        json!({"model": "openhands_default", "messages": [{"role": "user", "content": "x"}]}),
        &[],
    )
    .await;
    let v = assert_openai_error(&r, 429, "rate_limit_exceeded");
    assert_eq!(v["error"]["type"], "rate_limit_error");
    assert_eq!(llm.request_count(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_streamed_request_sees_the_llm_retries_then_the_answer() {
    let llm = harness::llm(vec![
        Step::error(503, "overloaded right now"),
        Step::tool_call("finish", json!({"message": "made it"})),
    ]);
    let mut p = profile(&llm);
    p.num_retries = 3;
    p.retry_min_wait = 0.5;
    p.retry_max_wait = 0.5;
    let t = TestServer::start_with(|c| {
        c.profiles.insert("default".into(), p);
    })
    .await;
    let r = post(
        &t,
        "/v1/chat/completions",
        json!({"model": "openhands_default", "stream": true, "messages": [{"role": "user", "content": "x"}]}),
        &[],
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let comment = r
        .text
        .lines()
        .find(|l| l.starts_with(": LLM error"))
        .unwrap_or_else(|| panic!("no retry announced: {}", r.text));
    assert!(
        comment.contains("LLMServiceUnavailableError, retry 1/3 in 0.5 s"),
        "{comment}"
    );
    assert!(comment.contains("overloaded right now"), "{comment}");
    assert!(r.text.contains("made it"), "{}", r.text);
    assert_eq!(llm.request_count(), 2);
}
