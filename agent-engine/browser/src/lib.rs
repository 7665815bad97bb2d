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
//!   title, loading, tabs, a pending handoff), which follows the page through CDP's own events
//!   whoever changed it (`follow.rs`).
//! - Who drives is one state machine (`control.rs`). A person
//!   [`take_control`](Browser::take_control)s once the agent's action in flight has finished:
//!   the agent's browser actions are then refused (its run is paused by the server) and the
//!   person's input frames (`BrowserClientFrame`) go to the page through CDP Input until they
//!   [`hand_back`](Browser::hand_back). What they typed into password fields comes back with
//!   the hand-back, to become secrets of the conversation (`secrets.rs`).
//!
//! Depends on `tandem-sdk` (the tool traits) and `tandem-protocol`; never on servers.

mod actions;
mod browser;
mod catalog;
mod config;
mod control;
pub mod definitions;
mod engine;
mod error;
mod follow;
mod input;
mod moving;
mod recording;
mod screencast;
mod script;
mod secrets;
mod state;
mod tools;

pub use actions::Outcome;
pub use browser::{Browser, FrameWatch, HandBack};
pub use catalog::{BrowserSlot, register};
pub use config::{BrowserConfig, chromium_executable};
pub use control::{HandOver, Resume, Takeover};
pub use error::BrowserError;
pub use moving::MovedBrowser;
pub use secrets::MIN_SECRET_LEN;
pub use state::Frame;
pub use tools::{browser_tool_set, request_handoff_tool};
