//! The action and observation of tools served by MCP servers, as upstream serialises them.
//!
//! An MCP tool's arguments are only known at run time (its server's `inputSchema`), so the
//! action carries them as a JSON object (`data`); the tool checks them against that schema.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::ToSchema;

use crate::{Content, Extra};

/// A call of an MCP tool: its arguments, as the model sent them (after checking).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct McpToolAction {
    /// The tool's arguments, passed to the MCP server unchanged.
    #[serde(default)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub data: Map<String, Value>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// What an MCP tool returned: its text and image content, or the error.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct McpToolObservation {
    /// What the model reads: text and images (an error is written here too).
    #[serde(default)]
    pub content: Vec<Content>,
    /// Whether the call failed (the server's `isError`, or a failure reaching it).
    #[serde(default)]
    pub is_error: bool,
    /// The name of the tool that was called.
    #[serde(default)]
    pub tool_name: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

impl McpToolObservation {
    /// A failed call of `tool_name` that tells the model `message`.
    pub fn error(tool_name: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            content: vec![Content::text(message)],
            is_error: true,
            tool_name: tool_name.into(),
            extra: Extra::new(),
        }
    }
}
