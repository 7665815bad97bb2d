//! How the conversation's Chromium is started.

use std::path::PathBuf;
use std::time::Duration;

/// Where Chromium is, how it runs and how long pages may take.
#[derive(Debug, Clone)]
pub struct BrowserConfig {
    /// The Chromium binary: `TANDEM_CHROMIUM`, else `/usr/bin/chromium`.
    pub executable: PathBuf,
    /// Its profile (cookies, storage); the conversation's `browser-profile` folder.
    pub profile_dir: PathBuf,
    /// Headless unless a display is wanted (`TANDEM_BROWSER_HEADLESS=0` with a `DISPLAY`).
    pub headless: bool,
    /// Viewport in CSS pixels.
    pub viewport: (u32, u32),
    /// How long a navigation may take before the agent is told the page is still loading.
    pub navigation_timeout: Duration,
    /// How long one CDP command may take.
    pub command_timeout: Duration,
    /// Where recordings go (`<workspace>/.agent_tmp/browser_observations`).
    pub recordings_dir: PathBuf,
}

/// The Chromium binary conversations use: `TANDEM_CHROMIUM`, else `/usr/bin/chromium`.
pub fn chromium_executable() -> PathBuf {
    std::env::var_os("TANDEM_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"))
}

impl BrowserConfig {
    /// The configuration for a conversation whose files live in `conversation_dir` and whose
    /// workspace is `workspace`, honouring `TANDEM_CHROMIUM`, `TANDEM_BROWSER_HEADLESS` and
    /// `TANDEM_BROWSER_NAV_TIMEOUT_MS`.
    pub fn for_conversation(conversation_dir: PathBuf, workspace: PathBuf) -> Self {
        let executable = chromium_executable();
        let headed = std::env::var("TANDEM_BROWSER_HEADLESS").is_ok_and(|v| v == "0")
            && std::env::var_os("DISPLAY").is_some();
        let navigation_timeout = std::env::var("TANDEM_BROWSER_NAV_TIMEOUT_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(Duration::from_millis)
            .unwrap_or(Duration::from_secs(15));
        Self {
            executable,
            profile_dir: conversation_dir.join("browser-profile"),
            headless: !headed,
            viewport: (1280, 800),
            navigation_timeout,
            // A navigation is one CDP command to chromiumoxide: the same limit for both.
            command_timeout: navigation_timeout,
            recordings_dir: workspace.join(".agent_tmp").join("browser_observations"),
        }
    }
}
