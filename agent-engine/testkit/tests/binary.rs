//! The `scripted-llm` binary serves a script file or the demo model and says where it listens.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

/// Kills the server when the test ends, pass or fail.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn spawn(args: &[&str]) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scripted-llm"))
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base_url = line
        .trim()
        .strip_prefix("listening on ")
        .expect(&line)
        .to_owned();
    assert!(
        base_url.starts_with("http://127.0.0.1:") && base_url.ends_with("/v1"),
        "{base_url}"
    );
    (Server(child), base_url)
}

async fn post(base_url: &str, body: Value) -> Value {
    reqwest::Client::new()
        .post(format!("{base_url}/chat/completions"))
        .json(&body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

#[tokio::test]
async fn serves_a_script_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("script.json");
    std::fs::write(&path, r#"[{"type": "reply", "text": "from the file"}]"#).unwrap();
    let (_server, base_url) = spawn(&["--script", path.to_str().unwrap()]);
    let body = post(
        &base_url,
        json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(body["choices"][0]["message"]["content"], "from the file");
    let body = post(&base_url, json!({"model": "m", "messages": []})).await;
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exhausted")
    );
}

#[tokio::test]
async fn serves_the_demo() {
    let (_server, base_url) = spawn(&["--port", "0", "--demo"]);
    let body = post(
        &base_url,
        json!({
            "model": "tandem-demo",
            "messages": [{"role": "user", "content": [{"type": "text", "text": "say hi"}]}],
            "tools": [{"type": "function", "function": {"name": "task_tracker"}}],
        }),
    )
    .await;
    assert_eq!(
        body["choices"][0]["message"]["tool_calls"][0]["function"]["name"],
        "task_tracker"
    );
}
