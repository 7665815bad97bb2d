//! Bad input of the kinds a schema fuzzer (schemathesis over our own OpenAPI document) sends:
//! every workspace and file route answers a 4xx naming the field for an empty path, a folder
//! where a file belongs (the workspace root included) and the other way round, NUL bytes and
//! names too long for the file system; a relative bash `cwd` means a folder of the workspace
//! and nothing is created in the server's own working directory; `ask_agent` with an LLM that
//! cannot be reached answers a 502 naming the problem instead of holding the request through
//! the agent's whole retry schedule.

use crate::harness;

use std::time::Duration;

use harness::{KEY, TestServer};
use reqwest::Method;
use serde_json::{Value, json};
use tandem_testkit::{Reply, Step};

/// `(status, body)` of a multipart upload of `bytes` to `path`.
async fn upload(t: &TestServer, path: &str, bytes: &[u8]) -> (u16, Value) {
    let form = reqwest::multipart::Form::new().part(
        "file",
        reqwest::multipart::Part::bytes(bytes.to_vec()).file_name("f.bin"),
    );
    let resp = t
        .http
        .post(t.url(path))
        .header("X-Session-API-Key", KEY)
        .multipart(form)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn q(raw: &str) -> String {
    let mut s = String::new();
    for b in raw.bytes() {
        if b.is_ascii_alphanumeric() || b"-_./".contains(&b) {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// A 422 whose first item names `loc`.
fn assert_names(what: &str, (status, body): &(u16, Value), loc: &[&str]) {
    assert_eq!(*status, 422, "{what}: {body}");
    assert_eq!(body["detail"][0]["loc"], json!(loc), "{what}: {body}");
    assert!(
        !body["detail"][0]["msg"].as_str().unwrap_or("").is_empty(),
        "{what}: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn workspace_and_file_routes_name_the_bad_path() {
    let llm = harness::llm(vec![]);
    let t = TestServer::start().await;
    let id = t.create(&llm, json!({})).await;
    std::fs::create_dir_all(t.workspace.join("sub")).unwrap();
    std::fs::write(t.workspace.join("f.txt"), "text").unwrap();
    let root = t.workspace.to_string_lossy().into_owned();
    let long_name = "n".repeat(300);
    let long_path = "d/".repeat(2100);

    // Not a file the editor can write: empty, the root itself, a folder, under a file, a NUL
    // byte, a name or a path too long.
    let put = format!("/api/conversations/{id}/workspace/file");
    for bad in [
        "",
        ".",
        root.as_str(),
        "sub",
        "f.txt/child.txt",
        "a\0b.txt",
        long_name.as_str(),
        long_path.as_str(),
    ] {
        let got = t
            .req(
                Method::PUT,
                &put,
                Some(json!({"path": bad, "content": "x"})),
            )
            .await;
        assert_names(&format!("PUT {bad:.40}"), &got, &["body", "path"]);
    }
    // The folder and the file are untouched; a good path still writes.
    assert!(t.workspace.join("sub").is_dir());
    assert_eq!(
        std::fs::read_to_string(t.workspace.join("f.txt")).unwrap(),
        "text"
    );
    let (s, b) = t
        .req(
            Method::PUT,
            &put,
            Some(json!({"path": "new/ok.txt", "content": "ok"})),
        )
        .await;
    assert_eq!(s, 200, "{b}");

    // Reading: the same class, on the query parameter; a missing file stays a 404.
    for bad in [
        "",
        ".",
        root.as_str(),
        "sub",
        "f.txt/child",
        "a\0b",
        long_name.as_str(),
    ] {
        for route in ["workspace/file", "file/download"] {
            let got = t
                .get(&format!("/api/conversations/{id}/{route}?path={}", q(bad)))
                .await;
            assert_names(&format!("GET {route} {bad:.40}"), &got, &["query", "path"]);
        }
    }
    let (s, _) = t
        .get(&format!(
            "/api/conversations/{id}/workspace/file?path=missing.txt"
        ))
        .await;
    assert_eq!(s, 404);

    // The tree of a file, of a bad path (an empty `?path=` is no path: the whole tree).
    for bad in ["f.txt", "a\0b"] {
        let got = t
            .get(&format!(
                "/api/conversations/{id}/workspace/tree?path={}",
                q(bad)
            ))
            .await;
        assert_names(&format!("tree {bad:?}"), &got, &["query", "path"]);
    }
    let (s, _) = t
        .get(&format!(
            "/api/conversations/{id}/workspace/tree?path=nowhere"
        ))
        .await;
    assert_eq!(s, 404);
    let (s, tree) = t
        .get(&format!("/api/conversations/{id}/workspace/tree?path=."))
        .await;
    assert_eq!(s, 200, "{tree}");

    // Uploads onto a folder, the root or an empty path.
    for bad in ["", ".", "sub", "f.txt/x", "a\0b"] {
        let got = upload(
            &t,
            &format!("/api/conversations/{id}/file/upload?path={}", q(bad)),
            b"data",
        )
        .await;
        assert_names(&format!("upload {bad:?}"), &got, &["query", "path"]);
    }
    // A relative upload path lands in the workspace.
    let (s, b) = upload(
        &t,
        &format!("/api/conversations/{id}/file/upload?path=up/here.bin"),
        b"data",
    )
    .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        std::fs::read(t.workspace.join("up/here.bin")).unwrap(),
        b"data"
    );

    // The server-level routes: absolute paths only, and a folder is not a file.
    let dir = t.home.path().to_string_lossy().into_owned();
    for bad in ["", "relative.txt", "/", dir.as_str(), "/tmp/a\0b"] {
        let got = upload(&t, &format!("/api/file/upload?path={}", q(bad)), b"x").await;
        assert_names(&format!("server upload {bad:?}"), &got, &["query", "path"]);
        let got = t.get(&format!("/api/file/download?path={}", q(bad))).await;
        assert_names(
            &format!("server download {bad:?}"),
            &got,
            &["query", "path"],
        );
    }

    // Still serving.
    let (s, _) = t.get("/health").await;
    assert_eq!(s, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_relative_bash_cwd_is_a_folder_of_the_workspace() {
    let llm = harness::llm(vec![]);
    let t = TestServer::start().await;
    let server_ws = t.home.path().join("workspace");
    let name = format!("rel-cwd-{}", std::process::id());

    // A relative folder that does not exist: a 422 naming `cwd`, and nothing created, neither
    // here (the server's working directory) nor in the workspace.
    for route in [
        "/api/bash/start_bash_command",
        "/api/bash/execute_bash_command",
    ] {
        let got = t.post(route, json!({"command": "true", "cwd": name})).await;
        assert_names(route, &got, &["body", "cwd"]);
    }
    assert!(!std::env::current_dir().unwrap().join(&name).exists());
    assert!(!server_ws.join(&name).exists());

    // One that exists runs there.
    std::fs::create_dir_all(server_ws.join(&name)).unwrap();
    let (s, out) = t
        .post(
            "/api/bash/execute_bash_command",
            json!({"command": "pwd", "cwd": name}),
        )
        .await;
    assert_eq!(s, 200, "{out}");
    let pwd = std::path::PathBuf::from(out["stdout"].as_str().unwrap().trim());
    assert_eq!(
        pwd.canonicalize().unwrap(),
        server_ws.join(&name).canonicalize().unwrap()
    );

    // Per conversation: relative to the conversation's workspace.
    let id = t.create(&llm, json!({})).await;
    std::fs::create_dir_all(t.workspace.join("inner")).unwrap();
    std::fs::write(t.workspace.join("file.txt"), "x").unwrap();
    let (s, out) = t
        .post(
            &format!("/api/conversations/{id}/bash/execute_bash_command"),
            json!({"command": "pwd", "cwd": "inner"}),
        )
        .await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(
        std::path::PathBuf::from(out["stdout"].as_str().unwrap().trim())
            .canonicalize()
            .unwrap(),
        t.workspace.join("inner").canonicalize().unwrap()
    );
    for bad in ["", "file.txt", "../elsewhere", "missing", "a\0b"] {
        let got = t
            .post(
                &format!("/api/conversations/{id}/bash/start_bash_command"),
                json!({"command": "true", "cwd": bad}),
            )
            .await;
        assert_names(&format!("cwd {bad:?}"), &got, &["body", "cwd"]);
    }
    assert!(!t.workspace.join("missing").exists());
    // Without a cwd: the workspace, as before.
    let (s, out) = t
        .post(
            &format!("/api/conversations/{id}/bash/execute_bash_command"),
            json!({"command": "pwd"}),
        )
        .await;
    assert_eq!(s, 200, "{out}");
    assert_eq!(
        std::path::PathBuf::from(out["stdout"].as_str().unwrap().trim())
            .canonicalize()
            .unwrap(),
        t.workspace.canonicalize().unwrap()
    );
}

/// A conversation whose agent retries its LLM `retries` times, `min_wait`..`max_wait` s apart.
async fn conversation_with_llm(
    t: &TestServer,
    base_url: &str,
    retries: u32,
    min_wait: f64,
    max_wait: f64,
) -> String {
    let mut agent = json!({
        "llm": {"model": "openai/fake", "api_key": "sk-x", "base_url": base_url,
                "num_retries": retries, "retry_min_wait": min_wait, "retry_max_wait": max_wait,
                "usage_id": "agent"},
        "tools": [{"name": "terminal", "params": {}}],
        "kind": "Agent"
    });
    agent["include_default_tools"] = json!(["FinishTool"]);
    let (s, info) = t
        .post(
            "/api/conversations",
            json!({"agent": agent, "workspace": {"kind": "LocalWorkspace", "working_dir": t.workspace.to_string_lossy()}}),
        )
        .await;
    assert_eq!(s, 201, "{info}");
    info["id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ask_agent_with_an_unreachable_llm_answers_a_clear_error() {
    let t = TestServer::start().await;
    // A port nothing listens on.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    // The agent's own schedule: 5 retries 8–64 s apart, minutes in all.
    let id = conversation_with_llm(&t, &format!("http://127.0.0.1:{port}/v1"), 5, 8.0, 64.0).await;
    let resp = t
        .http
        .post(t.url(&format!("/api/conversations/{id}/ask_agent")))
        .header("X-Session-API-Key", KEY)
        .json(&json!({"question": "what is going on?"}))
        // A hang guard only: the agent's schedule alone would take over 3 minutes.
        .timeout(Duration::from_secs(100))
        .send()
        .await
        .expect("ask_agent answers before the agent's retry schedule ends");
    let status = resp.status().as_u16();
    let body: Value = resp.json().await.unwrap();
    assert_eq!(status, 502, "{body}");
    assert_eq!(body["code"], "upstream_error", "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("LLM") && detail.contains("connection"),
        "{detail}"
    );
    // The conversation is untouched and the server keeps serving.
    let (s, info) = t.get(&format!("/api/conversations/{id}")).await;
    assert_eq!(s, 200);
    assert_eq!(info["execution_status"], "idle");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ask_agent_retries_a_failing_llm_once() {
    let llm = harness::llm(vec![
        Step::error(503, "overloaded"),
        Step::error(503, "overloaded"),
        Step::Reply(Reply::text("all quiet")),
    ]);
    let t = TestServer::start().await;
    // The agent would try six times; ask_agent tries twice.
    let id = conversation_with_llm(&t, &llm.base_url(), 5, 0.0, 0.0).await;
    let ask = format!("/api/conversations/{id}/ask_agent");
    let (s, body) = t.post(&ask, json!({"question": "still there?"})).await;
    assert_eq!(s, 502, "{body}");
    let detail = body["detail"].as_str().unwrap();
    assert!(
        detail.contains("503") && detail.contains("overloaded"),
        "{detail}"
    );
    assert_eq!(llm.request_count(), 2);
    // The next question gets the answer, asked with the agent's own key.
    let (s, body) = t.post(&ask, json!({"question": "and now?"})).await;
    assert_eq!((s, body), (200, json!({"response": "all quiet"})));
    let last = llm.captured().pop().unwrap();
    assert_eq!(last.headers["authorization"], "Bearer sk-x");
}
