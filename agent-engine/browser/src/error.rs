//! What can go wrong with the browser, in words the agent and the person can act on.

/// A browser failure.
#[derive(Debug, thiserror::Error)]
pub enum BrowserError {
    /// Chromium could not be started.
    #[error("cannot start the browser ({path}): {reason}")]
    Launch {
        /// The binary tried.
        path: String,
        /// Why it failed, with the fix.
        reason: String,
    },
    /// A person has control; the agent's action was not run.
    #[error(
        "a person has taken control of the browser, so this action was not run; you will be told when they hand it back"
    )]
    PersonDrives,
    /// A person's input while the agent drives.
    #[error("the agent is driving the browser: take control first")]
    AgentDrives,
    /// The browser is not running (nothing to show or act on yet).
    #[error("the browser is not running yet")]
    NotRunning,
    /// Input that cannot be applied.
    #[error("{0}")]
    BadInput(String),
    /// A CDP command failed or timed out.
    #[error("{0}")]
    Cdp(String),
    /// The conversation closed.
    #[error("the browser was closed with the conversation")]
    Closed,
}

impl From<chromiumoxide::error::CdpError> for BrowserError {
    fn from(e: chromiumoxide::error::CdpError) -> Self {
        Self::Cdp(e.to_string())
    }
}
