//! MCP client figures with the real server-everything and server-filesystem (from the npm cache
//! `scripts/setup.sh` fills):
//! - tool round trip: `BENCH_N` (200) `echo` calls through the agent tool (`parse_action` +
//!   `execute`), one after another, over stdio, streamable HTTP and legacy SSE: median and p95 ms;
//! - agent start-up with 3 MCP servers (server-everything over stdio, server-filesystem over
//!   stdio, server-everything over streamable HTTP): `resolve_tools` until every tool is ready,
//!   median of 5, beside each server alone (they connect at once, so the three together cost
//!   about the slowest one, not the sum).
//!
//! Run: `cargo bench -p tandem-e2e --bench mcp`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_mcp::{LoadedTools, McpOptions, load_tools};
use tandem_protocol::{AgentSpec, LlmConfig};
use tandem_sdk::{Masker, Tool, ToolContext, ToolEnv};

fn servers_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("TANDEM_MCP_SERVERS")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/tandem/mcp-servers"))
        })?;
    dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .is_file()
        .then_some(dir)
}

fn entry(dir: &Path, package: &str) -> String {
    dir.join("node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js")
        .to_string_lossy()
        .into_owned()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median_p95(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    let p95 = v[((v.len() as f64 * 0.95).ceil() as usize)
        .saturating_sub(1)
        .min(v.len() - 1)];
    (v[v.len() / 2], p95)
}

/// server-everything over HTTP on 127.0.0.1, killed on drop.
struct HttpServer {
    child: tokio::process::Child,
    port: u16,
}

impl HttpServer {
    async fn start(dir: &Path, mode: &str) -> Self {
        let port = tandem_e2e::free_port().unwrap();
        let child = tokio::process::Command::new("node")
            .arg(entry(dir, "server-everything"))
            .arg(mode)
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Self { child, port }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.start_kill();
    }
}

async fn round_trips(label: &str, config: Value, n: usize) {
    let tools: LoadedTools = load_tools(&config, &McpOptions::default()).await.unwrap();
    assert!(tools.warnings.is_empty(), "{:?}", tools.warnings);
    let echo = tools
        .tools
        .iter()
        .find(|t| t.definition().name == "echo")
        .unwrap();
    let ctx = ToolContext {
        cancel: tokio_util::sync::CancellationToken::new(),
        working_dir: std::env::temp_dir(),
        conversation_dir: None,
        env: Default::default(),
        masker: Masker::default(),
    };
    let mut times = Vec::with_capacity(n);
    for i in 0..n + 10 {
        let start = Instant::now();
        let action = echo
            .parse_action(json!({"message": format!("ping {i}")}))
            .unwrap();
        let o = echo.execute(&action, ctx.clone()).await;
        let elapsed = start.elapsed();
        assert!(!o.is_error(), "{o:?}");
        if i >= 10 {
            times.push(ms(elapsed));
        }
    }
    let (median, p95) = median_p95(times);
    println!("round trip {label:<16} {n} echo calls: median {median:.2} ms, p95 {p95:.2} ms");
    tools.close();
}

async fn start_up(config: &Value, runs: usize) -> f64 {
    let catalog = tandem_host::catalog();
    let mut spec = AgentSpec::default_for(LlmConfig::new("none"));
    spec.tools.clear();
    spec.include_default_tools.clear();
    spec.condenser = None;
    spec.mcp_config = Some(config.clone());
    let mut times = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        let tools =
            tandem_tools::resolve_tools(&spec, &catalog, ToolEnv::new(std::env::temp_dir()))
                .await
                .unwrap();
        times.push(ms(start.elapsed()));
        assert!(!tools.is_empty());
        tools.iter().for_each(|t: &Arc<dyn Tool>| t.close());
    }
    median_p95(times).0
}

#[tokio::main]
async fn main() {
    let Some(dir) = servers_dir() else {
        println!("skipped: MCP servers not installed (run scripts/setup.sh)");
        return;
    };
    let n: usize = std::env::var("BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let stdio = json!({"command": "node", "args": [entry(&dir, "server-everything"), "stdio"]});
    round_trips("stdio", json!({"mcpServers": {"e": stdio}}), n).await;
    let http = HttpServer::start(&dir, "streamableHttp").await;
    let http_url = format!("http://127.0.0.1:{}/mcp", http.port);
    round_trips(
        "streamable HTTP",
        json!({"mcpServers": {"e": {"url": http_url}}}),
        n,
    )
    .await;
    let sse = HttpServer::start(&dir, "sse").await;
    let sse_url = format!("http://127.0.0.1:{}/sse", sse.port);
    round_trips(
        "legacy SSE",
        json!({"mcpServers": {"e": {"url": sse_url}}}),
        n,
    )
    .await;

    let work = tempfile::tempdir().unwrap();
    let fs = json!({"command": "node", "args": [entry(&dir, "server-filesystem"), work.path().to_string_lossy()]});
    let remote = json!({"url": http_url});
    let alone = [
        ("everything stdio", stdio.clone()),
        ("filesystem stdio", fs.clone()),
        ("everything HTTP", remote.clone()),
    ];
    let mut slowest: f64 = 0.0;
    let mut sum = 0.0;
    for (label, server) in alone {
        let t = start_up(&json!({"mcpServers": {"s": server}}), 5).await;
        println!("start-up, one server ({label}): median {t:.0} ms");
        slowest = slowest.max(t);
        sum += t;
    }
    let all = json!({"mcpServers": {"everything": stdio, "filesystem": fs, "remote": remote}});
    let t = start_up(&all, 5).await;
    println!(
        "start-up, 3 MCP servers together (resolve_tools until tools ready): median {t:.0} ms (slowest alone {slowest:.0} ms, sum alone {sum:.0} ms)"
    );
    drop((http, sse));
}
