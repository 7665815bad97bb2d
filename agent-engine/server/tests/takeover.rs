//! Takeover through the server on real Chromium: who drives is one state machine, and a
//! person's credentials never reach the model.
//!
//! - 1,000 random interleavings (a seeded generator) of take control and hand back (REST and
//!   socket), a person's navigation, socket drops and the agent's own browser actions (an agent
//!   that navigates for ever): a loopback site asks the server who drives as each request
//!   arrives, so an agent request while the person drives (or a person's while the agent
//!   does) is seen where it happens; after each hand-back the run is running again.
//! - A login by takeover with a GET form: the password the person types over the socket, and
//!   text they mark as secret, are masked in the agent's observations, the events and every
//!   LLM request.

use crate::harness;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use harness::{KEY, TestServer, Ws};
use serde_json::{Value, json};
use tandem_testkit::{ScriptedLlmServer, Step};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message as WsMessage;

/// Hang guard for each wait; the tests never assert speed.
const PATIENCE: Duration = Duration::from_secs(90);

/// xorshift64*: a small seeded generator, so a failing sequence can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// What the loopback site saw.
#[derive(Default)]
struct Seen {
    agent_hits: AtomicUsize,
    person_hits: AtomicUsize,
    /// Agent requests that arrived while the person drove.
    agent_under_person: AtomicUsize,
    /// Person requests that arrived while the agent drove.
    person_under_agent: AtomicUsize,
}

/// A site whose `/hit` (the agent's) and `/person` (the person's) pages ask the server who
/// drives before they answer.
async fn watched_site(server: SocketAddr, id: String, seen: Arc<Seen>) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let http = reqwest::Client::new();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (http, id, seen) = (http.clone(), id.clone(), Arc::clone(&seen));
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let n = stream.read(&mut buf).await.unwrap_or(0);
                let req = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = req.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let whose = if path.starts_with("/hit") {
                    Some("agent")
                } else if path.starts_with("/person") {
                    Some("person")
                } else {
                    None
                };
                if let Some(whose) = whose {
                    let state: Value = http
                        .get(format!(
                            "http://{server}/api/conversations/{id}/browser/state"
                        ))
                        .header("X-Session-API-Key", KEY)
                        .send()
                        .await
                        .unwrap()
                        .json()
                        .await
                        .unwrap();
                    let driver = state["driver"].as_str().unwrap_or("").to_owned();
                    if whose == "agent" {
                        seen.agent_hits.fetch_add(1, Ordering::SeqCst);
                        if driver == "person" {
                            seen.agent_under_person.fetch_add(1, Ordering::SeqCst);
                        }
                    } else {
                        seen.person_hits.fetch_add(1, Ordering::SeqCst);
                        if driver == "agent" {
                            seen.person_under_agent.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                }
                let body = "<!doctype html><title>Hit</title><p>ok";
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(resp.as_bytes()).await;
            });
        }
    });
    addr
}

fn browser_agent(llm: &ScriptedLlmServer) -> Value {
    let mut agent = TestServer::agent(llm);
    agent["tools"] = json!([{"name": "browser_tool_set"}, {"name": "browser_request_handoff"}]);
    agent
}

async fn send(ws: &mut Ws, frame: Value) {
    let _ = ws.send(WsMessage::Text(frame.to_string().into())).await;
}

/// Reads (and drops) whatever a socket was sent, so it never stalls the server.
fn drain(
    ws: Ws,
) -> (
    futures::stream::SplitSink<Ws, WsMessage>,
    tokio::task::JoinHandle<()>,
) {
    let (sink, mut stream) = ws.split();
    let task = tokio::spawn(async move { while let Some(Ok(_)) = stream.next().await {} });
    (sink, task)
}

/// Hands the browser back until the agent drives (a take-control a dropped socket had
/// queued may still land), then waits until the run is running again and the agent acts.
async fn hand_back_and_see_the_run_resume(t: &TestServer, id: &str, seen: &Seen, round: usize) {
    let hits = seen.agent_hits.load(Ordering::SeqCst);
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let (s, state) = t
            .post(
                &format!("/api/conversations/{id}/browser/hand_back"),
                json!({"note": "round"}),
            )
            .await;
        assert_eq!(s, 200, "{state}");
        let status = t.status(id).await;
        if state["driver"] == "agent"
            && status == "running"
            && seen.agent_hits.load(Ordering::SeqCst) > hits
        {
            return;
        }
        if tokio::time::Instant::now() >= deadline {
            let events = t.events(id).await;
            let tail: Vec<String> = events.iter().rev().take(40).rev().map(summary).collect();
            panic!(
                "round {round}: after the hand-back the run stayed {status} and the agent made no request; the last events:\n{}",
                tail.join("\n")
            );
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// One line of an event, for a failure's story.
fn summary(e: &Value) -> String {
    let kind = e["kind"].as_str().unwrap_or("?");
    match kind {
        "ConversationStateUpdateEvent" => format!("{kind} {}={}", e["key"], e["value"]),
        "ActionEvent" => format!("{kind} {}", e["tool_name"]),
        "ObservationEvent" => {
            let text = e["observation"].to_string();
            format!("{kind} {}", text.chars().take(120).collect::<String>())
        }
        _ => format!("{kind} source={}", e["source"]),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_random_takeovers_never_let_the_agent_act_under_the_person_nor_stay_paused() {
    let seed: u64 = std::env::var("TAKEOVER_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7A4D_E11A);
    let t = Arc::new(TestServer::start().await);
    let site = Arc::new(std::sync::OnceLock::<SocketAddr>::new());
    let for_llm = Arc::clone(&site);
    // The agent navigates for ever, each step to a new /hit page.
    let llm = ScriptedLlmServer::with_responder(Arc::new(move |body: &Value, n| {
        if body.get("tools").is_none_or(Value::is_null) {
            return Step::text("A title");
        }
        let addr = for_llm
            .get()
            .copied()
            .unwrap_or(SocketAddr::from(([127, 0, 0, 1], 9)));
        Step::tool_call(
            "browser_navigate",
            json!({"url": format!("http://{addr}/hit?n={n}")}),
        )
    }));
    let id = t.create(&llm, json!({"agent": browser_agent(&llm)})).await;
    let seen = Arc::new(Seen::default());
    let _ = site.set(watched_site(t.addr, id.clone(), Arc::clone(&seen)).await);
    t.message(&id, "browse for ever", true).await;
    let deadline = tokio::time::Instant::now() + PATIENCE;
    while seen.agent_hits.load(Ordering::SeqCst) < 3 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the agent never browsed"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }

    let mut rng = Rng(seed);
    let (mut sink, mut reader) = drain(t.ws(&format!("/sockets/browser/{id}")).await);
    let mut inflight: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    let (mut takes, mut drops) = (0, 0);
    const OPS: usize = 1000;
    const ROUND: usize = 50;
    for op in 0..OPS {
        match rng.below(10) {
            0 | 1 => {
                takes += 1;
                let t = Arc::clone(&t);
                let id = id.clone();
                inflight.push(tokio::spawn(async move {
                    let (s, b) = t
                        .post(
                            &format!("/api/conversations/{id}/browser/take_control"),
                            json!({}),
                        )
                        .await;
                    assert_eq!(s, 200, "{b}");
                }));
            }
            2 | 3 => {
                let t = Arc::clone(&t);
                let id = id.clone();
                inflight.push(tokio::spawn(async move {
                    let (s, b) = t
                        .post(
                            &format!("/api/conversations/{id}/browser/hand_back"),
                            json!({"note": "op"}),
                        )
                        .await;
                    assert_eq!(s, 200, "{b}");
                }));
            }
            4 => {
                takes += 1;
                let _ = sink
                    .send(WsMessage::Text(
                        json!({"type": "take_control"}).to_string().into(),
                    ))
                    .await;
            }
            5 => {
                let _ = sink
                    .send(WsMessage::Text(
                        json!({"type": "hand_back", "note": "socket"})
                            .to_string()
                            .into(),
                    ))
                    .await;
            }
            6 => {
                // The person navigates (refused unless they drive).
                let url = format!("http://{}/person?op={op}", site.get().unwrap());
                let _ = sink
                    .send(WsMessage::Text(
                        json!({"type": "navigate", "url": url}).to_string().into(),
                    ))
                    .await;
            }
            7 => {
                // The socket drops (its queued input with it) and another opens.
                drops += 1;
                drop(sink);
                reader.abort();
                (sink, reader) = drain(t.ws(&format!("/sockets/browser/{id}")).await);
            }
            _ => {
                tokio::time::sleep(Duration::from_millis(rng.below(20))).await;
            }
        }
        if (op + 1) % ROUND == 0 {
            for task in inflight.drain(..) {
                tokio::time::timeout(PATIENCE, task)
                    .await
                    .expect("a takeover or hand-back wedged")
                    .unwrap();
            }
            tokio::time::sleep(Duration::from_millis(rng.below(50))).await;
            hand_back_and_see_the_run_resume(&t, &id, &seen, op / ROUND).await;
        }
        assert_eq!(
            seen.agent_under_person.load(Ordering::SeqCst),
            0,
            "op {op} (seed {seed:#x}): an agent action reached the page while the person drove"
        );
        assert_eq!(
            seen.person_under_agent.load(Ordering::SeqCst),
            0,
            "op {op} (seed {seed:#x}): the person's input reached the page while the agent drove"
        );
    }
    // Whatever the socket still had queued is applied or refused; then the final hand-back.
    drop(sink);
    reader.abort();
    hand_back_and_see_the_run_resume(&t, &id, &seen, OPS / ROUND).await;
    assert_eq!(seen.agent_under_person.load(Ordering::SeqCst), 0);
    assert_eq!(seen.person_under_agent.load(Ordering::SeqCst), 0);
    let events = t.events(&id).await;
    let changes = events
        .iter()
        .filter(|e| e["kind"] == "ConversationStateUpdateEvent" && e["key"] == "browser_control")
        .count();
    println!(
        "seed {seed:#x}: {OPS} ops, {takes} take-control asks, {drops} socket drops, {changes} driver changes, {} agent and {} person page loads",
        seen.agent_hits.load(Ordering::SeqCst),
        seen.person_hits.load(Ordering::SeqCst)
    );
    assert!(
        changes >= 20,
        "the interleavings changed the driver {changes} times"
    );
    assert!(
        seen.person_hits.load(Ordering::SeqCst) > 0,
        "the person's input never reached the page"
    );
    t.server.shutdown().await;
}

/// Frames until one matches `pred` (an error frame fails the test), within the hang guard.
async fn wait(ws: &mut Ws, what: &str, pred: fn(&Value) -> bool) -> Vec<Value> {
    let fut = harness::until(ws, move |v| {
        assert_ne!(v["type"], "error", "refused while waiting: {v}");
        pred(v)
    });
    tokio::time::timeout(PATIENCE, fut)
        .await
        .unwrap_or_else(|_| panic!("no {what}"))
}

fn mentions(haystack: &str, needles: &[&str]) -> Vec<String> {
    needles
        .iter()
        .filter(|n| haystack.contains(*n))
        .map(|n| (*n).to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_password_typed_during_a_takeover_and_text_marked_secret_never_reach_the_model() {
    let site = tandem_testkit::site::serve().await;
    // Typed partly as keys, partly as text; a GET form puts it in the next page's URL.
    let password_keys = ["s", "3", "c", "r", "3", "t"];
    let password_text = "pa ss!";
    let password = "s3cr3tpa ss!";
    // The person marks their user name as secret too (the welcome page greets them by it).
    let token = "alice";
    let llm = harness::llm(vec![
        Step::tool_call("browser_navigate", json!({"url": site.url("/login.html")})),
        Step::tool_call(
            "browser_request_handoff",
            json!({"reason": "Please log in"}),
        ),
        Step::tool_call("browser_get_state", json!({"include_screenshot": false})),
        Step::tool_call(
            "browser_get_content",
            json!({"extract_links": false, "start_from_char": 0}),
        ),
        Step::text("done"),
    ]);
    let t = TestServer::start().await;
    let id = t.create(&llm, json!({"agent": browser_agent(&llm)})).await;
    let mut ws = t.ws(&format!("/sockets/browser/{id}")).await;
    t.message(&id, "log in to the shop", true).await;
    wait(&mut ws, "the handoff", |v| {
        v["type"] == "state" && v["handoff"]["reason"] == "Please log in"
    })
    .await;
    send(&mut ws, json!({"type": "take_control"})).await;
    wait(&mut ws, "the person driving", |v| {
        v["type"] == "state" && v["driver"] == "person"
    })
    .await;
    send(
        &mut ws,
        json!({"type": "mouse", "action": "click", "x": 250, "y": 215}),
    )
    .await;
    send(&mut ws, json!({"type": "text", "text": token})).await;
    send(
        &mut ws,
        json!({"type": "mouse", "action": "click", "x": 250, "y": 315}),
    )
    .await;
    for key in password_keys {
        send(&mut ws, json!({"type": "key", "key": key})).await;
    }
    send(&mut ws, json!({"type": "text", "text": password_text})).await;
    send(&mut ws, json!({"type": "key", "key": "Enter"})).await;
    let arrived = wait(&mut ws, "the welcome page", |v| {
        v["type"] == "state"
            && v["url"]
                .as_str()
                .is_some_and(|u| u.contains("welcome.html"))
    })
    .await;
    let url = arrived.last().unwrap()["url"].as_str().unwrap().to_owned();
    assert!(
        url.contains("pass=s3cr3tpa+ss%21"),
        "the GET form put the password in the URL: {url}"
    );
    // The person marks a token as secret (too short a text is refused with the reason).
    send(&mut ws, json!({"type": "mark_secret", "text": "abc"})).await;
    let refused = harness::until(&mut ws, |v| v["type"] == "error").await;
    assert!(
        refused.last().unwrap()["message"]
            .as_str()
            .unwrap()
            .contains("at least 4"),
        "{refused:?}"
    );
    send(&mut ws, json!({"type": "mark_secret", "text": token})).await;
    send(&mut ws, json!({"type": "hand_back", "note": "logged in"})).await;
    wait(&mut ws, "the agent driving", |v| {
        v["type"] == "state" && v["driver"] == "agent"
    })
    .await;
    t.wait_status(&id, &["finished"]).await;

    let forbidden = [
        password,
        "s3cr3tpa+ss%21",
        "s3cr3tpa%20ss!",
        "s3cr3tpa",
        token,
    ];
    let events = t.events(&id).await;
    let observations: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "ObservationEvent")
        .collect();
    let state_obs = observations
        .iter()
        .find(|e| e["tool_name"] == "browser_get_state")
        .unwrap_or_else(|| panic!("no browser_get_state observation: {events:#?}"));
    let text = state_obs["observation"].to_string();
    assert!(text.contains("welcome.html"), "{text}");
    assert!(
        text.contains("<secret-hidden>"),
        "the password in the URL is masked: {text}"
    );
    assert_eq!(mentions(&text, &forbidden), Vec::<String>::new(), "{text}");
    let contents: Vec<String> = observations
        .iter()
        .filter(|e| e["tool_name"] == "browser_get_content")
        .map(|e| e["observation"].to_string())
        .collect();
    assert_eq!(contents.len(), 1, "{events:#?}");
    assert!(
        contents[0].contains("Welcome, <secret-hidden>"),
        "the marked text is masked in page content: {}",
        contents[0]
    );
    let all_events = serde_json::to_string(&events).unwrap();
    assert_eq!(
        mentions(&all_events, &forbidden),
        Vec::<String>::new(),
        "no event carries the person's secrets"
    );
    let requests = serde_json::to_string(&llm.requests()).unwrap();
    assert!(
        requests.contains("welcome.html"),
        "the model was told where the person went"
    );
    assert_eq!(
        mentions(&requests, &forbidden),
        Vec::<String>::new(),
        "no LLM request carries the person's secrets"
    );
    t.stop().await;
}
