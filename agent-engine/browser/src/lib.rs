//! `tandem-browser`: the agent's browser. Chromium driven over CDP (chromiumoxide), the
//! `browser_*` tools upstream gives the model, the live screencast and a person's takeover.
//!
//! - [`Browser`] is one conversation's browser. Chromium starts at the agent's first browser
//!   action (headless, its profile in the conversation's folder), is restarted when it has
//!   crashed (the next observation says so) and closes with the conversation.
//! - [`browser_tool_set`] gives the tools of upstream's `browser_tool_set` on one [`Browser`];
//!   [`request_handoff_tool`] Tandem's `browser_request_handoff`, asked for by name.
//! - The live view follows [`Browser::watch_frames`] (a CDP screencast of the active tab, each
//!   frame acknowledged, only the latest kept) and [`Browser::watch_state`] (who drives, URL,
//!   title, tabs, a pending handoff).
//! - A person [`take_control`](Browser::take_control)s: the agent's browser actions are then
//!   refused (its run is paused by the server) and the person's input frames (`BrowserClientFrame`) go to the
//!   page through CDP Input until they [`hand_back`](Browser::hand_back).
//!
//! Depends on `tandem-sdk` (the tool traits) and `tandem-protocol`; never on servers.

mod actions;
mod browser;
mod catalog;
mod config;
pub mod definitions;
mod engine;
mod error;
mod input;
mod recording;
mod screencast;
mod script;
mod state;
mod tools;

pub use actions::Outcome;
pub use browser::{Browser, FrameWatch, HandBack};
pub use catalog::{BrowserSlot, register};
pub use config::BrowserConfig;
pub use error::BrowserError;
pub use state::Frame;
pub use tools::{browser_tool_set, request_handoff_tool};
