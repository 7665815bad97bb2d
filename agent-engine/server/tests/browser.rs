//! The agent's browser through the server, on real Chromium against a site served on
//! 127.0.0.1: the scripted agent navigates, reads the state, clicks by index and asks for a
//! person; the test plays the person over `/sockets/browser/{id}` (takes control, clicks the
//! login fields by coordinates, types, submits, hands back with a note) and the agent's next
//! observation and LLM request name the new page. Also the socket's refusals (input before
//! taking control, wrong key, unknown conversation, no browser tools) and the REST mirror
//! pausing a running agent and resuming it with a `[browser]` message.

use crate::harness;

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use harness::{TestServer, Ws, close_code};
use serde_json::{Value, json};
use tandem_testkit::{Reply, ScriptedLlmServer, Step, ToolCallSpec};
use tokio_tungstenite::tungstenite::Message as WsMessage;

use tandem_testkit::site::serve;

/// Hang guard for each wait; the tests never assert speed.
const PATIENCE: Duration = Duration::from_secs(60);

/// The harness's agent with only the browser tools and the handoff (and the default
/// finish/think).
fn browser_agent(llm: &ScriptedLlmServer) -> Value {
    let mut agent = TestServer::agent(llm);
    agent["tools"] = json!([{"name": "browser_tool_set"}, {"name": "browser_request_handoff"}]);
    agent
}

async fn create_with_browser(t: &TestServer, llm: &ScriptedLlmServer) -> String {
    t.create(llm, json!({"agent": browser_agent(llm)})).await
}

/// The next JSON text frame (skipping pings), within the hang guard.
async fn recv(ws: &mut Ws) -> Value {
    loop {
        let msg = tokio::time::timeout(PATIENCE, ws.next())
            .await
            .expect("no frame within 60 s")
            .expect("socket ended")
            .unwrap();
        match msg {
            WsMessage::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
            WsMessage::Ping(_) | WsMessage::Pong(_) => continue,
            other => panic!("unexpected frame {other:?}"),
        }
    }
}

/// Frames until one matches `pred`; returns them all, that one last.
async fn until(ws: &mut Ws, what: &str, pred: impl Fn(&Value) -> bool) -> Vec<Value> {
    let guard = tokio::time::timeout(PATIENCE, async {
        let mut seen = Vec::new();
        loop {
            let v = recv(ws).await;
            let done = pred(&v);
            seen.push(v);
            if done {
                return seen;
            }
        }
    });
    guard
        .await
        .unwrap_or_else(|_| panic!("no {what} frame within 60 s"))
}

/// The first frame that matches `pred`, skipping the others.
async fn wait_frame(ws: &mut Ws, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let mut seen = until(ws, what, pred).await;
    seen.pop().unwrap()
}

fn is_state(v: &Value) -> bool {
    v["type"] == "state"
}

async fn send(ws: &mut Ws, frame: Value) {
    ws.send(WsMessage::Text(frame.to_string().into()))
        .await
        .unwrap();
}

async fn wait_status(t: &TestServer, id: &str, want: &[&str]) {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        let s = t.status(id).await;
        if want.contains(&s.as_str()) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "conversation {id} never reached {want:?} (now {s})"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls the events until one matches `pred`; returns it.
async fn wait_event(t: &TestServer, id: &str, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + PATIENCE;
    loop {
        if let Some(e) = t.events(id).await.into_iter().find(|e| pred(e)) {
            return e;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {what} event within 60 s: {:#?}",
            t.events(id).await
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn observation_of<'a>(events: &'a [Value], tool: &str) -> Vec<&'a Value> {
    events
        .iter()
        .filter(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == tool)
        .collect()
}

fn control_updates(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["kind"] == "ConversationStateUpdateEvent" && e["key"] == "browser_control")
        .map(|e| e["value"].clone())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_person_logs_in_for_the_agent_over_the_socket_and_hands_back() {
    let site = serve().await;
    let llm = harness::llm(vec![
        Step::tool_call("browser_navigate", json!({"url": site.url("/")})),
        Step::tool_call("browser_get_state", json!({"include_screenshot": false})),
        // On the home page the "Log in" link is element 1 (the button 2).
        Step::tool_call("browser_click", json!({"index": 1})),
        Step::tool_call(
            "browser_request_handoff",
            json!({"reason": "Please log in"}),
        ),
        Step::tool_call("browser_get_state", json!({"include_screenshot": false})),
        Step::text("done"),
    ]);
    let t = TestServer::start().await;
    let id = create_with_browser(&t, &llm).await;
    let (s, before) = t
        .get(&format!("/api/conversations/{id}/browser/state"))
        .await;
    assert_eq!(s, 200, "{before}");
    assert_eq!(
        (&before["driver"], &before["running"]),
        (&json!("agent"), &json!(false)),
        "Chromium starts at the agent's first browser action: {before}"
    );

    let mut ws = t.ws(&format!("/sockets/browser/{id}")).await;
    let first = recv(&mut ws).await;
    assert!(is_state(&first), "the state comes first: {first}");
    assert_eq!(first["driver"], "agent");
    assert_eq!(first["handoff"], Value::Null);

    t.message(&id, "log in to the shop", true).await;
    let asked = wait_frame(&mut ws, "handoff state", |v| {
        is_state(v) && v["handoff"]["reason"] == "Please log in"
    })
    .await;
    assert!(
        asked["url"].as_str().unwrap().ends_with("/login.html"),
        "the agent clicked its way to the login page: {asked}"
    );
    assert_eq!(asked["title"], "Log in");
    assert_eq!(asked["driver"], "agent");

    // Input while the agent drives is refused and changes nothing.
    send(&mut ws, json!({"type": "text", "text": "x"})).await;
    let refused = wait_frame(&mut ws, "error", |v| v["type"] == "error").await;
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("take control"),
        "{refused}"
    );
    send(
        &mut ws,
        json!({"type": "navigate", "url": site.url("/welcome.html")}),
    )
    .await;
    wait_frame(&mut ws, "error", |v| v["type"] == "error").await;
    let (_, unchanged) = t
        .get(&format!("/api/conversations/{id}/browser/state"))
        .await;
    assert_eq!(unchanged["driver"], "agent");
    assert_eq!(unchanged["url"], asked["url"], "{unchanged}");
    assert_eq!(unchanged["handoff"]["reason"], "Please log in");

    send(&mut ws, json!({"type": "take_control"})).await;
    let mut seen = until(&mut ws, "person state", |v| {
        is_state(v) && v["driver"] == "person"
    })
    .await;
    // The login page puts #user's centre at (250, 215) and #pass's at (250, 315).
    for input in [
        json!({"type": "mouse", "action": "click", "x": 250, "y": 215}),
        json!({"type": "text", "text": "alice"}),
        json!({"type": "mouse", "action": "click", "x": 250, "y": 315}),
        json!({"type": "text", "text": "pw"}),
        json!({"type": "key", "key": "Enter"}),
    ] {
        send(&mut ws, input).await;
    }
    seen.extend(
        until(&mut ws, "welcome state", |v| {
            assert_ne!(v["type"], "error", "the person's input was refused: {v}");
            is_state(v)
                && v["url"].as_str().unwrap().contains("welcome.html")
                && v["title"] == "Your account"
        })
        .await,
    );
    let arrived = seen.last().unwrap();
    assert!(
        arrived["url"].as_str().unwrap().contains("user=alice"),
        "{arrived}"
    );
    // The person saw the page change as they drove.
    let frames: Vec<&Value> = seen.iter().filter(|v| v["type"] == "frame").collect();
    assert!(
        !frames.is_empty(),
        "no screencast frame while the person drove"
    );
    for f in frames {
        assert_eq!(f["format"], "jpeg");
        assert_eq!(
            (f["width"].as_f64(), f["height"].as_f64()),
            (Some(1280.0), Some(800.0))
        );
        assert!(!f["data"].as_str().unwrap().is_empty());
    }
    send(&mut ws, json!({"type": "hand_back", "note": "logged in"})).await;
    wait_frame(&mut ws, "agent state", |v| {
        is_state(v) && v["driver"] == "agent" && v["handoff"].is_null()
    })
    .await;

    wait_status(&t, &id, &["finished"]).await;
    let events = t.events(&id).await;
    let handoff = observation_of(&events, "browser_request_handoff");
    assert_eq!(handoff.len(), 1, "{events:#?}");
    let told = handoff[0]["observation"].to_string();
    for needle in ["login.html", "welcome.html", "Your account", "logged in"] {
        assert!(told.contains(needle), "`{needle}` not in {told}");
    }
    let after = observation_of(&events, "browser_get_state");
    assert_eq!(after.len(), 2, "{events:#?}");
    assert!(
        after[1]["observation"].to_string().contains("welcome.html"),
        "the agent reads the page the person reached: {}",
        after[1]["observation"]
    );

    // The agent's next request carries the hand-back as the tool's result.
    let requests = llm.requests();
    let answered = requests
        .iter()
        .position(|r| {
            r["messages"].as_array().is_some_and(|ms| {
                ms.iter().any(|m| {
                    m["role"] == "tool"
                        && m.to_string().contains("handed the browser back")
                        && m.to_string().contains("welcome.html")
                        && m.to_string().contains("Your account")
                        && m.to_string().contains("logged in")
                })
            })
        })
        .unwrap_or_else(|| panic!("no request carries the hand-back: {requests:#?}"));
    assert!(
        requests[answered]["tools"].is_array(),
        "it is the agent's own step"
    );
    assert!(
        llm.violations().is_empty(),
        "LLM request invariants: {:?}",
        llm.violations()
    );

    let control = control_updates(&events);
    let drivers: Vec<&Value> = control.iter().map(|v| &v["driver"]).collect();
    assert_eq!(drivers, [&json!("person"), &json!("agent")], "{control:?}");
    assert_eq!(control[1]["note"], "logged in");

    // A second viewer of the still page gets its picture without waiting for a repaint.
    let mut late = t.ws(&format!("/sockets/browser/{id}")).await;
    let state = recv(&mut late).await;
    assert!(
        state["url"].as_str().unwrap().contains("welcome.html"),
        "{state}"
    );
    let frame = wait_frame(&mut late, "screencast", |v| v["type"] == "frame").await;
    assert_eq!(frame["width"].as_f64(), Some(1280.0));
    drop(ws);
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_browser_socket_refuses_wrong_keys_unknown_and_browserless_conversations() {
    let llm = harness::llm(vec![]);
    let t = TestServer::start().await;
    let with = create_with_browser(&t, &llm).await;
    let without = t.create(&llm, json!({})).await;

    let mut ws = t.ws_as(&format!("/sockets/browser/{with}"), "wrong").await;
    assert_eq!(close_code(&mut ws).await, Some(4001));

    let mut ws = t
        .ws("/sockets/browser/0f0e0d0c-0b0a-4908-8706-050403020100")
        .await;
    assert_eq!(close_code(&mut ws).await, Some(4004));

    let mut ws = t.ws(&format!("/sockets/browser/{without}")).await;
    let refused = recv(&mut ws).await;
    assert_eq!(refused["type"], "error", "{refused}");
    assert!(
        refused["message"].as_str().unwrap().contains("no browser"),
        "{refused}"
    );
    assert_eq!(close_code(&mut ws).await, Some(4004));

    let (s, b) = t
        .get(&format!("/api/conversations/{without}/browser/state"))
        .await;
    assert_eq!(s, 409, "{b}");
    assert!(b.to_string().contains("browser_tool_set"), "{b}");
    let (s, _) = t
        .post(
            &format!("/api/conversations/{without}/browser/take_control"),
            json!({}),
        )
        .await;
    assert_eq!(s, 409);
    // The browser conversation's socket still serves after all that.
    let mut ws = t.ws(&format!("/sockets/browser/{with}")).await;
    assert!(is_state(&recv(&mut ws).await));
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn taking_control_over_rest_pauses_the_run_and_handing_back_resumes_it() {
    let site = serve().await;
    let llm = harness::llm(vec![
        Step::tool_call("browser_navigate", json!({"url": site.url("/")})),
        // Still thinking when the person takes control: the run pauses after this step.
        Step::Reply(Reply {
            tool_calls: vec![ToolCallSpec::new("think", json!({"thought": "what next"}))],
            delay_ms: 4000,
            ..Reply::default()
        }),
        Step::text("done"),
    ]);
    let t = TestServer::start().await;
    let id = create_with_browser(&t, &llm).await;
    t.message(&id, "open the shop", true).await;
    wait_event(&t, &id, "navigate observation", |e| {
        e["kind"] == "ObservationEvent" && e["tool_name"] == "browser_navigate"
    })
    .await;

    let (s, state) = t
        .post(
            &format!("/api/conversations/{id}/browser/take_control"),
            json!({}),
        )
        .await;
    assert_eq!(s, 200, "{state}");
    assert_eq!(state["driver"], "person");
    wait_status(&t, &id, &["paused"]).await;
    // The step in flight lands, and nothing runs after it while the person drives.
    wait_event(&t, &id, "think observation", |e| {
        e["kind"] == "ObservationEvent" && e["tool_name"] == "think"
    })
    .await;
    assert_eq!(t.status(&id).await, "paused");

    // The person moves to the login page over the live view, then hands back.
    let mut ws = t.ws(&format!("/sockets/browser/{id}")).await;
    send(
        &mut ws,
        json!({"type": "navigate", "url": site.url("/login.html")}),
    )
    .await;
    wait_frame(&mut ws, "login state", |v| {
        assert_ne!(
            v["type"], "error",
            "the person's navigation was refused: {v}"
        );
        is_state(v) && v["url"].as_str().unwrap().ends_with("/login.html")
    })
    .await;
    assert_eq!(
        llm.remaining_steps(),
        1,
        "the agent made no request while paused"
    );
    let (s, state) = t
        .post(
            &format!("/api/conversations/{id}/browser/hand_back"),
            json!({"note": "moved on"}),
        )
        .await;
    assert_eq!(s, 200, "{state}");
    assert_eq!(state["driver"], "agent");

    wait_status(&t, &id, &["finished"]).await;
    let events = t.events(&id).await;
    let told = events
        .iter()
        .filter(|e| e["kind"] == "MessageEvent" && e["source"] == "user")
        .map(|e| {
            e["llm_message"]["content"][0]["text"]
                .as_str()
                .unwrap_or("")
        })
        .find(|text| text.starts_with("[browser]"))
        .unwrap_or_else(|| panic!("no [browser] user message: {events:#?}"));
    for needle in ["login.html", "Log in", "Tandem Shop", "moved on"] {
        assert!(told.contains(needle), "`{needle}` not in {told}");
    }
    let last = llm.last_request().unwrap();
    assert!(
        last["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "user" && m.to_string().contains("[browser]")),
        "the resumed agent's request carries the message: {last:#}"
    );
    let drivers: Vec<Value> = control_updates(&events)
        .into_iter()
        .map(|v| v["driver"].clone())
        .collect();
    assert_eq!(drivers, [json!("person"), json!("agent")]);
    t.stop().await;
}
