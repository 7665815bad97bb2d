//! The official OpenHands SDK client (openhands-sdk 1.58.2 from PyPI, unchanged) drives
//! `tandem serve` through create → message → run → AlwaysConfirm reject/accept → pause →
//! interrupt → secrets → ask_agent → title → delete, and runs an agent with upstream's
//! `browser_tool_set` on Tandem's Chromium; `tests/compat/official_client.py` asserts each
//! outcome and these tests show its output when one fails.

use std::time::Duration;

use serde_json::json;
use tandem_e2e::{KEY, TandemServer, run_python};
use tandem_testkit::{Reply, Script, ScriptedLlmServer, Step, ToolCallSpec};

fn slow(name: &str, args: serde_json::Value, delay_ms: u64) -> Step {
    Step::Reply(Reply {
        tool_calls: vec![ToolCallSpec::new(name, args)],
        delay_ms,
        ..Reply::default()
    })
}

#[test]
fn official_client_drives_tandem_serve() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("project");
    std::fs::create_dir_all(&work).unwrap();
    let term = |c: &str| Step::tool_call("terminal", json!({"command": c, "security_risk": "LOW"}));
    let finish = |m: &str| Step::tool_call("finish", json!({"message": m}));
    let llm = ScriptedLlmServer::start(
        Script::new([
            term("echo hello-tandem"),
            finish("first done"),
            term("echo rejected-cmd"),
            term("echo accepted-cmd"),
            finish("confirm done"),
            slow(
                "terminal",
                json!({"command": "echo slow-1", "security_risk": "LOW"}),
                1500,
            ),
            finish("pause done"),
            slow(
                "terminal",
                json!({"command": "echo never-runs", "security_risk": "LOW"}),
                3000,
            ),
            finish("interrupt done"),
            term("echo $MY_TOKEN"),
            finish("secret done"),
            Step::text("I echoed things."),
            finish("fork done"),
        ])
        .with_no_tools_text("Compat run"),
    );
    let server =
        TandemServer::start(&dir.path().join("home"), &[]).unwrap_or_else(|e| panic!("{e:#}"));
    let out = run_python(
        "official_client.py",
        &[&server.url, KEY, &llm.base_url(), &work.to_string_lossy()],
        &[],
        Duration::from_secs(150),
    )
    .unwrap_or_else(|e| panic!("the official client failed against tandem serve:\n{e:#}"));
    assert!(out.contains("ALL OK"), "{out}");
    assert!(
        llm.violations().is_empty(),
        "LLM request invariants: {:?}",
        llm.violations()
    );
}

/// Serves one page, "Tandem Shop", on 127.0.0.1 until the test ends.
fn serve_page() -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let body = "<!doctype html><html><head><title>Tandem Shop</title></head>\
                    <body><h1>Welcome</h1><a href=\"/login.html\">Log in</a></body></html>";
        // A thread per connection: Chromium may open one it sends nothing on.
        for mut stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut buf = [0u8; 8192];
                let _ = stream.read(&mut buf);
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
            });
        }
    });
    url
}

#[test]
fn official_client_runs_a_browser_conversation() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("project");
    std::fs::create_dir_all(&work).unwrap();
    let site = serve_page();
    let llm = ScriptedLlmServer::start(
        Script::new([
            Step::tool_call("browser_navigate", json!({"url": site})),
            Step::tool_call("browser_get_state", json!({"include_screenshot": false})),
            Step::text("The shop is open."),
        ])
        .with_no_tools_text("Compat browser run"),
    );
    let server =
        TandemServer::start(&dir.path().join("home"), &[]).unwrap_or_else(|e| panic!("{e:#}"));
    let out = run_python(
        "official_client.py",
        &[
            "browser",
            &server.url,
            KEY,
            &llm.base_url(),
            &work.to_string_lossy(),
            &site,
        ],
        &[],
        Duration::from_secs(120),
    )
    .unwrap_or_else(|e| panic!("the official client failed with browser_tool_set:\n{e:#}"));
    assert!(out.contains("ALL OK"), "{out}");
    assert!(
        llm.violations().is_empty(),
        "LLM request invariants: {:?}",
        llm.violations()
    );
}

#[test]
fn official_client_runs_mcp_servers_glob_and_sub_agents() {
    let Some(servers) = tandem_testkit::mcp_servers::servers_dir() else {
        return;
    };
    let everything = tandem_testkit::mcp_servers::entry(&servers, "server-everything");
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("project");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("notes.txt"), "remember the milk\n").unwrap();
    // One scripted model for parent and child, in the order they ask: the parent echoes through
    // MCP, globs, hands a task over; the child answers; the parent ends.
    let llm = ScriptedLlmServer::start(
        Script::new([
            Step::tool_call("echo", json!({"message": "hi-from-python"})),
            Step::tool_call("glob", json!({"pattern": "**/*.txt"})),
            Step::tool_call(
                "task",
                json!({"description": "answer", "prompt": "say the answer", "subagent_type": "general-purpose"}),
            ),
            Step::tool_call("finish", json!({"message": "child-answer-42"})),
            Step::text("All done."),
        ])
        .with_no_tools_text("Compat extension run"),
    );
    let server =
        TandemServer::start(&dir.path().join("home"), &[]).unwrap_or_else(|e| panic!("{e:#}"));
    let out = run_python(
        "official_client.py",
        &[
            "extend",
            &server.url,
            KEY,
            &llm.base_url(),
            &work.to_string_lossy(),
            &everything,
        ],
        &[],
        Duration::from_secs(120),
    )
    .unwrap_or_else(|e| {
        panic!("the official client failed with mcp_config and task_tool_set:\n{e:#}")
    });
    assert!(out.contains("ALL OK"), "{out}");
    assert!(
        llm.violations().is_empty(),
        "LLM request invariants: {:?}",
        llm.violations()
    );
}
