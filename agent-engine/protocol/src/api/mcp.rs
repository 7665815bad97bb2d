//! `POST /api/mcp/test`: connect to a candidate MCP server and list its tools, as upstream's
//! route does (200 in both outcomes: a failure is the expected answer to a bad config).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// Body of `POST /api/mcp/test`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = MCPTestRequest)]
pub struct McpTestRequest {
    /// The server's name, used in error messages only (1–128 characters).
    #[serde(default = "default_name")]
    pub name: String,
    /// One server entry as in `mcpServers`: stdio `{type?: "stdio", command, args?, env?, cwd?}`
    /// or remote `{type: "http"|"streamable-http"|"shttp"|"sse", url, headers?, auth?}`.
    #[schema(value_type = Object)]
    pub server: Value,
    /// Seconds to wait for connecting and listing tools (0 < timeout ≤ 120, default 15).
    #[serde(default = "default_timeout")]
    pub timeout: f64,
    /// A (read-only) tool to call after listing, to check credentials only used in calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call: Option<McpToolCallSpec>,
}

fn default_name() -> String {
    "test-server".to_owned()
}

fn default_timeout() -> f64 {
    15.0
}

/// A tool call made by the test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = MCPToolCallSpec)]
pub struct McpToolCallSpec {
    /// The tool's name on the server.
    pub name: String,
    /// Its arguments, passed unchanged.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub arguments: Map<String, Value>,
}

/// The outcome of the test's tool call, verbatim.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = MCPToolCallResult)]
pub struct McpToolCallResult {
    /// The server's `isError`.
    pub is_error: bool,
    /// The result's text content, concatenated.
    pub text: String,
}

/// The server connected and listed its tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = MCPTestSuccess)]
pub struct McpTestSuccess {
    /// Always true.
    pub ok: bool,
    /// The names of the server's tools.
    pub tools: Vec<String>,
    /// The outcome of `tool_call`, when one was asked for.
    #[serde(default)]
    pub tool_result: Option<McpToolCallResult>,
}

/// The server could not be reached or did not list its tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = MCPTestFailure)]
pub struct McpTestFailure {
    /// Always false.
    pub ok: bool,
    /// What went wrong, naming the server.
    pub error: String,
    /// `timeout`, `connection` or `unknown`.
    pub error_kind: String,
}

/// The answer of `POST /api/mcp/test`, told apart by `ok`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum McpTestResponse {
    /// `ok: true`.
    Success(McpTestSuccess),
    /// `ok: false`.
    Failure(McpTestFailure),
}
