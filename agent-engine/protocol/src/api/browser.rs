//! The live browser view (Tandem): `/sockets/browser/{id}` frames and the
//! `/api/conversations/{id}/browser/...` bodies.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Who controls the browser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum BrowserDriver {
    /// The agent's tools act; a person's input is refused.
    #[default]
    Agent,
    /// A person acts; the agent's browser actions are refused and its run is paused.
    Person,
}

/// The agent's request for a person to take over (`browser_request_handoff`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct BrowserHandoff {
    /// Why, in the agent's words.
    pub reason: String,
}

/// One open tab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
pub struct BrowserTab {
    /// Four-character id (`browser_switch_tab`'s `tab_id`).
    pub id: String,
    /// Its URL.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Whether it is the one the agent and the live view see.
    pub active: bool,
}

/// The browser as the live view shows it: `GET .../browser/state`, and the socket's `state`
/// frame.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct BrowserState {
    /// Who drives.
    pub driver: BrowserDriver,
    /// URL of the active tab (empty before the browser starts).
    pub url: String,
    /// Title of the active tab.
    pub title: String,
    /// Open tabs, in the order they were opened.
    pub tabs: Vec<BrowserTab>,
    /// The agent's pending request for a person, if any.
    pub handoff: Option<BrowserHandoff>,
    /// Whether Chromium runs (it starts at the agent's first browser action).
    pub running: bool,
    /// Whether the active tab is loading (followed from Chromium's own events, whoever
    /// started the load).
    #[serde(default)]
    pub loading: bool,
}

/// Body of `POST .../browser/hand_back`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, ToSchema)]
pub struct HandBackRequest {
    /// What the person did or wants the agent to know (may be empty).
    #[serde(default)]
    pub note: String,
}

/// A client frame of `/sockets/browser/{id}` (Tandem).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BrowserClientFrame {
    /// Authenticate (first frame).
    Auth {
        /// The session key.
        #[serde(default)]
        session_api_key: Option<String>,
    },
    /// The person takes control (the agent's run pauses after its step in flight).
    TakeControl,
    /// The person hands control back; the agent is told what changed and the note.
    HandBack {
        /// Their note.
        #[serde(default)]
        note: String,
    },
    /// A mouse event at (x, y) in CSS pixels of the page's viewport.
    Mouse {
        /// `click`, `down`, `up`, `move` or `wheel`.
        action: String,
        /// Horizontal position.
        x: f64,
        /// Vertical position.
        y: f64,
        /// `left` (default), `middle` or `right`.
        #[serde(default)]
        button: Option<String>,
        /// Horizontal wheel delta.
        #[serde(default)]
        delta_x: f64,
        /// Vertical wheel delta.
        #[serde(default)]
        delta_y: f64,
        /// Alt=1, Ctrl=2, Meta=4, Shift=8.
        #[serde(default)]
        modifiers: i64,
    },
    /// A key press by its DOM name (`Enter`, `Tab`, `ArrowLeft`, `a` ...).
    Key {
        /// The key.
        key: String,
        /// Alt=1, Ctrl=2, Meta=4, Shift=8.
        #[serde(default)]
        modifiers: i64,
    },
    /// Text inserted at the focus (what typing or an IME commits).
    Text {
        /// The text.
        text: String,
    },
    /// Go to a URL.
    Navigate {
        /// Where.
        url: String,
    },
    /// History back.
    Back,
    /// History forward.
    Forward,
    /// Reload the page.
    Reload,
    /// Make another tab active.
    SwitchTab {
        /// Its four-character id.
        tab_id: String,
    },
    /// Text the person marks as secret (a password, a token): it becomes a secret of the
    /// conversation, masked as `<secret-hidden>` wherever the agent or the model could see
    /// it. Accepted whoever drives.
    MarkSecret {
        /// The text (at least 4 characters).
        text: String,
    },
}

/// A frame the server sends on `/sockets/browser/{id}` (Tandem).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum BrowserServerFrame {
    /// The active tab as the screencast shows it.
    Frame {
        /// `jpeg`.
        format: String,
        /// Base64 of the image.
        data: String,
        /// Width of the viewport in CSS pixels (input coordinates refer to these).
        width: f64,
        /// Height of the viewport in CSS pixels.
        height: f64,
    },
    /// Who drives and what is open: on connect and on every change.
    State(BrowserState),
    /// A client frame was refused.
    Error {
        /// Why.
        message: String,
    },
}

impl BrowserServerFrame {
    /// The frame as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}
