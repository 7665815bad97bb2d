//! Hostile and broken peers on `/sockets/browser/{id}`, on real Chromium: a peer sending
//! garbage, an oversized frame, a flood of input faster than the browser applies it, or never
//! reading is closed (with the reason where it can still be told), and another viewer of the
//! same conversation keeps being served throughout.

use crate::harness;

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use harness::{TestServer, Ws};
use serde_json::{Value, json};
use tandem_testkit::{ScriptedLlmServer, Step};
use tokio_tungstenite::tungstenite::Message as WsMessage;

/// Hang guard for each wait; the tests never assert speed.
const PATIENCE: Duration = Duration::from_secs(90);

/// A page that repaints noise every frame, so the screencast sends large frames non-stop.
const NOISE: &str = "data:text/html,<title>Noise</title><style>body{margin:0}canvas{width:100vw;height:100vh;image-rendering:pixelated}</style><canvas id=c width=320 height=200></canvas><script>const x=document.getElementById('c').getContext('2d');const im=x.createImageData(320,200);function f(){const d=im.data;for(let i=0;i<d.length;i+=4){const v=Math.random()*255|0;d[i]=v;d[i+1]=v^85;d[i+2]=v^170;d[i+3]=255}x.putImageData(im,0,0);requestAnimationFrame(f)}f()</script>";

/// A conversation whose agent opened `url` and now waits for a person (Chromium stays up).
async fn browsing(t: &TestServer, url: &str) -> (ScriptedLlmServer, String) {
    let llm = harness::llm(vec![
        Step::tool_call("browser_navigate", json!({"url": url})),
        Step::tool_call("browser_request_handoff", json!({"reason": "Look"})),
        Step::text("done"),
    ]);
    let mut agent = TestServer::agent(&llm);
    agent["tools"] = json!([{"name": "browser_tool_set"}, {"name": "browser_request_handoff"}]);
    let id = t.create(&llm, json!({"agent": agent})).await;
    t.message(&id, "look", true).await;
    let mut ws = t.ws(&format!("/sockets/browser/{id}")).await;
    wait(&mut ws, "the handoff", |v| {
        v["type"] == "state" && v["handoff"]["reason"] == "Look"
    })
    .await;
    (llm, id)
}

async fn wait(ws: &mut Ws, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
    tokio::time::timeout(PATIENCE, async {
        loop {
            match ws.next().await {
                Some(Ok(WsMessage::Text(t))) => {
                    let v: Value = serde_json::from_str(t.as_str()).unwrap();
                    if pred(&v) {
                        return v;
                    }
                }
                Some(Ok(_)) => {}
                other => panic!("the socket ended while waiting for {what}: {other:?}"),
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no {what}"))
}

/// Reads to the end: the close frame's code and reason, if one came.
async fn closed_with<S, E>(ws: &mut S) -> Option<(u16, String)>
where
    S: futures::Stream<Item = Result<WsMessage, E>> + Unpin,
{
    tokio::time::timeout(PATIENCE, async {
        loop {
            match ws.next().await {
                Some(Ok(WsMessage::Close(Some(f)))) => {
                    return Some((u16::from(f.code), f.reason.to_string()));
                }
                Some(Ok(_)) => {}
                _ => return None,
            }
        }
    })
    .await
    .expect("the server never closed the socket")
}

/// Another viewer of the conversation still gets answers: its take control and hand back
/// come back as state frames.
async fn still_served(t: &TestServer, id: &str) {
    let mut ws = t.ws(&format!("/sockets/browser/{id}")).await;
    let first = wait(&mut ws, "the first state", |v| v["type"] == "state").await;
    if first["driver"] == "person" {
        ws.send(WsMessage::Text(
            json!({"type": "hand_back", "note": ""}).to_string().into(),
        ))
        .await
        .unwrap();
        wait(&mut ws, "the agent driving", |v| {
            v["type"] == "state" && v["driver"] == "agent"
        })
        .await;
    }
    ws.send(WsMessage::Text(
        json!({"type": "take_control"}).to_string().into(),
    ))
    .await
    .unwrap();
    wait(&mut ws, "the person driving", |v| {
        v["type"] == "state" && v["driver"] == "person"
    })
    .await;
    ws.send(WsMessage::Text(
        json!({"type": "hand_back", "note": ""}).to_string().into(),
    ))
    .await
    .unwrap();
    wait(&mut ws, "the agent driving", |v| {
        v["type"] == "state" && v["driver"] == "agent"
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn garbage_and_oversized_frames_close_the_peer_with_the_reason() {
    let site = tandem_testkit::site::serve().await;
    let t = TestServer::start().await;
    let (_llm, id) = browsing(&t, &site.url("/")).await;

    let mut bad = t.ws(&format!("/sockets/browser/{id}")).await;
    for i in 0..40 {
        let _ = bad
            .send(WsMessage::Text(
                format!("{{\"type\": \"nonsense\", \"n\": {i}}}").into(),
            ))
            .await;
    }
    let first_error = wait(&mut bad, "an error frame", |v| v["type"] == "error").await;
    assert!(
        first_error["message"]
            .as_str()
            .unwrap()
            .contains("not a browser frame"),
        "{first_error}"
    );
    let (code, reason) = closed_with(&mut bad).await.expect("a close frame");
    assert_eq!(code, 1008, "{reason}");
    assert!(reason.contains("not browser frames"), "{reason}");

    let mut big = t.ws(&format!("/sockets/browser/{id}")).await;
    let text = json!({"type": "text", "text": "x".repeat(200_000)}).to_string();
    let _ = big.send(WsMessage::Text(text.into())).await;
    let (code, reason) = closed_with(&mut big).await.expect("a close frame");
    assert_eq!(code, 1009, "{reason}");
    assert!(reason.contains("at most"), "{reason}");

    still_served(&t, &id).await;
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_flood_of_input_is_held_back_then_closed_and_others_are_served() {
    let site = tandem_testkit::site::serve().await;
    let t = TestServer::start().await;
    let (_llm, id) = browsing(&t, &site.url("/")).await;

    let mut flood = t.ws(&format!("/sockets/browser/{id}")).await;
    flood
        .send(WsMessage::Text(
            json!({"type": "take_control"}).to_string().into(),
        ))
        .await
        .unwrap();
    wait(&mut flood, "the person driving", |v| {
        v["type"] == "state" && v["driver"] == "person"
    })
    .await;
    let (mut sink, mut stream) = flood.split();
    // Clicks as fast as the socket takes them; the server applies them far slower, stops
    // reading once its queue is full (so these sends start to wait), and then closes.
    let sender = tokio::spawn(async move {
        let click = json!({"type": "mouse", "action": "click", "x": 10, "y": 10}).to_string();
        let mut sent = 0u64;
        loop {
            match tokio::time::timeout(PATIENCE, sink.send(WsMessage::Text(click.clone().into())))
                .await
            {
                Ok(Ok(())) => sent += 1,
                _ => return sent,
            }
        }
    });
    let (code, reason) = closed_with(&mut stream)
        .await
        .expect("a close frame with the reason");
    assert_eq!(code, 1008, "{reason}");
    assert!(
        reason.contains("faster than the browser applies it"),
        "{reason}"
    );
    sender.abort();

    // The flood's queue went with it: the person's control and the other viewers still work.
    still_served(&t, &id).await;
    t.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_peer_that_never_reads_is_closed_while_another_keeps_getting_frames() {
    let t = TestServer::start().await;
    let (_llm, id) = browsing(&t, NOISE).await;

    // Authenticates, then never reads again (a small receive buffer, so the server's sends
    // back up soon).
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let stream = sock.connect(t.addr).await.unwrap();
    let (mut silent, _) =
        tokio_tungstenite::client_async(t.ws_url(&format!("/sockets/browser/{id}")), stream)
            .await
            .unwrap();
    silent
        .send(WsMessage::Text(
            json!({"type": "auth", "session_api_key": harness::KEY})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
    let mut watcher = t.ws(&format!("/sockets/browser/{id}")).await;
    let frames = tokio::time::timeout(PATIENCE, async {
        let mut n = 0;
        // A viewer that reads sees frames the whole time the silent one is stuck.
        let until = tokio::time::Instant::now() + harness_stall() + Duration::from_secs(30);
        while tokio::time::Instant::now() < until {
            match watcher.next().await {
                Some(Ok(WsMessage::Text(t))) if t.as_str().contains("\"type\":\"frame\"") => {
                    n += 1;
                }
                Some(Ok(WsMessage::Close(f))) => panic!("the reading viewer was closed: {f:?}"),
                Some(Ok(_)) => {}
                other => panic!("the reading viewer's socket ended: {other:?}"),
            }
        }
        n
    })
    .await
    .expect("the reading viewer stalled");
    assert!(frames > 0, "the reading viewer got no frame");
    // Now read what the silent peer was sent: it ends (the server gave up on it) instead of
    // streaming for ever.
    let mut read = 0usize;
    let ended = tokio::time::timeout(PATIENCE, async {
        loop {
            match silent.next().await {
                Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => return,
                Some(Ok(_)) => read += 1,
            }
        }
    })
    .await;
    assert!(
        ended.is_ok(),
        "the socket of a peer that never read was still open ({read} frames read)"
    );
    still_served(&t, &id).await;
    t.stop().await;
}

/// The server's limit for a frame not taken (`SEND_STALL` in `sockets/browser.rs`).
fn harness_stall() -> Duration {
    Duration::from_secs(10)
}
