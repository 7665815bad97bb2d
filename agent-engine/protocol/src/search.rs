//! The actions and observations of the search tools `glob` (files by name) and `grep` (files by
//! content), as upstream serialises them.
//!
//! As in [`crate::action`], each action struct is also its tool's typed input: the field doc
//! comments are the argument descriptions the model reads, word for word upstream's.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{Content, Extra};

/// Find files by name pattern. The `glob` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct GlobAction {
    /// The glob pattern to match files (e.g., "**/*.js", "src/**/*.ts")
    pub pattern: String,
    /// The directory (absolute path) to search in. Defaults to the current working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Find files by content. The `grep` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct GrepAction {
    /// The regex pattern to search for in file contents
    pub pattern: String,
    /// The directory (absolute path) to search in. Defaults to the current working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Optional file pattern to filter which files to search (e.g., "*.js", "*.{ts,tsx}")
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// The files a glob matched.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct GlobObservation {
    /// What the model reads.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Whether the search failed.
    #[serde(default)]
    pub is_error: bool,
    /// The matching files (absolute paths), newest modification first.
    #[serde(default)]
    pub files: Vec<String>,
    /// The glob pattern that was used.
    #[serde(default)]
    pub pattern: String,
    /// The directory that was searched.
    #[serde(default)]
    pub search_path: String,
    /// Whether more files matched than the 100 listed.
    #[serde(default)]
    pub truncated: bool,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// The files whose content matched a regex.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct GrepObservation {
    /// What the model reads.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Whether the search failed.
    #[serde(default)]
    pub is_error: bool,
    /// The files (absolute paths) containing the pattern, newest modification first.
    #[serde(default)]
    pub matches: Vec<String>,
    /// The regex pattern that was used.
    #[serde(default)]
    pub pattern: String,
    /// The directory that was searched.
    #[serde(default)]
    pub search_path: String,
    /// The file pattern filter that was used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_pattern: Option<String>,
    /// Whether more files matched than the 100 listed.
    #[serde(default)]
    pub truncated: bool,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

impl crate::ToolInput for GlobAction {
    const KIND: &'static str = "GlobAction";

    fn of(action: &crate::Action) -> Option<&Self> {
        match action {
            crate::Action::Glob(input) => Some(input),
            _ => None,
        }
    }
}

impl crate::ToolInput for GrepAction {
    const KIND: &'static str = "GrepAction";

    fn of(action: &crate::Action) -> Option<&Self> {
        match action {
            crate::Action::Grep(input) => Some(input),
            _ => None,
        }
    }
}

impl crate::ToolOutput for GlobObservation {
    const KIND: &'static str = "GlobObservation";

    fn failure(message: String) -> Self {
        Self {
            content: vec![Content::text(message)],
            is_error: true,
            ..Default::default()
        }
    }
}

impl crate::ToolOutput for GrepObservation {
    const KIND: &'static str = "GrepObservation";

    fn failure(message: String) -> Self {
        Self {
            content: vec![Content::text(message)],
            is_error: true,
            ..Default::default()
        }
    }
}
