//! Gateway overhead: one one-shot `POST /v1/chat/completions` against `tandem serve` with the
//! zero-latency scripted LLM, against the same one-turn conversation run directly over REST
//! (`POST /api/conversations` with a running initial message, wait until finished, `GET
//! .../agent_final_response`). Both send the same agent (the default tools, the same LLM) and
//! the LLM answers at once, so the difference is what the gateway adds. Prints both medians
//! and means (ms), the overhead and the ratio.
//!
//! Run: `cargo bench -p tandem-e2e --bench gateway` (`BENCH_N=100` requests per side; 50).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_e2e::{KEY, TandemServer};
use tandem_protocol::{AgentSpec, LlmConfig};
use tandem_testkit::{ScriptedLlmServer, Step};

fn llm() -> ScriptedLlmServer {
    ScriptedLlmServer::with_responder(std::sync::Arc::new(|body: &Value, _| {
        if body
            .get("tools")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            Step::text("Benchmark")
        } else {
            Step::text("the answer")
        }
    }))
}

fn stats(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let median = v[v.len() / 2];
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    (median, mean)
}

async fn gateway_once(http: &reqwest::Client, url: &str) -> f64 {
    let body =
        json!({"model": "openhands_default", "messages": [{"role": "user", "content": "answer"}]});
    let t = Instant::now();
    let r = http
        .post(format!("{url}/v1/chat/completions"))
        .bearer_auth(KEY)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "gateway: {}", r.status());
    let v: Value = r.json().await.unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], "the answer");
    t.elapsed().as_secs_f64() * 1000.0
}

async fn get_json(http: &reqwest::Client, url: &str) -> Value {
    let r = http.get(url).header("X-Session-API-Key", KEY).send().await;
    r.unwrap().json().await.unwrap()
}

async fn rest_once(http: &reqwest::Client, url: &str, create: &Value) -> f64 {
    let t = Instant::now();
    let r = http
        .post(format!("{url}/api/conversations"))
        .header("X-Session-API-Key", KEY)
        .json(create)
        .send()
        .await
        .unwrap();
    assert!(r.status().is_success(), "create: {}", r.status());
    let id = r.json::<Value>().await.unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let info = get_json(http, &format!("{url}/api/conversations/{id}")).await;
        if info["execution_status"] == "finished" {
            break;
        }
        assert!(Instant::now() < deadline, "the REST run never finished");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let v = get_json(
        http,
        &format!("{url}/api/conversations/{id}/agent_final_response"),
    )
    .await;
    assert_eq!(v["response"], "the answer");
    t.elapsed().as_secs_f64() * 1000.0
}

fn main() {
    let n: usize = std::env::var("BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let bin = tandem_e2e::tandem_bin().unwrap_or_else(|e| panic!("{e:#}"));
    println!(
        "gateway overhead benchmark ({}), {n} one-shot requests per side, zero-latency scripted LLM",
        bin.display()
    );
    let llm = llm();
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("LLM_MODEL", "openai/fake".to_owned()),
        ("LLM_BASE_URL", llm.base_url()),
        ("LLM_API_KEY", "x".to_owned()),
    ];
    let server = TandemServer::start(&dir.path().join("home"), &env).unwrap();
    let mut config = LlmConfig::new("openai/fake");
    config.base_url = Some(llm.base_url());
    config.api_key = Some("x".into());
    let create = json!({
        "agent": AgentSpec::default_for(config),
        "initial_message": {"role": "user", "content": [{"type": "text", "text": "answer"}], "run": true},
    });
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (gateway, rest) = rt.block_on(async {
        let http = reqwest::Client::new();
        // Warm up both paths.
        for _ in 0..3 {
            gateway_once(&http, &server.url).await;
            rest_once(&http, &server.url, &create).await;
        }
        let (mut g, mut r) = (Vec::new(), Vec::new());
        // Interleaved, so drift hits both sides alike.
        for _ in 0..n {
            g.push(gateway_once(&http, &server.url).await);
            r.push(rest_once(&http, &server.url, &create).await);
        }
        (stats(g), stats(r))
    });
    println!();
    println!(
        "{:<58} {:>10} {:>10}",
        "per one-shot request", "median ms", "mean ms"
    );
    println!(
        "{:<58} {:>10.2} {:>10.2}",
        "gateway: POST /v1/chat/completions", gateway.0, gateway.1
    );
    println!(
        "{:<58} {:>10.2} {:>10.2}",
        "direct REST: create+run, wait, agent_final_response", rest.0, rest.1
    );
    println!(
        "{:<58} {:>10.2} {:>10.2}",
        "gateway overhead (gateway − REST)",
        gateway.0 - rest.0,
        gateway.1 - rest.1
    );
    println!(
        "{:<58} {:>10.2} {:>10.2}",
        "ratio (gateway / REST)",
        gateway.0 / rest.0,
        gateway.1 / rest.1
    );
}
