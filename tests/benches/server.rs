//! Server benchmarks: `tandem serve` (release build) measured with the procedure of
//! `../shared/openhands/anchor-numbers.md` — cold start, idle RSS, a 100-step conversation over
//! REST with the zero-latency scripted LLM, RSS and disk after it, fetching all its events,
//! recovery after `kill -9` — plus 50 concurrent conversations × 100 steps, and 10 then 100
//! started together on the default limit of 10 runs at once (the rest wait their turn). Each
//! figure is printed with the upstream 1.58 anchor, the ratio and the target.
//!
//! Run: `cargo bench -p tandem-e2e --bench server` (`BENCH_REPS=3` for three repetitions).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_e2e::{KEY, TandemServer, free_port, rss_mb};
use tandem_protocol::{AgentSpec, LlmConfig};
use tandem_testkit::{ScriptedLlmServer, Step};

const STEPS: usize = 100;
const CONCURRENT: usize = 50;
/// The server's default runs at once, and the conversations started together beyond it.
const QUEUE_SLOTS: usize = 10;
const QUEUED: usize = 100;

/// Terminal `echo i` for i = 0..99, then finish, counted per conversation (by the request's
/// `prompt_cache_key`, the conversation id; else by the tool results in the request, which a
/// condensed history undercounts); requests without tools (titles, summaries) get canned text.
fn llm() -> ScriptedLlmServer {
    let calls: Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>> = Arc::default();
    ScriptedLlmServer::with_responder(Arc::new(move |body: &Value, _| {
        if body
            .get("tools")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
        {
            return Step::text("Benchmark");
        }
        let done = match body.get("prompt_cache_key").and_then(Value::as_str) {
            Some(key) => {
                let mut calls = calls
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                let n = calls.entry(key.to_owned()).or_default();
                *n += 1;
                *n - 1
            }
            None => body["messages"]
                .as_array()
                .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count()),
        };
        if done < STEPS {
            Step::tool_call(
                "terminal",
                json!({"command": format!("echo {done}"), "security_risk": "LOW"}),
            )
        } else {
            Step::tool_call("finish", json!({"message": "done"}))
        }
    }))
}

fn create_body(llm: &ScriptedLlmServer, work: &Path) -> Value {
    let mut config = LlmConfig::new("openai/fake");
    config.base_url = Some(llm.base_url());
    config.api_key = Some("x".into());
    config.num_retries = 0;
    json!({
        "agent": AgentSpec::default_for(config),
        "workspace": {"kind": "LocalWorkspace", "working_dir": work},
        "initial_message": {"role": "user", "content": [{"type": "text", "text": "count to 100"}], "run": true},
    })
}

struct Api {
    http: reqwest::Client,
    url: String,
}

impl Api {
    async fn get(&self, path: &str) -> reqwest::Response {
        self.http
            .get(format!("{}{path}", self.url))
            .header("X-Session-API-Key", KEY)
            .send()
            .await
            .unwrap()
    }

    async fn status(&self, id: &str) -> Option<String> {
        let r = self.get(&format!("/api/conversations/{id}")).await;
        if !r.status().is_success() {
            return None;
        }
        let v: Value = r.json().await.ok()?;
        v["execution_status"].as_str().map(str::to_owned)
    }

    async fn create(&self, body: &Value) -> String {
        let r = self
            .http
            .post(format!("{}/api/conversations", self.url))
            .header("X-Session-API-Key", KEY)
            .json(body)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "create: {}", r.status());
        let v: Value = r.json().await.unwrap();
        v["id"].as_str().unwrap().to_owned()
    }

    /// Every event, paged by 100; `None` while the conversation does not answer.
    async fn all_events(&self, id: &str) -> Option<Vec<Value>> {
        let mut out = Vec::new();
        let mut page: Option<String> = None;
        loop {
            let mut q = format!("/api/conversations/{id}/events/search?limit=100");
            if let Some(p) = &page {
                q.push_str(&format!("&page_id={p}"));
            }
            let r = self.get(&q).await;
            if !r.status().is_success() {
                return None;
            }
            let mut v: Value = r.json().await.ok()?;
            // Moved out, not deep-copied: the harness should cost what a client's parse costs.
            if let Value::Array(items) = v["items"].take() {
                out.extend(items);
            }
            match v["next_page_id"].as_str() {
                Some(p) => page = Some(p.to_owned()),
                None => return Some(out),
            }
        }
    }

    async fn wait_terminal(&self, id: &str, every: Duration) -> String {
        loop {
            if let Some(s) = self.status(id).await
                && matches!(s.as_str(), "finished" | "error" | "stuck")
            {
                return s;
            }
            tokio::time::sleep(every).await;
        }
    }
}

fn dir_bytes(p: &Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else {
        return 0;
    };
    rd.flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => dir_bytes(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}

/// RSS of `pid` and all its descendants, MB.
fn tree_rss_mb(pid: u32) -> f64 {
    let mut total = rss_mb(pid);
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return total;
    };
    let mut kids: Vec<u32> = Vec::new();
    for e in rd.flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let ppid = stat
            .rfind(')')
            .and_then(|i| stat[i + 2..].split_whitespace().nth(1))
            .and_then(|v| v.parse::<u32>().ok());
        if ppid == Some(pid) {
            kids.push(p);
        }
    }
    for k in kids {
        total += tree_rss_mb(k);
    }
    total
}

fn ts_secs(ev: &Value) -> Option<f64> {
    let t = ev["timestamp"].as_str()?;
    let t = t.trim_end_matches('Z');
    let dt = chrono::NaiveDateTime::parse_from_str(t, "%Y-%m-%dT%H:%M:%S%.f").ok()?;
    Some(dt.and_utc().timestamp_micros() as f64 / 1e6)
}

/// Gaps between consecutive agent actions, ms (one agent step each).
fn step_gaps_ms(events: &[Value]) -> Vec<f64> {
    let times: Vec<f64> = events
        .iter()
        .filter(|e| e["kind"] == "ActionEvent")
        .filter_map(ts_secs)
        .collect();
    times.windows(2).map(|w| (w[1] - w[0]) * 1000.0).collect()
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i.min(v.len() - 1)]
}

fn line(metric: &str, value: f64, unit: &str, anchor: &str, anchor_value: f64, target: &str) {
    let ratio = if value > 0.0 && anchor_value > 0.0 {
        anchor_value / value
    } else {
        f64::NAN
    };
    println!(
        "{metric:<52} {value:>10.2} {unit:<4}  anchor {anchor:<22} {ratio:>9.1}× better   target {target}"
    );
}

struct Rep {
    fields: Vec<(String, f64)>,
}

async fn one_rep(root: &Path) -> Rep {
    let mut f = Vec::new();
    let home = root.join("home");
    let work = root.join("project");
    std::fs::create_dir_all(&work).unwrap();
    let port = free_port().unwrap();
    let env = [("OH_MAX_CONCURRENT_RUNS", "64".to_owned())];

    // Cold start: spawn → first /health 200 (polled every 1 ms), and the CPU it took.
    let spawn = Instant::now();
    let mut server = TandemServer::start_on(&home, &env, port, Duration::from_millis(1)).unwrap();
    let cold = spawn.elapsed();
    f.push(("cold_ms".to_owned(), cold.as_secs_f64() * 1000.0));
    f.push((
        "cold_cpu_ms".to_owned(),
        server.child.cpu_seconds() * 1000.0,
    ));
    tokio::time::sleep(Duration::from_secs(2)).await;
    f.push(("idle_rss_mb".to_owned(), server.child.rss_mb()));

    let api = Api {
        http: reqwest::Client::new(),
        url: server.url.clone(),
    };
    let llm = llm();

    // One 100-step conversation over REST, status polled every 50 ms.
    let t0 = Instant::now();
    let id = api.create(&create_body(&llm, &work)).await;
    let status = api.wait_terminal(&id, Duration::from_millis(50)).await;
    let run = t0.elapsed();
    if status != "finished" {
        let events = api.all_events(&id).await.unwrap_or_default();
        let errors: Vec<&Value> = events
            .iter()
            .filter(|e| e["kind"] == "ConversationErrorEvent" || e["kind"] == "AgentErrorEvent")
            .collect();
        panic!(
            "the 100-step run ended {status} after {} events: {errors:?}",
            events.len()
        );
    }
    f.push((
        "run_ms_per_step".to_owned(),
        run.as_secs_f64() * 1000.0 / (STEPS as f64 + 1.0),
    ));
    let events = api.all_events(&id).await.unwrap();
    let mut gaps = step_gaps_ms(&events);
    f.push(("step_median_ms".to_owned(), percentile(&mut gaps, 0.5)));
    f.push(("events".to_owned(), events.len() as f64));
    tokio::time::sleep(Duration::from_secs(2)).await;
    f.push(("rss_after_mb".to_owned(), server.child.rss_mb()));
    f.push((
        "rss_tree_after_mb".to_owned(),
        tree_rss_mb(server.child.pid()),
    ));
    let conv_dir = home.join("conversations").join(id.replace('-', ""));
    f.push(("disk_kb".to_owned(), dir_bytes(&conv_dir) as f64 / 1000.0));

    // GET all events: first fetch, best of 3.
    let mut fetches = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let n = api.all_events(&id).await.unwrap().len();
        assert_eq!(n, events.len());
        fetches.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    f.push(("events_first_ms".to_owned(), fetches[0]));
    f.push((
        "events_best_ms".to_owned(),
        fetches.iter().copied().fold(f64::INFINITY, f64::min),
    ));

    // kill -9, respawn on the same directories: until /health, the conversation, all events.
    server.child.kill9();
    let t = Instant::now();
    let server = TandemServer::start_on(&home, &env, port, Duration::from_millis(1)).unwrap();
    f.push((
        "recovery_health_ms".to_owned(),
        t.elapsed().as_secs_f64() * 1000.0,
    ));
    let api = Api {
        http: reqwest::Client::new(),
        url: server.url.clone(),
    };
    while api.status(&id).await.is_none() {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    f.push((
        "recovery_conv_ms".to_owned(),
        t.elapsed().as_secs_f64() * 1000.0,
    ));
    loop {
        if let Some(all) = api.all_events(&id).await
            && all.len() >= events.len()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    f.push((
        "recovery_events_ms".to_owned(),
        t.elapsed().as_secs_f64() * 1000.0,
    ));

    // 50 concurrent conversations × 100 steps.
    let body = create_body(&llm, &work);
    let (ids, wall) = started_together(&api, &body, CONCURRENT).await;
    f.push((
        "conc_steps_per_s".to_owned(),
        (CONCURRENT * (STEPS + 1)) as f64 / wall,
    ));
    let mut all_gaps = Vec::new();
    for id in &ids {
        all_gaps.extend(step_gaps_ms(&api.all_events(id).await.unwrap()));
    }
    f.push((
        "conc_step_p50_ms".to_owned(),
        percentile(&mut all_gaps, 0.5),
    ));
    f.push((
        "conc_step_p99_ms".to_owned(),
        percentile(&mut all_gaps, 0.99),
    ));
    tokio::time::sleep(Duration::from_secs(1)).await;
    f.push(("conc_rss_mb".to_owned(), server.child.rss_mb()));
    f.push((
        "conc_rss_tree_mb".to_owned(),
        tree_rss_mb(server.child.pid()),
    ));
    drop(server);

    // The run queue: a server with the default of 10 runs at once, 10 and then 100
    // conversations × 100 steps started together. None is refused; beyond 10 they wait their
    // turn, and every one finishes.
    let queue_home = root.join("home-queue");
    let server = TandemServer::start_on(
        &queue_home,
        &[],
        free_port().unwrap(),
        Duration::from_millis(1),
    )
    .unwrap();
    let api = Api {
        http: reqwest::Client::new(),
        url: server.url.clone(),
    };
    for n in [QUEUE_SLOTS, QUEUED] {
        let (_, wall) = started_together(&api, &body, n).await;
        f.push((
            format!("queue{n}_steps_per_s"),
            (n * (STEPS + 1)) as f64 / wall,
        ));
    }
    drop(server);
    Rep { fields: f }
}

/// Starts `n` conversations of `body` at once and waits until each has finished: their ids,
/// and the seconds from the first start to the last finish.
async fn started_together(api: &Api, body: &Value, n: usize) -> (Vec<String>, f64) {
    let t = Instant::now();
    let ids: Vec<String> = futures_join(n, |_| {
        let api = Api {
            http: api.http.clone(),
            url: api.url.clone(),
        };
        let body = body.clone();
        async move { api.create(&body).await }
    })
    .await;
    let statuses = futures_join(ids.len(), |i| {
        let api = Api {
            http: api.http.clone(),
            url: api.url.clone(),
        };
        let id = ids[i].clone();
        async move { api.wait_terminal(&id, Duration::from_millis(50)).await }
    })
    .await;
    let wall = t.elapsed().as_secs_f64();
    assert!(statuses.iter().all(|s| s == "finished"), "{statuses:?}");
    (ids, wall)
}

/// Runs `n` futures made by `make` at once and collects their results in order.
async fn futures_join<T, F, Fut>(n: usize, make: F) -> Vec<T>
where
    T: Send + 'static,
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = T> + Send + 'static,
{
    let handles: Vec<_> = (0..n).map(|i| tokio::spawn(make(i))).collect();
    let mut out = Vec::with_capacity(n);
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

fn main() {
    let reps: usize = std::env::var("BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let bin = tandem_e2e::tandem_bin().unwrap_or_else(|e| panic!("{e:#}"));
    println!(
        "tandem serve benchmark ({}), {reps} repetition(s), against upstream openhands-agent-server 1.58.2",
        bin.display()
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut results: Vec<Rep> = Vec::new();
    for r in 0..reps {
        let dir = tempfile::tempdir().unwrap();
        let root: PathBuf = dir.path().to_owned();
        let rep = rt.block_on(one_rep(&root));
        println!(
            "rep {}: {}",
            r + 1,
            rep.fields
                .iter()
                .map(|(k, v)| format!("{k}={v:.2}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
        results.push(rep);
    }
    let med = |key: &str| {
        let mut v: Vec<f64> = results
            .iter()
            .filter_map(|r| r.fields.iter().find(|(k, _)| k == key).map(|(_, v)| *v))
            .collect();
        percentile(&mut v, 0.5)
    };
    println!();
    println!(
        "{:<52} {:>10} {:<4}  {:<29} {:>9}          target",
        "metric (median)", "value", "", "anchor (upstream 1.58)", "ratio"
    );
    line(
        "cold start: spawn -> /health 200",
        med("cold_ms"),
        "ms",
        "19-52 s wall",
        19_000.0,
        "<= 50 ms",
    );
    // /proc counts CPU in 10 ms ticks: a reading of 0 is shown as one tick, an upper bound.
    line(
        "cold start: server CPU time (at most)",
        med("cold_cpu_ms").max(10.0),
        "ms",
        "16 CPU-s",
        16_000.0,
        "-",
    );
    line(
        "idle RSS, server process",
        med("idle_rss_mb"),
        "MB",
        "343 MB",
        343.0,
        "<= 20 MB",
    );
    line(
        "100-step run over REST (50 ms poll), per step",
        med("run_ms_per_step"),
        "ms",
        "253-315 ms",
        253.0,
        "<= 10 ms",
    );
    line(
        "per step from event timestamps (median)",
        med("step_median_ms"),
        "ms",
        "253-315 ms",
        253.0,
        "<= 10 ms",
    );
    line(
        "RSS after the run, server",
        med("rss_after_mb"),
        "MB",
        "368-376 MB",
        368.0,
        "-",
    );
    line(
        "RSS after the run, server + shells",
        med("rss_tree_after_mb"),
        "MB",
        "376-385 MB",
        376.0,
        "-",
    );
    line(
        "persisted conversation dir",
        med("disk_kb"),
        "KB",
        "342-346 KB",
        342.0,
        "-",
    );
    println!(
        "{:<52} {:>10.0}        anchor 315 events",
        "events served",
        med("events")
    );
    line(
        "GET all events (pages of 100), first fetch",
        med("events_first_ms"),
        "ms",
        "48-64 ms",
        48.0,
        "<= 3 ms",
    );
    line(
        "GET all events, best of 3",
        med("events_best_ms"),
        "ms",
        "30-43 ms",
        30.0,
        "<= 3 ms",
    );
    line(
        "recovery after kill -9: spawn -> /health",
        med("recovery_health_ms"),
        "ms",
        "20-31 s",
        20_000.0,
        "<= 100 ms",
    );
    line(
        "recovery: spawn -> conversation 200",
        med("recovery_conv_ms"),
        "ms",
        "20.6-32 s",
        20_600.0,
        "<= 100 ms",
    );
    line(
        "recovery: spawn -> all events served",
        med("recovery_events_ms"),
        "ms",
        "20.8-32.5 s",
        20_800.0,
        "<= 100 ms",
    );
    println!(
        "{:<52} {:>10.1} st/s  anchor ~3.3-4 st/s (one conversation; upstream caps runs at 10)",
        "50 concurrent x 100 steps: throughput",
        med("conc_steps_per_s")
    );
    println!(
        "{:<52} {:>10.2} ms",
        "50 concurrent: step time p50 (event timestamps)",
        med("conc_step_p50_ms")
    );
    println!(
        "{:<52} {:>10.2} ms",
        "50 concurrent: step time p99 (event timestamps)",
        med("conc_step_p99_ms")
    );
    println!(
        "{:<52} {:>10.1} MB   (server + 50 shells: {:.1} MB)",
        "50 concurrent: RSS after, server",
        med("conc_rss_mb"),
        med("conc_rss_tree_mb")
    );
    let (ten, hundred) = (med("queue10_steps_per_s"), med("queue100_steps_per_s"));
    println!(
        "{:<52} {:>10.1} st/s",
        "10 at once (the default limit) x 100 steps", ten
    );
    println!(
        "{:<52} {:>10.1} st/s  ratio to 10 at once {:.2}   target >= 0.90 (upstream: 90 of 100 refused with 429)",
        "100 started together, 90 queued, x 100 steps",
        hundred,
        hundred / ten
    );
}
