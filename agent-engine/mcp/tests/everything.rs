//! The real MCP servers from npm: server-everything over stdio, streamable HTTP and legacy
//! SSE, and server-filesystem over stdio.

use serde_json::json;
use tandem_mcp::{McpOptions, load_tools};
use tandem_protocol::{Content, Observation};
use tandem_sdk::Tool;

use crate::common::{HttpEverything, entry, everything_stdio, names, run, servers_dir, texts};

#[tokio::test]
async fn stdio_echo_sum_and_image() {
    let Some(dir) = servers_dir() else { return };
    let config = json!({"mcpServers": {"everything": everything_stdio(&dir)}});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    assert!(tools.warnings.is_empty(), "{:?}", tools.warnings);
    // One server: the tools keep their own names, as upstream shows them to the model.
    let all = names(&tools);
    for n in ["echo", "get-sum", "get-tiny-image"] {
        assert!(all.iter().any(|t| t == n), "{n} missing from {all:?}");
    }
    let echo = tools
        .tools
        .iter()
        .find(|t| t.definition().name == "echo")
        .unwrap();
    assert_eq!(echo.definition().action_type, "MCPToolAction");
    assert!(echo.definition().parameters["properties"]["message"].is_object());

    let o = run(&tools, "echo", json!({"message": "hello mcp"})).await;
    let Observation::Mcp(m) = &o else {
        panic!("{o:?}")
    };
    assert!(!m.is_error, "{o:?}");
    assert_eq!(m.tool_name, "echo");
    assert!(texts(&o).contains("hello mcp"), "{o:?}");

    // "2" as a string is read as the number the schema wants.
    let o = run(&tools, "get-sum", json!({"a": "2", "b": 40})).await;
    assert!(texts(&o).contains("42"), "{o:?}");

    let o = run(&tools, "get-tiny-image", json!({})).await;
    let images: Vec<_> = o
        .content()
        .into_iter()
        .filter_map(|c| match c {
            Content::Image(i) => Some(i.image_urls),
            _ => None,
        })
        .collect();
    assert_eq!(images.len(), 1, "{o:?}");
    assert!(
        images[0][0].starts_with("data:image/png;base64,iVBOR"),
        "{images:?}"
    );
    tools.close();
}

#[tokio::test]
async fn bad_arguments_name_the_field() {
    let Some(dir) = servers_dir() else { return };
    let config = json!({"mcpServers": {"everything": everything_stdio(&dir)}});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    let sum = tools
        .tools
        .iter()
        .find(|t| t.definition().name == "get-sum")
        .unwrap();
    let err = sum
        .parse_action(json!({"a": "two", "b": 1}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("get-sum") && err.contains("`a`"), "{err}");
    let err = sum.parse_action(json!({"b": 1})).unwrap_err().to_string();
    assert!(err.contains("\"a\" is a required property"), "{err}");
    tools.close();
}

#[tokio::test]
async fn streamable_http() {
    let Some(dir) = servers_dir() else { return };
    let server = HttpEverything::start(&dir, "streamableHttp").await;
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let config = json!({"mcpServers": {"remote": {"url": url}}});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    assert!(tools.warnings.is_empty(), "{:?}", tools.warnings);
    let o = run(&tools, "echo", json!({"message": "over http"})).await;
    assert!(texts(&o).contains("over http"), "{o:?}");
    let o = run(&tools, "get-sum", json!({"a": 1, "b": 2})).await;
    assert!(texts(&o).contains('3'), "{o:?}");
    tools.close();
}

#[tokio::test]
async fn legacy_sse() {
    let Some(dir) = servers_dir() else { return };
    let server = HttpEverything::start(&dir, "sse").await;
    // The `/sse` path picks the legacy transport, as upstream infers it.
    let url = format!("http://127.0.0.1:{}/sse", server.port);
    let config = json!({"mcpServers": {"legacy": {"url": url}}});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    assert!(tools.warnings.is_empty(), "{:?}", tools.warnings);
    let o = run(&tools, "echo", json!({"message": "over sse"})).await;
    assert!(texts(&o).contains("over sse"), "{o:?}");
    // Answers are matched to their requests by id: two calls at once get their own answers.
    let (a, b) = tokio::join!(
        run(&tools, "get-sum", json!({"a": 1, "b": 1})),
        run(&tools, "echo", json!({"message": "second"}))
    );
    assert!(
        texts(&a).contains('2') && texts(&b).contains("second"),
        "{a:?} {b:?}"
    );
    tools.close();
}

#[tokio::test]
async fn filesystem_reads_a_file_and_several_servers_are_prefixed() {
    let Some(dir) = servers_dir() else { return };
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("note.txt"), "the MCP filesystem works").unwrap();
    let root = work.path().canonicalize().unwrap();
    let config = json!({"mcpServers": {
        "fs": {"command": "node", "args": [entry(&dir, "server-filesystem"), root.to_string_lossy()]},
        "everything": everything_stdio(&dir),
    }});
    let tools = load_tools(&config, &McpOptions::default()).await.unwrap();
    assert!(tools.warnings.is_empty(), "{:?}", tools.warnings);
    let all = names(&tools);
    assert!(all.iter().any(|n| n == "everything_echo"), "{all:?}");
    let path = root.join("note.txt");
    let o = run(
        &tools,
        "fs_read_text_file",
        json!({"path": path.to_string_lossy()}),
    )
    .await;
    assert!(texts(&o).contains("the MCP filesystem works"), "{o:?}");
    tools.close();
}

#[tokio::test]
async fn test_server_lists_tools_and_reports_failures() {
    let Some(dir) = servers_dir() else { return };
    let timeout = std::time::Duration::from_secs(30);
    let (tools, call) = tandem_mcp::test_server(
        "everything",
        &everything_stdio(&dir),
        timeout,
        Some((
            "echo".into(),
            json!({"message": "probe"}).as_object().unwrap().clone(),
        )),
    )
    .await
    .unwrap();
    assert!(tools.iter().any(|t| t == "echo"), "{tools:?}");
    let call = call.unwrap();
    assert!(!call.is_error && call.text.contains("probe"), "{call:?}");

    let err = tandem_mcp::test_server(
        "nope",
        &json!({"command": "/no/such/mcp-server"}),
        timeout,
        None,
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind.as_upstream(), "connection");
    assert!(
        err.to_string().contains("`nope`") && err.to_string().contains("/no/such/mcp-server"),
        "{err}"
    );
}
