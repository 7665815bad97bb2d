//! Servers that fail to start, crash mid-call, hang, speak malformed JSON-RPC or offer a schema
//! that cannot be used: each gives a clear error naming the server, and the other tools keep
//! working. A closed server leaves no process behind.

use std::time::Duration;

use serde_json::json;
use tandem_mcp::{McpOptions, load_tools};
use tandem_protocol::Observation;
use tandem_sdk::Tool;

use crate::common::{fake, names, run, texts};

fn error_text(o: &Observation) -> String {
    assert!(o.is_error(), "expected an error: {o:?}");
    texts(o)
}

#[tokio::test]
async fn a_server_that_cannot_start_costs_only_its_tools() {
    let config = json!({"mcpServers": {
        "missing": {"command": "/no/such/mcp-server"},
        "good": fake("ok"),
    }});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    assert_eq!(tools.warnings.len(), 1, "{:?}", tools.warnings);
    let w = &tools.warnings[0];
    assert!(
        w.contains("`missing`") && w.contains("could not start `/no/such/mcp-server`"),
        "{w}"
    );
    let o = run(&tools, "good_ok", json!({"message": "still here"})).await;
    assert!(texts(&o).contains("echo: still here"), "{o:?}");
    tools.close();
}

#[tokio::test]
async fn a_server_that_crashes_mid_call_is_reported_and_restarted() {
    let config = json!({"mcpServers": {"crashy": fake("ok")}});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    let o = run(&tools, "crash", json!({})).await;
    let e = error_text(&o);
    assert!(e.contains("`crashy`") && e.contains("exited"), "{e}");
    assert!(
        e.contains("crashing on purpose"),
        "the server's stderr explains it: {e}"
    );
    assert!(e.contains("restarted"), "{e}");
    // The restarted server answers.
    let o = run(&tools, "ok", json!({"message": "again"})).await;
    assert!(!o.is_error() && texts(&o).contains("echo: again"), "{o:?}");
    tools.close();
}

#[tokio::test]
async fn a_hanging_call_times_out_naming_the_server() {
    let mut slow = fake("ok");
    slow["timeout"] = json!(1);
    let config = json!({"mcpServers": {"slow": slow, "other": fake("ok")}});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    let (hung, other) = tokio::join!(
        run(&tools, "slow_hang", json!({})),
        run(&tools, "other_ok", json!({"message": "meanwhile"}))
    );
    let e = error_text(&hung);
    assert!(
        e.contains("`slow`") && e.contains("timed out after 1s"),
        "{e}"
    );
    assert!(texts(&other).contains("echo: meanwhile"), "{other:?}");
    tools.close();
}

#[tokio::test]
async fn malformed_json_rpc_is_an_error_naming_the_server() {
    let config = json!({"mcpServers": {"babbler": fake("malformed"), "good": fake("ok")}});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    let o = run(&tools, "babbler_ok", json!({"message": "x"})).await;
    let e = error_text(&o);
    assert!(
        e.contains("`babbler`") && e.contains("malformed JSON-RPC"),
        "{e}"
    );
    let o = run(&tools, "good_ok", json!({"message": "fine"})).await;
    assert!(texts(&o).contains("echo: fine"), "{o:?}");
    tools.close();

    // Malformed from the first answer: a start-up warning naming the server, no hang.
    let options = McpOptions {
        init_timeout: Duration::from_secs(20),
        ..McpOptions::default()
    };
    let config = json!({"mcpServers": {"garbage": fake("garbage"), "good": fake("ok")}});
    let tools = load_tools(&config, &options).await.unwrap();
    assert_eq!(tools.warnings.len(), 1, "{:?}", tools.warnings);
    let w = &tools.warnings[0];
    assert!(
        w.contains("`garbage`") && w.contains("malformed JSON-RPC"),
        "{w}"
    );
    assert!(names(&tools).iter().all(|n| n.starts_with("good_")));
    tools.close();
}

#[tokio::test]
async fn a_line_over_the_cap_is_an_error_naming_the_server() {
    let config = json!({"mcpServers": {"flood": fake("huge"), "good": fake("ok")}});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    let o = run(&tools, "flood_ok", json!({"message": "x"})).await;
    let e = error_text(&o);
    assert!(
        e.contains("`flood`") && e.contains("longer than 16 MiB"),
        "{e}"
    );
    let o = run(&tools, "good_ok", json!({"message": "fine"})).await;
    assert!(texts(&o).contains("echo: fine"), "{o:?}");
    tools.close();
}

#[tokio::test]
async fn a_tool_with_an_unusable_schema_is_skipped_with_a_warning() {
    let config = json!({"mcpServers": {"odd": fake("bad_schema")}});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    assert_eq!(names(&tools), ["fine"]);
    assert_eq!(tools.warnings.len(), 1, "{:?}", tools.warnings);
    let w = &tools.warnings[0];
    assert!(
        w.contains("`odd`") && w.contains("`weird`") && w.contains("\"array\""),
        "{w}"
    );
    let o = run(&tools, "fine", json!({"message": "ok"})).await;
    assert!(texts(&o).contains("echo: ok"), "{o:?}");
    tools.close();
}

fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // A zombie has exited; only its parent has not collected it yet.
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

#[tokio::test]
async fn closing_kills_the_servers_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("grandchild.pid");
    let mut server = fake("orphan");
    server["env"] = json!({"ORPHAN_PID_FILE": pid_file.to_string_lossy()});
    let config = json!({"mcpServers": {"parent": server}});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    assert!(tools.warnings.is_empty(), "{:?}", tools.warnings);
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid), "the server's helper runs");
    // What a conversation does when it closes: close its tools.
    tools.tools[0].close();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "the server's helper {pid} outlived it"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let o = run(&tools, "ok", json!({"message": "after close"})).await;
    assert!(error_text(&o).contains("closed"), "{o:?}");
}

#[tokio::test]
async fn closing_asks_the_server_to_end_before_killing_it() {
    let dir = tempfile::tempdir().unwrap();
    let term_file = dir.path().join("term");
    let mut server = fake("graceful");
    server["env"] = json!({"TERM_FILE": term_file.to_string_lossy()});
    let config = json!({"mcpServers": {"polite": server}});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    assert!(tools.warnings.is_empty(), "{:?}", tools.warnings);
    tools.tools[0].close();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !term_file.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the server never got SIGTERM"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(std::fs::read_to_string(&term_file).unwrap(), "terminated");
}
