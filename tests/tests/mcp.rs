//! MCP servers as the agent's tools, black-box: `tandem run --mcp-config FILE` and `tandem
//! serve` with `mcp_config` in the agent spec, driven by a scripted LLM that calls the real
//! server-everything's tools; the model's next request holds the result. `POST /api/mcp/test`
//! lists a server's tools or says why it cannot. The npm servers come from the cache
//! `scripts/setup.sh` fills (a skip with a message without it, a failure with
//! TANDEM_REQUIRE_MCP=1).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use tandem_e2e::{KEY, TandemServer, tandem_bin};
use tandem_protocol::{AgentSpec, ExecutionStatus, LlmConfig, Message};
use tandem_sdk::ConversationClient;
use tandem_sdk::remote::{RemoteConversationOptions, RemoteWorkspace};
use tandem_testkit::{Script, ScriptedLlmServer, Step};

/// server-everything's entry script in the npm cache, or `None` (skip) when not installed.
fn everything() -> Option<PathBuf> {
    let dir = tandem_testkit::mcp_servers::servers_dir()?;
    Some(PathBuf::from(tandem_testkit::mcp_servers::entry(
        &dir,
        "server-everything",
    )))
}

fn stdio(entry: &Path) -> Value {
    json!({"command": "node", "args": [entry.to_string_lossy(), "stdio"]})
}

/// The names of the tools offered in an LLM request.
fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().or(t["name"].as_str()))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The agent's requests (with tools; title requests have none).
fn agent_requests(llm: &ScriptedLlmServer) -> Vec<Value> {
    llm.requests()
        .into_iter()
        .filter(|r| r.get("tools").is_some())
        .collect()
}

#[test]
fn tandem_run_with_an_mcp_config_file() {
    let Some(entry) = everything() else { return };
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let config = dir.path().join("mcp.json");
    let servers = json!({"mcpServers": {
        "everything": stdio(&entry),
        "broken": {"command": "/no/such/mcp-server"},
    }});
    std::fs::write(&config, servers.to_string()).unwrap();
    // Two servers: upstream prefixes each tool with its server's name.
    let llm = ScriptedLlmServer::start(
        Script::new([
            Step::tool_call(
                "everything_echo",
                json!({"message": "hello from the model", "security_risk": "LOW"}),
            ),
            Step::tool_call("finish", json!({"message": "done"})),
        ])
        .with_no_tools_text("MCP run"),
    );
    let out = Command::new(tandem_bin().unwrap())
        .args(["run", "echo through MCP", "--workspace"])
        .arg(&work)
        .arg("--mcp-config")
        .arg(&config)
        .args([
            "--model",
            "openai/fake",
            "--base-url",
            &llm.base_url(),
            "--api-key",
            "x",
        ])
        .env("TANDEM_HOME", dir.path().join("home"))
        .env_remove("TANDEM_SERVER_URL")
        .env_remove("LLM_MODEL")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{stdout}\nstderr:\n{stderr}"
    );
    assert!(
        stderr.contains("warning: MCP server `broken`: could not start `/no/such/mcp-server`"),
        "a server that cannot start is named: {stderr}"
    );
    assert!(stdout.contains("▶ everything_echo"), "{stdout}");
    let requests = agent_requests(&llm);
    let first = tool_names(&requests[0]);
    assert!(first.iter().any(|n| n == "everything_get-sum"), "{first:?}");
    let last = requests.last().unwrap().to_string();
    assert!(
        last.contains("Echo: hello from the model"),
        "the result reaches the model: {last}"
    );

    // A file that is not an MCP config: one line, exit 2.
    std::fs::write(&config, "{\"mcpServers\": [1]}").unwrap();
    let out = Command::new(tandem_bin().unwrap())
        .args(["run", "x", "--llm", "demo", "--mcp-config"])
        .arg(&config)
        .env("TANDEM_HOME", dir.path().join("home"))
        .env_remove("TANDEM_SERVER_URL")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--mcp-config") && stderr.contains("mcpServers"),
        "{stderr}"
    );
}

#[tokio::test]
async fn tandem_serve_with_mcp_config_and_filter_tools_regex() {
    let Some(entry) = everything() else { return };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let server = tokio::task::spawn_blocking(move || TandemServer::start(&home, &[]))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{e:#}"));
    let llm = ScriptedLlmServer::start(
        Script::new([
            Step::tool_call("get-sum", json!({"a": 19, "b": 23, "security_risk": "LOW"})),
            Step::tool_call("finish", json!({"message": "done"})),
        ])
        .with_no_tools_text("MCP serve"),
    );
    let mut config = LlmConfig::new("openai/fake");
    config.base_url = Some(llm.base_url());
    config.api_key = Some("x".into());
    config.num_retries = 0;
    let mut spec = AgentSpec::default_for(config);
    let mut everything = stdio(&entry);
    everything["env"] = json!({"EVERYTHING_TOKEN": "tok-mcp-secret-9"});
    spec.mcp_config = Some(json!({"mcpServers": {"everything": everything}}));
    // Applied to the spec's tools and the MCP tools, not to the built-ins (as upstream).
    spec.filter_tools_regex = Some("terminal$|echo|get-sum".into());
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let ws = RemoteWorkspace::connect(&server.url, Some(KEY.into()), work.to_string_lossy())
        .await
        .unwrap();
    let conv = ws
        .create_conversation(&RemoteConversationOptions::new(spec))
        .await
        .unwrap();
    conv.send_message(Message::user("add 19 and 23"), false)
        .await
        .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(120), conv.run_to_end())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status, ExecutionStatus::Finished);
    let requests = agent_requests(&llm);
    let mut names = tool_names(&requests[0]);
    names.sort();
    assert_eq!(names, ["echo", "finish", "get-sum", "terminal", "think"]);
    let last = requests.last().unwrap().to_string();
    assert!(
        last.contains("The sum of 19 and 23 is 42"),
        "the result reaches the model: {last}"
    );
    // The server's environment secret never comes back: not in the conversation's info, not in
    // its events, not to the model.
    let http = reqwest::Client::new();
    for path in ["", "/events/search?limit=100"] {
        let url = format!("{}/api/conversations/{}{path}", server.url, conv.id());
        let body = http
            .get(url)
            .header("X-Session-API-Key", KEY)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(!body.contains("tok-mcp-secret-9"), "{path}: {body}");
        if path.is_empty() {
            let info: Value = serde_json::from_str(&body).unwrap();
            let env = &info["agent"]["mcp_config"]["mcpServers"]["everything"]["env"];
            assert_eq!(env["EVERYTHING_TOKEN"], "**********", "{info}");
        }
    }
    assert!(
        !requests
            .iter()
            .any(|r| r.to_string().contains("tok-mcp-secret-9"))
    );
}

#[tokio::test]
async fn api_mcp_test_lists_tools_or_says_why_not() {
    let Some(entry) = everything() else { return };
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let server = tokio::task::spawn_blocking(move || TandemServer::start(&home, &[]))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{e:#}"));
    let http = reqwest::Client::new();
    let post = |body: Value| {
        http.post(format!("{}/api/mcp/test", server.url))
            .header("X-Session-API-Key", KEY)
            .json(&body)
            .send()
    };
    let r = post(json!({"name": "everything", "server": {"type": "stdio", "command": "node", "args": [entry.to_string_lossy(), "stdio"]}}))
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["ok"], true, "{body}");
    assert!(
        body["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "echo"),
        "{body}"
    );

    let r =
        post(json!({"name": "probe", "server": {"command": "/no/such/mcp-server"}, "timeout": 5}))
            .await
            .unwrap();
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["ok"], false, "{body}");
    assert_eq!(body["error_kind"], "connection", "{body}");
    let error = body["error"].as_str().unwrap();
    assert!(
        error.contains("`probe`") && error.contains("/no/such/mcp-server"),
        "{error}"
    );

    let r =
        post(json!({"server": {"type": "http", "url": "http://127.0.0.1:9/mcp"}, "timeout": 5}))
            .await
            .unwrap();
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        (body["ok"].as_bool(), body["error_kind"].as_str()),
        (Some(false), Some("connection")),
        "{body}"
    );

    let r = post(json!({"server": {"args": []}})).await.unwrap();
    assert_eq!(r.status(), 422);
    let body: Value = r.json().await.unwrap();
    assert_eq!(
        body["detail"][0]["loc"],
        json!(["body", "server"]),
        "{body}"
    );
}

#[tokio::test]
async fn a_server_that_fails_on_tandem_serve_is_recorded_on_the_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let server = tokio::task::spawn_blocking(move || TandemServer::start(&home, &[]))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{e:#}"));
    let mut spec = AgentSpec::default_for(LlmConfig::new("openai/fake"));
    spec.mcp_config = Some(json!({"mcpServers": {"broken": {"command": "/no/such/mcp-server"}}}));
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let ws = RemoteWorkspace::connect(&server.url, Some(KEY.into()), work.to_string_lossy())
        .await
        .unwrap();
    let conv = ws
        .create_conversation(&RemoteConversationOptions::new(spec))
        .await
        .unwrap();
    let page: Value = reqwest::Client::new()
        .get(format!(
            "{}/api/conversations/{}/events/search",
            server.url,
            conv.id()
        ))
        .header("X-Session-API-Key", KEY)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let recorded = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "ConversationStateUpdateEvent" && e["key"] == "mcp_warnings")
        .unwrap_or_else(|| panic!("no mcp_warnings event: {page}"));
    let warning = recorded["value"][0].as_str().unwrap();
    assert!(
        warning.contains("MCP server `broken`: could not start"),
        "{warning}"
    );
}
