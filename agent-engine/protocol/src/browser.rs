//! The actions and the observation of the browser tools (`browser_navigate`, `browser_click`, …),
//! as upstream serialises them, plus Tandem's `browser_request_handoff`.
//!
//! As in [`crate::action`], each action struct is also its tool's typed input: the field doc
//! comments are the argument descriptions the model reads. Every browser tool answers with a
//! [`BrowserObservation`].

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use crate::{Content, Extra};

/// Open a URL in the current tab or a new one. The `browser_navigate` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct BrowserNavigateAction {
    /// The full URL to open, with its scheme, e.g. `https://example.com/login`.
    pub url: String,
    /// True to open the URL in a new tab instead of the current one. Default false.
    #[serde(default)]
    pub new_tab: bool,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Click an interactive element. The `browser_click` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct BrowserClickAction {
    /// The element's index, as listed by the latest `browser_get_state`.
    pub index: i64,
    /// True to open the page the click leads to in a new tab. Default false.
    #[serde(default)]
    pub new_tab: bool,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Type text into an input element. The `browser_type` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct BrowserTypeAction {
    /// The input element's index, as listed by the latest `browser_get_state`.
    pub index: i64,
    /// The text to type into it.
    pub text: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Read the current page's interactive elements. The `browser_get_state` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct BrowserGetStateAction {
    /// True to also take a screenshot of the visible part of the page. Default false.
    #[serde(default)]
    pub include_screenshot: bool,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Read the current page's main content as markdown. The `browser_get_content` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct BrowserGetContentAction {
    /// True to keep the links' URLs in the markdown. Default false.
    #[serde(default)]
    pub extract_links: bool,
    /// Character offset to start reading from, to continue a page whose content was cut off.
    /// Default 0.
    #[serde(default)]
    pub start_from_char: i64,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Scroll the page by one screen. The `browser_scroll` tool's input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct BrowserScrollAction {
    /// Which way to scroll: `up` or `down`. Default `down`.
    // A string, not a Rust enum, for the same reason as `FileEditorAction::command`.
    #[serde(default = "down")]
    #[schemars(extend("enum" = BrowserScrollAction::DIRECTIONS))]
    pub direction: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

impl BrowserScrollAction {
    /// The directions, in the order the schema lists them.
    pub const DIRECTIONS: [&'static str; 2] = ["up", "down"];
}

impl Default for BrowserScrollAction {
    fn default() -> Self {
        Self {
            direction: down(),
            extra: Extra::new(),
        }
    }
}

fn down() -> String {
    "down".to_owned()
}

/// Go back one page in the current tab's history. The `browser_go_back` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
#[schemars(transform = no_arguments)]
pub struct BrowserGoBackAction {
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// List the open tabs. The `browser_list_tabs` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
#[schemars(transform = no_arguments)]
pub struct BrowserListTabsAction {
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Make another tab the current one. The `browser_switch_tab` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct BrowserSwitchTabAction {
    /// The tab's 4-character id, as listed by `browser_list_tabs`.
    pub tab_id: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Close a tab. The `browser_close_tab` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct BrowserCloseTabAction {
    /// The tab's 4-character id, as listed by `browser_list_tabs`.
    pub tab_id: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Read the cookies and the local and session storage. The `browser_get_storage` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
#[schemars(transform = no_arguments)]
pub struct BrowserGetStorageAction {
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Restore cookies and storage. The `browser_set_storage` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct BrowserSetStorageAction {
    /// The storage to set: an object with `cookies` (a list of cookie objects) and `origins`
    /// (a list of objects with `origin`, `localStorage` and `sessionStorage`), in the shape
    /// `browser_get_storage` returns.
    #[schemars(schema_with = "any_object")]
    pub storage_state: serde_json::Map<String, serde_json::Value>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Declares the empty `properties` of a tool without arguments, as upstream does (schemars
/// leaves it out).
fn no_arguments(schema: &mut Schema) {
    schema
        .ensure_object()
        .entry("properties")
        .or_insert_with(|| serde_json::json!({}));
}

/// A JSON object of any members, as upstream declares `storage_state`.
fn any_object(_: &mut SchemaGenerator) -> Schema {
    json_schema!({ "type": "object" })
}

/// Start recording the session's page events to files. The `browser_start_recording` tool's
/// input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
#[schemars(transform = no_arguments)]
pub struct BrowserStartRecordingAction {
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Stop the recording and save what is left. The `browser_stop_recording` tool's input.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
#[schemars(transform = no_arguments)]
pub struct BrowserStopRecordingAction {
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// Ask a person to take over the browser (Tandem's own tool, `browser_request_handoff`): the
/// observation arrives when the person hands control back.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, JsonSchema, ToSchema)]
pub struct BrowserRequestHandoffAction {
    /// What the person should do and why you cannot, e.g. "log in to the shop with your
    /// account" or "solve the CAPTCHA on the sign-up page".
    pub reason: String,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schemars(skip)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}

/// What a browser tool returned.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, ToSchema)]
pub struct BrowserObservation {
    /// What the model reads.
    #[serde(default)]
    pub content: Vec<Content>,
    /// Whether the tool failed.
    #[serde(default)]
    pub is_error: bool,
    /// A screenshot of the page, base64 (PNG or JPEG), when one was taken.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub screenshot_data: Option<String>,
    /// Folder where the browser's files (screenshots, recordings) are saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_output_save_dir: Option<String>,
    /// Fields this version does not know, kept verbatim.
    #[serde(flatten)]
    #[schema(value_type = std::collections::HashMap<String, serde_json::Value>)]
    pub extra: Extra,
}
