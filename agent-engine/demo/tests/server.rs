//! The demo server over real loopback HTTP: the demo model's first answer as a JSON completion
//! and as a stream, the model list, and clear errors for a bad body or path.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{Value, json};
use tandem_demo::DemoServer;

fn first_request(stream: bool) -> Value {
    json!({
        "model": "tandem-demo",
        "stream": stream,
        "stream_options": {"include_usage": true},
        "messages": [
            {"role": "system", "content": "* Workspace: `/srv/work`"},
            {"role": "user", "content": "make notes"},
        ],
        "tools": [{"type": "function", "function": {"name": "task_tracker"}}],
    })
}

#[tokio::test]
async fn answers_the_first_step_of_the_tour_as_json() {
    let server = DemoServer::start().unwrap();
    let base_url = server.base_url();
    assert!(base_url.starts_with("http://127.0.0.1:"), "{base_url}");
    let response = reqwest::Client::new()
        .post(format!("{base_url}/chat/completions"))
        .json(&first_request(false))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["model"], "tandem-demo");
    let message = &body["choices"][0]["message"];
    assert_eq!(message["content"], "I'll start by planning the work.");
    assert_eq!(message["tool_calls"][0]["function"]["name"], "task_tracker");
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    assert!(body["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
}

#[tokio::test]
async fn streams_when_asked() {
    let server = DemoServer::start().unwrap();
    let response = reqwest::Client::new()
        .post(format!("{}/chat/completions", server.base_url()))
        .json(&first_request(true))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let text = response.text().await.unwrap();
    let data: Vec<&str> = text
        .split("\n\n")
        .filter_map(|event| event.strip_prefix("data: "))
        .collect();
    assert_eq!(data.last(), Some(&"[DONE]"));
    let chunks: Vec<Value> = data[..data.len() - 1]
        .iter()
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
    let content: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["content"].as_str())
        .collect();
    assert_eq!(content, "I'll start by planning the work.");
    assert!(
        chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls")
    );
    assert!(chunks.last().unwrap()["usage"]["completion_tokens"].as_u64() > Some(0));
}

#[tokio::test]
async fn lists_its_model_and_names_what_it_cannot_answer() {
    let server = DemoServer::start().unwrap();
    let client = reqwest::Client::new();
    let models: Value = client
        .get(format!("{}/models", server.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["data"][0]["id"], "tandem-demo");

    let response = client
        .post(format!("{}/chat/completions", server.base_url()))
        .body("not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not JSON"),
        "{body}"
    );

    let response = client
        .post(format!("{}/responses", server.base_url()))
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    let body: Value = response.json().await.unwrap();
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("POST /v1/responses"),
        "{body}"
    );
}

#[test]
fn stops_when_dropped() {
    let server = DemoServer::start().unwrap();
    let addr = server.addr();
    drop(server);
    // The listener closes with the server's thread; give it a moment to finish.
    let refused = (0..500).any(|_| {
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::net::TcpStream::connect(addr).is_err()
    });
    assert!(refused, "{addr} still accepts connections");
}

/// The demo site the tour browses: the shop, its sign-in form, and the account page that says
/// who signed in (by the cookie the form set); the tour's plan includes it when the agent has
/// a browser, at the address the client called.
#[tokio::test]
async fn serves_the_demo_site_and_the_tour_browses_it() {
    let server = DemoServer::start().unwrap();
    let site = server.site_url();
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let front = http.get(&site).send().await.unwrap();
    assert_eq!(front.status(), 200);
    assert!(front.text().await.unwrap().contains("Tandem demo shop"));
    let form = http.get(format!("{site}login")).send().await.unwrap();
    assert!(form.text().await.unwrap().contains("name=\"password\""));
    let signed = http
        .post(format!("{site}session"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("name=Ada+L%C3%BC%3Cb%3E&password=x")
        .send()
        .await
        .unwrap();
    assert_eq!(signed.status(), 303);
    assert_eq!(signed.headers()["location"], "/demo/account");
    let cookie = signed.headers()["set-cookie"].to_str().unwrap();
    let cookie = cookie.split(';').next().unwrap().to_owned();
    let account = http
        .get(format!("{site}account"))
        .header("cookie", cookie)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        account.contains("Signed in as Ada Lü&lt;b&gt;."),
        "{account}"
    );
    let anonymous = http.get(format!("{site}account")).send().await.unwrap();
    assert!(anonymous.text().await.unwrap().contains("Not signed in"));

    let mut request = first_request(false);
    request["tools"] = json!([
        {"type": "function", "function": {"name": "task_tracker"}},
        {"type": "function", "function": {"name": "browser_navigate"}},
        {"type": "function", "function": {"name": "browser_get_content"}},
    ]);
    let body: Value = http
        .post(format!("{}/chat/completions", server.base_url()))
        .json(&request)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let args: Value = serde_json::from_str(
        body["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let plan = args["task_list"].to_string();
    assert!(plan.contains("demo shop"), "{plan}");
}
