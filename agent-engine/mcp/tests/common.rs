//! Where the real MCP servers are, and running them.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

pub use tandem_testkit::mcp_servers::{entry, servers_dir};

/// server-everything over stdio, as a config entry.
pub fn everything_stdio(dir: &Path) -> Value {
    json!({"command": "node", "args": [entry(dir, "server-everything"), "stdio"]})
}

/// The fake server in `mode`, as a config entry.
pub fn fake(mode: &str) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake_server.py");
    json!({"command": "python3", "args": [script.to_string_lossy(), mode]})
}

/// A server-everything running over HTTP on 127.0.0.1 (`streamableHttp` or `sse`), killed on
/// drop.
pub struct HttpEverything {
    child: tokio::process::Child,
    /// Its port.
    pub port: u16,
}

impl HttpEverything {
    /// Starts it and waits until it accepts connections.
    pub async fn start(dir: &Path, mode: &str) -> Self {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .unwrap();
        let child = tokio::process::Command::new("node")
            .arg(entry(dir, "server-everything"))
            .arg(mode)
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            assert!(
                tokio::time::Instant::now() < deadline,
                "server-everything {mode} did not start"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Self { child, port }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

/// The texts of an observation's content.
pub fn texts(o: &tandem_protocol::Observation) -> String {
    o.content()
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A context for running a tool outside an agent.
pub fn ctx(dir: &Path) -> tandem_sdk::ToolContext {
    tandem_sdk::ToolContext {
        cancel: tokio_util::sync::CancellationToken::new(),
        working_dir: dir.to_path_buf(),
        conversation_dir: None,
        env: Default::default(),
        masker: tandem_sdk::Masker::default(),
    }
}

/// Loads `config` and runs `tool` with `args`.
pub async fn run(
    tools: &tandem_mcp::LoadedTools,
    tool: &str,
    args: Value,
) -> tandem_protocol::Observation {
    use tandem_sdk::Tool;
    let t = tools
        .tools
        .iter()
        .find(|t| t.definition().name == tool)
        .unwrap_or_else(|| panic!("no tool {tool}"));
    let action = t.parse_action(args).unwrap();
    t.execute(&action, ctx(Path::new("/"))).await
}

/// The tools' names.
pub fn names(tools: &tandem_mcp::LoadedTools) -> Vec<String> {
    use tandem_sdk::Tool;
    tools
        .tools
        .iter()
        .map(|t| t.definition().name.clone())
        .collect()
}
