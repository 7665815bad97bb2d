//! Bad input: every protected route refuses a missing key (401 or close 4001), enumerated from
//! the route table so a new route cannot be forgotten; unknown ids 404; schema-invalid bodies
//! 422 naming the field; oversized bodies 413; paths outside the workspace 403; the socket
//! auth timeout and 4004.

use crate::harness;

use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use harness::{KEY, TestServer, close_code};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tandem_server::routes::{Auth, route_docs};
use tandem_testkit::{Reply, Step};
use tower::ServiceExt;

const CID: &str = "7d7e7f80-0000-4000-8000-000000000001";

fn concrete(path: &str) -> String {
    path.replace("{conversation_id}", CID)
        .replace("{event_id}", "e1")
        .replace("{command_id}", "c1")
        .replace("{name}", "N")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_protected_route_refuses_a_missing_or_wrong_key() {
    let t = TestServer::start().await;
    let docs = route_docs();
    assert!(docs.len() > 50, "the table lists every route");
    let app = t.server.router();
    for d in &docs {
        let path = concrete(d.path);
        match d.auth {
            Auth::Key | Auth::Bearer => {
                for key in [None, Some("wrong")] {
                    let mut req = Request::builder().method(d.method).uri(&path);
                    if let Some(k) = key {
                        req = req.header("X-Session-API-Key", k);
                    }
                    let resp = app
                        .clone()
                        .oneshot(req.body(Body::empty()).unwrap())
                        .await
                        .unwrap();
                    assert_eq!(
                        resp.status(),
                        401,
                        "{} {} with key {key:?}",
                        d.method,
                        d.path
                    );
                    let body: Value = serde_json::from_slice(
                        &resp.into_body().collect().await.unwrap().to_bytes(),
                    )
                    .unwrap();
                    if d.auth == Auth::Key {
                        assert_eq!(body, json!({"detail": "Unauthorized"}));
                    } else {
                        assert_eq!(body["error"]["type"], "authentication_error");
                    }
                }
            }
            Auth::Socket => {
                // A wrong first frame: close 4001.
                let mut ws = t.ws_as(&path, "wrong").await;
                assert_eq!(close_code(&mut ws).await, Some(4001), "{}", d.path);
                // A wrong key in the header: close 4001 too.
                let req =
                    tokio_tungstenite::tungstenite::client::IntoClientRequest::into_client_request(
                        t.ws_url(&path),
                    )
                    .unwrap();
                let mut req = req;
                req.headers_mut()
                    .insert("X-Session-API-Key", "wrong".parse().unwrap());
                let (mut ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
                assert_eq!(close_code(&mut ws).await, Some(4001), "{} (header)", d.path);
            }
            Auth::None => {
                let resp = app
                    .clone()
                    .oneshot(
                        Request::builder()
                            .method(d.method)
                            .uri(&path)
                            .body(Body::empty())
                            .unwrap(),
                    )
                    .await
                    .unwrap();
                assert_eq!(resp.status(), 200, "{} is open", d.path);
            }
        }
    }
    // The OpenAPI document lists exactly the table.
    let (s, doc) = t.get("/openapi.json").await;
    assert_eq!(s, 200);
    let n: usize = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .map(|p| p.as_object().unwrap().len())
        .sum();
    assert_eq!(n, docs.len());
    assert!(
        doc["paths"]["/sockets/pty/{conversation_id}"]["get"]["description"]
            .as_str()
            .unwrap()
            .contains("Tandem")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn socket_auth_timeout_and_unknown_conversation() {
    let t = TestServer::start().await;
    let mut ws = t.ws(&format!("/sockets/events/{CID}")).await;
    assert_eq!(close_code(&mut ws).await, Some(4004));
    let (mut ws, _) = tokio_tungstenite::connect_async(
        t.ws_url(&format!("/sockets/events/{CID}?session_api_key={KEY}")),
    )
    .await
    .unwrap();
    assert_eq!(
        close_code(&mut ws).await,
        Some(4004),
        "the deprecated query key works"
    );
    let started = std::time::Instant::now();
    let (mut ws, _) = tokio_tungstenite::connect_async(t.ws_url(&format!("/sockets/events/{CID}")))
        .await
        .unwrap();
    assert_eq!(close_code(&mut ws).await, Some(4001));
    assert!(
        started.elapsed() >= Duration::from_secs(9),
        "the auth frame may take 10 s"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_oversized_socket_message_ends_that_socket_and_nothing_else() {
    use futures::SinkExt;
    use tokio_tungstenite::tungstenite::Message as WsMessage;
    let llm = harness::llm(vec![Step::tool_call("finish", json!({"message": "ok"}))]);
    let t = TestServer::start().await;
    let id = t.create(&llm, json!({})).await;
    let mut pty = t.ws(&format!("/sockets/pty/{id}")).await;
    let huge = vec![b'x'; tandem_server::SOCKET_MAX_MESSAGE + 1];
    // The server may cut the connection while the frame is still being written.
    let _ = pty.send(WsMessage::Binary(huge.into())).await;
    let _ = close_code(&mut pty).await;
    assert!(
        tokio::time::timeout(Duration::from_secs(60), futures::StreamExt::next(&mut pty))
            .await
            .expect("the socket stayed open after an oversized message")
            .is_none_or(|m| m.is_err()),
        "the socket kept going after an oversized message"
    );
    // The server keeps serving: another socket and the REST API still answer.
    let mut again = t.ws(&format!("/sockets/pty/{id}")).await;
    again
        .send(WsMessage::Text(
            json!({"type": "input", "data": "echo still-$((6*7))\n"})
                .to_string()
                .into(),
        ))
        .await
        .unwrap();
    harness::pty_until(&mut again, "still-42").await;
    let (status, _) = t.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(status, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn not_found_validation_too_large_forbidden() {
    let llm = harness::llm(vec![Step::Reply(Reply::text("ok"))]);
    let t = TestServer::start_with(|c| c.max_body_bytes = 64 * 1024).await;
    for (m, p) in [
        ("GET", format!("/api/conversations/{CID}")),
        ("POST", format!("/api/conversations/{CID}/run")),
        ("DELETE", format!("/api/conversations/{CID}")),
        ("GET", format!("/api/conversations/{CID}/events/search")),
    ] {
        let (s, b) = t.req(m.parse().unwrap(), &p, None).await;
        assert_eq!((s, b), (404, json!({"detail": "Not Found"})), "{m} {p}");
    }
    let (s, b) = t.get("/api/conversations/not-a-uuid").await;
    assert_eq!(s, 422);
    assert_eq!(b["detail"][0]["type"], "uuid_parsing");
    assert_eq!(b["detail"][0]["loc"], json!(["path", "conversation_id"]));
    // A missing field, a wrong type, a broken body, a bad query.
    let (s, b) = t
        .post(
            "/api/conversations",
            json!({"workspace": {"working_dir": "/tmp"}}),
        )
        .await;
    assert_eq!(s, 422);
    assert_eq!(b["detail"][0]["loc"], json!(["body", "agent"]));
    assert_eq!(b["detail"][0]["type"], "missing");
    let mut agent = TestServer::agent(&llm);
    agent["llm"]["num_retries"] = json!("many");
    let (s, b) = t.post("/api/conversations", json!({"agent": agent})).await;
    assert_eq!(s, 422);
    assert_eq!(
        b["detail"][0]["loc"],
        json!(["body", "agent", "llm", "num_retries"])
    );
    let mut agent = TestServer::agent(&llm);
    agent["tools"] = json!([{"name": "terminal"}, {"name": "warp_drive"}]);
    let (s, b) = t.post("/api/conversations", json!({"agent": agent})).await;
    assert_eq!(s, 422);
    assert_eq!(
        b["detail"][0]["loc"],
        json!(["body", "agent", "tools", "1", "name"])
    );
    let resp = t
        .http
        .post(t.url("/api/conversations"))
        .header("X-Session-API-Key", KEY)
        .header("content-type", "application/json")
        .body("{oops")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 422);
    let (s, b) = t.get("/api/conversations/search?limit=1000").await;
    assert_eq!(s, 422);
    assert_eq!(b["detail"][0]["loc"], json!(["query", "limit"]));

    let id = t.create(&llm, json!({})).await;
    let (s, b) = t
        .post(
            &format!("/api/conversations/{id}/events"),
            json!({"role": "user", "content": "not a list"}),
        )
        .await;
    assert_eq!(s, 422);
    assert_eq!(b["detail"][0]["loc"], json!(["body", "content"]));
    let (s, _) = t
        .get(&format!("/api/conversations/{id}/events/no-such-event"))
        .await;
    assert_eq!(s, 404);
    let huge = "x".repeat(100 * 1024);
    let (s, b) = t
        .post(
            &format!("/api/conversations/{id}/events"),
            json!({"role": "user", "content": [{"type": "text", "text": huge}]}),
        )
        .await;
    assert_eq!(s, 413, "{b}");

    // Paths outside the workspace: `..`, absolute elsewhere, a symlink leading out.
    std::os::unix::fs::symlink("/etc", t.workspace.join("etc-link")).unwrap();
    for p in ["../outside.txt", "/etc/passwd", "etc-link/passwd"] {
        let (s, b) = t
            .get(&format!("/api/conversations/{id}/workspace/file?path={p}"))
            .await;
        assert_eq!(s, 403, "{p}: {b}");
        let (s, _) = t
            .req(
                reqwest::Method::PUT,
                &format!("/api/conversations/{id}/workspace/file"),
                Some(json!({"path": p, "content": "x"})),
            )
            .await;
        assert_eq!(s, 403, "{p}");
        let (s, _) = t
            .get(&format!("/api/conversations/{id}/file/download?path={p}"))
            .await;
        assert_eq!(s, 403, "{p}");
    }
}
