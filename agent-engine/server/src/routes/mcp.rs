//! `POST /api/mcp/test` (upstream's route): connect to a candidate MCP server, list its tools,
//! optionally call one, and answer 200 with `ok: true` and the tool names or `ok: false` with
//! the error and its kind. A malformed body or server entry is a 422 naming the field.

use std::time::Duration;

use axum::Json;
use serde_json::Value;
use tandem_protocol::api::{
    McpTestFailure, McpTestRequest, McpTestResponse, McpTestSuccess, McpToolCallResult,
};

use crate::error::{ApiError, Result};
use crate::extract::ApiJson;

/// Tests one MCP server.
pub(crate) async fn test(ApiJson(req): ApiJson<McpTestRequest>) -> Result<Json<McpTestResponse>> {
    let name_len = req.name.chars().count();
    if !(1..=128).contains(&name_len) {
        return Err(ApiError::field(
            &["body", "name"],
            "value_error",
            "name must be 1 to 128 characters",
            Value::from(req.name),
        ));
    }
    if !(req.timeout > 0.0 && req.timeout <= 120.0) {
        return Err(ApiError::field(
            &["body", "timeout"],
            "value_error",
            "timeout must be more than 0 and at most 120 seconds",
            Value::from(req.timeout),
        ));
    }
    if let Some(call) = &req.tool_call
        && call.name.is_empty()
    {
        return Err(ApiError::field(
            &["body", "tool_call", "name"],
            "value_error",
            "the tool's name must not be empty",
            Value::from(""),
        ));
    }
    if let Err(e) = tandem_mcp::parse_server(&req.name, &req.server) {
        return Err(ApiError::field(
            &["body", "server"],
            "value_error",
            e.to_string(),
            req.server,
        ));
    }
    let call = req.tool_call.map(|c| (c.name, c.arguments));
    let timeout = Duration::from_secs_f64(req.timeout);
    let answer = match tandem_mcp::test_server(&req.name, &req.server, timeout, call).await {
        Ok((tools, call)) => McpTestResponse::Success(McpTestSuccess {
            ok: true,
            tools,
            tool_result: call.map(|c| McpToolCallResult {
                is_error: c.is_error,
                text: c.text,
            }),
        }),
        Err(e) => McpTestResponse::Failure(McpTestFailure {
            ok: false,
            error: e.to_string(),
            error_kind: e.kind.as_upstream().to_owned(),
        }),
    };
    Ok(Json(answer))
}
