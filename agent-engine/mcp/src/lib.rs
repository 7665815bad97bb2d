//! `tandem-mcp`: the MCP client. The agent spec's `mcp_config` (upstream's
//! `{"mcpServers": {...}}`) becomes agent tools, one per tool of each server.
//!
//! - [`load_tools`] connects every server concurrently (each within the initialize timeout) and
//!   makes its tools; a server that fails costs only its own tools and yields a warning naming
//!   it. Tools are named as upstream names them: the tool's own name with one server,
//!   `<server>_<tool>` with several.
//! - Each call has a per-call timeout; a server that died is restarted; closing a tool (when its
//!   conversation closes) kills the server's process group.
//! - [`register`] plugs it into a host's tool catalog as the source of a spec's `mcp_config`
//!   (as `tandem_browser::register` plugs in the browser).
//! - [`test_server`] connects to one server and lists its tools (`POST /api/mcp/test`).
//!
//! The MCP library (rmcp) stays behind [`McpConnection`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use tandem_sdk::{MakeToolError, Tool, ToolCatalog, ToolEnv};

mod config;
mod connection;
mod error;
mod server;
mod tool;

pub use config::{ServerConfig, Transport, parse_config, parse_server};
pub use connection::{McpCallResult, McpConnection, McpToolInfo, connect};
pub use error::{McpError, McpErrorKind};
pub use server::McpServer;
pub use tool::{McpTool, UnusableSchema};

/// Upstream's wait for connecting and listing tools.
pub const DEFAULT_INIT_TIMEOUT: Duration = Duration::from_secs(30);
/// Upstream's per-call timeout.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(300);

/// Timeouts and where stdio servers run.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// For starting a server, the MCP handshake and listing its tools.
    pub init_timeout: Duration,
    /// For one tool call, unless the server's `timeout` says otherwise.
    pub call_timeout: Duration,
    /// Working directory of stdio servers without a `cwd` (the agent's workspace).
    pub working_dir: Option<PathBuf>,
}

impl Default for McpOptions {
    /// Upstream's timeouts, or `TANDEM_MCP_INIT_TIMEOUT` / `TANDEM_MCP_CALL_TIMEOUT` (seconds).
    fn default() -> Self {
        let secs = |var: &str, default: Duration| {
            std::env::var(var)
                .ok()
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|s| *s > 0.0 && s.is_finite())
                .map_or(default, Duration::from_secs_f64)
        };
        Self {
            init_timeout: secs("TANDEM_MCP_INIT_TIMEOUT", DEFAULT_INIT_TIMEOUT),
            call_timeout: secs("TANDEM_MCP_CALL_TIMEOUT", DEFAULT_CALL_TIMEOUT),
            working_dir: None,
        }
    }
}

/// Where a host wants MCP start-up warnings (a server that failed, a tool skipped), besides the
/// log: the CLI prints them, the server records them on the conversation. Put into the
/// `ToolEnv` the tools are made with.
#[derive(Clone)]
pub struct McpWarnings(pub Arc<dyn Fn(&str) + Send + Sync>);

impl std::fmt::Debug for McpWarnings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("McpWarnings")
    }
}

/// Registers the MCP client as `catalog`'s source for an agent spec's `mcp_config`: its servers
/// start (all at once) in the conversation's workspace and their tools join the agent's. A
/// server that fails costs only its tools: its warning goes to the log and to the host's
/// [`McpWarnings`] in the tool environment.
pub fn register(catalog: &mut ToolCatalog) {
    catalog.register_source("mcp_config", |config, env: ToolEnv| {
        Box::pin(async move {
            let options = McpOptions {
                working_dir: Some(env.working_dir.clone()),
                ..Default::default()
            };
            let loaded = load_tools(&config, &options)
                .await
                .map_err(|e| MakeToolError::Config(e.to_string()))?;
            if let Some(sink) = env.get::<McpWarnings>() {
                loaded.warnings.iter().for_each(|w| (sink.0)(w));
            }
            Ok(loaded.agent_tools())
        })
    });
}

/// What [`load_tools`] made.
#[derive(Debug, Default)]
pub struct LoadedTools {
    /// The tools, server by server in config order, each server's in its order.
    pub tools: Vec<Arc<McpTool>>,
    /// One line per server that failed and per tool skipped, naming the server (and tool).
    pub warnings: Vec<String>,
    /// The connected servers.
    pub servers: Vec<Arc<McpServer>>,
}

impl LoadedTools {
    /// The tools as agent tools.
    pub fn agent_tools(&self) -> Vec<Arc<dyn Tool>> {
        self.tools
            .iter()
            .map(|t| Arc::clone(t) as Arc<dyn Tool>)
            .collect()
    }

    /// Closes every server (kills the stdio servers' process groups).
    pub fn close(&self) {
        self.servers.iter().for_each(|s| s.close());
    }
}

/// Connects to every server of `config` at once and makes their tools. Only a config that is
/// not `{"mcpServers": {...}}` at all is an error; a server that fails, or a tool whose schema
/// cannot be used, becomes a warning (also logged) and the rest load.
pub async fn load_tools(config: &Value, options: &McpOptions) -> Result<LoadedTools, McpError> {
    let (servers, bad) = config::parse_config(config)?;
    let prefixed = servers.len() + bad.len() > 1;
    let mut loaded = LoadedTools::default();
    loaded.warnings.extend(bad.iter().map(ToString::to_string));
    let started =
        futures::future::join_all(servers.into_iter().map(|s| McpServer::start(s, options))).await;
    let mut seen = std::collections::HashSet::new();
    for result in started {
        let (server, tools) = match result {
            Ok(ok) => ok,
            Err(e) => {
                loaded
                    .warnings
                    .push(format!("{e}; its tools are not available"));
                continue;
            }
        };
        for info in tools {
            let name = tool_name(prefixed.then_some(server.name()), &info.name);
            let remote = info.name.clone();
            if !seen.insert(name.clone()) {
                loaded.warnings.push(format!(
                    "MCP server `{}`: tool `{remote}` skipped: another tool is already called `{name}`",
                    server.name()
                ));
                continue;
            }
            match McpTool::new(Arc::clone(&server), info, name) {
                Ok(t) => loaded.tools.push(Arc::new(t)),
                Err(why) => loaded.warnings.push(format!(
                    "MCP server `{}`: tool `{remote}` skipped: {why}",
                    server.name()
                )),
            }
        }
        loaded.servers.push(server);
    }
    for w in &loaded.warnings {
        tracing::warn!("{w}");
    }
    Ok(loaded)
}

/// `<server>_<tool>` (or the tool's name alone), with characters LLM APIs refuse in a tool
/// name replaced by `_`; names that are already valid are kept as they are.
fn tool_name(server: Option<&str>, tool: &str) -> String {
    let raw = match server {
        Some(s) => format!("{s}_{tool}"),
        None => tool.to_owned(),
    };
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect()
}

/// The outcome of a test call made by [`test_server`].
#[derive(Debug, Clone, PartialEq)]
pub struct TestCallResult {
    /// The server's `isError`.
    pub is_error: bool,
    /// The result's text content, concatenated.
    pub text: String,
}

/// Connects to the server `server` (one entry of `mcpServers`, named `name` in messages),
/// lists its tools within `timeout`, optionally calls one tool, then closes it. Answers the
/// tools' names (and the call's outcome).
pub async fn test_server(
    name: &str,
    server: &Value,
    timeout: Duration,
    tool_call: Option<(String, Map<String, Value>)>,
) -> Result<(Vec<String>, Option<TestCallResult>), McpError> {
    let config = config::parse_server(name, server)?;
    let options = McpOptions {
        init_timeout: timeout,
        call_timeout: timeout,
        working_dir: None,
    };
    let (server, tools) = McpServer::start(config, &options).await?;
    let names = tools.into_iter().map(|t| t.name).collect();
    let call = match tool_call {
        Some((tool, args)) => {
            let outcome = server.call(&tool, args).await;
            Some(match outcome {
                Ok(r) => TestCallResult {
                    is_error: r.is_error,
                    text: r
                        .content
                        .iter()
                        .filter_map(|c| c.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n"),
                },
                Err(e) => TestCallResult {
                    is_error: true,
                    text: e.to_string(),
                },
            })
        }
        None => None,
    };
    server.close();
    Ok((names, call))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_upstreams() {
        assert_eq!(tool_name(None, "echo"), "echo");
        assert_eq!(
            tool_name(Some("everything"), "get-sum"),
            "everything_get-sum"
        );
        assert_eq!(tool_name(Some("my server"), "a.b"), "my_server_a_b");
    }
}
