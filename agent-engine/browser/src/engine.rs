//! One running Chromium: its process, the CDP handler task, and the tabs the agent knows.
//!
//! Tandem starts Chromium itself (`tandem_process`: a process group of its own, a parent-death
//! signal and the owner marker, which its helpers inherit) and connects chromiumoxide to the
//! DevTools address Chromium prints. Closing asks Chromium over CDP, then stops the whole
//! group (SIGTERM, SIGKILL after a grace), so no renderer, zygote or crash handler is left
//! holding the profile.

use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use chromiumoxide::Page;
use chromiumoxide::handler::HandlerConfig;
use chromiumoxide::handler::viewport::Viewport;
use futures::StreamExt;
use tandem_process::Isolation;
use tokio::task::JoinHandle;

use crate::config::BrowserConfig;
use crate::error::BrowserError;

/// An open tab: its short id and its page.
#[derive(Debug, Clone)]
pub(crate) struct Tab {
    pub id: String,
    pub page: Page,
}

/// A launched Chromium.
pub(crate) struct Engine {
    browser: chromiumoxide::Browser,
    /// Chromium's main process, the leader of its process group.
    child: tokio::process::Child,
    handler: JoinHandle<()>,
    /// False once the CDP connection ended (Chromium exited or crashed).
    alive: Arc<AtomicBool>,
    pub tabs: Vec<Tab>,
    pub active: usize,
    /// Tabs whose navigation never finished: chromiumoxide holds their next navigation, so
    /// the next one replaces the tab.
    pub stuck: Vec<String>,
    /// What the agent must be told with its next result.
    pub pending_notice: Option<String>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("tabs", &self.tabs.iter().map(|t| &t.id).collect::<Vec<_>>())
            .field("active", &self.active)
            .finish_non_exhaustive()
    }
}

/// The short id of a tab: the last four characters of its CDP target id (as upstream shows).
pub(crate) fn tab_id(page: &Page) -> String {
    let id = page.target_id().as_ref();
    let start = id.len().saturating_sub(4);
    id[start..].to_ascii_uppercase()
}

/// Clears the flag when dropped.
struct ClearOnDrop(Arc<AtomicBool>);

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        self.0.store(false, Ordering::SeqCst);
    }
}

/// How long Chromium may take to print its DevTools address.
const LAUNCH_LIMIT: Duration = Duration::from_secs(30);
/// Longest line of Chromium's stderr read (longer ones are skipped).
const MAX_STDERR_LINE: usize = 16 * 1024;

/// The flags automation tools pass to Chromium (as chromiumoxide and Puppeteer do).
const DEFAULT_ARGS: &[&str] = &[
    "--disable-background-networking",
    "--enable-features=NetworkService,NetworkServiceInProcess",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--disable-component-extensions-with-background-pages",
    "--disable-default-apps",
    "--disable-dev-shm-usage",
    "--disable-features=TranslateUI",
    "--disable-hang-monitor",
    "--disable-ipc-flooding-protection",
    "--disable-popup-blocking",
    "--disable-prompt-on-repost",
    "--disable-renderer-backgrounding",
    "--disable-sync",
    "--force-color-profile=srgb",
    "--metrics-recording-only",
    "--no-first-run",
    "--enable-automation",
    "--password-store=basic",
    "--use-mock-keychain",
    "--enable-blink-features=IdleDetection",
    "--lang=en_US",
    "--disable-extensions",
    "--remote-debugging-port=0",
    "--hide-scrollbars",
    "--mute-audio",
    "--disable-gpu",
];

/// Why Chromium did not come up, with the first lines it printed.
#[derive(Debug, thiserror::Error)]
enum StartFailure {
    #[error("could not start it: {0}")]
    Spawn(std::io::Error),
    #[error("its stderr could not be read")]
    NoStderr,
    #[error("no DevTools address within {} s{}", LAUNCH_LIMIT.as_secs(), said_suffix(.0))]
    Silent(Vec<String>),
    #[error("it exited before it printed its DevTools address{}", said_suffix(.0))]
    Exited(Vec<String>),
}

fn said_suffix(said: &[String]) -> String {
    if said.is_empty() {
        String::new()
    } else {
        format!(": {}", said.join(" / "))
    }
}

/// Starts Chromium and reads the DevTools address it prints; the rest of its stderr is
/// drained (and dropped) so it never blocks on a full pipe.
async fn start_chromium(
    config: &BrowserConfig,
) -> Result<(tokio::process::Child, String), StartFailure> {
    let (w, h) = config.viewport;
    let mut cmd = tokio::process::Command::new(&config.executable);
    cmd.args(DEFAULT_ARGS)
        .arg(format!("--user-data-dir={}", config.profile_dir.display()))
        .arg(format!("--window-size={w},{h}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    if config.headless {
        cmd.arg("--headless");
    }
    if is_root() {
        cmd.args(["--no-sandbox", "--disable-setuid-sandbox"]);
    }
    let mut child =
        tandem_process::spawn_tokio(cmd, Isolation::Group, nix::sys::signal::Signal::SIGKILL)
            .await
            .map_err(StartFailure::Spawn)?;
    let stderr = child.stderr.take().ok_or(StartFailure::NoStderr)?;
    let mut lines = tokio_util::codec::FramedRead::new(
        stderr,
        tokio_util::codec::LinesCodec::new_with_max_length(MAX_STDERR_LINE),
    );
    let mut said = Vec::new();
    let found = tokio::time::timeout(LAUNCH_LIMIT, async {
        while let Some(line) = lines.next().await {
            let Ok(line) = line else { continue };
            if let Some((_, ws)) = line.rsplit_once("listening on ")
                && ws.starts_with("ws")
                && ws.contains("devtools/browser")
            {
                return Some(ws.trim().to_owned());
            }
            if said.len() < 5 {
                said.push(line);
            }
        }
        None
    })
    .await;
    let url = match found {
        Ok(Some(url)) => url,
        failed => {
            if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                tandem_process::stop_group(pid, Duration::from_millis(500)).await;
            }
            let _ = child.wait().await;
            return Err(if failed.is_err() {
                StartFailure::Silent(said)
            } else {
                StartFailure::Exited(said)
            });
        }
    };
    tokio::spawn(async move { while lines.next().await.is_some() {} });
    Ok((child, url))
}

/// Whether this process runs as root (Chromium's sandbox refuses root).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

impl Engine {
    /// Starts Chromium with one blank tab.
    pub async fn launch(config: &BrowserConfig) -> Result<Self, BrowserError> {
        let path = config.executable.display().to_string();
        let launch_error = |reason: String| BrowserError::Launch {
            path: path.clone(),
            reason,
        };
        if !config.executable.exists() {
            return Err(launch_error(
                "no such file; install Debian's `chromium` package or set TANDEM_CHROMIUM to a Chromium binary".into(),
            ));
        }
        if let Err(e) = std::fs::create_dir_all(&config.profile_dir) {
            return Err(launch_error(format!(
                "cannot create the profile folder {}: {e}",
                config.profile_dir.display()
            )));
        }
        let (w, h) = config.viewport;
        let (mut child, url) = start_chromium(config)
            .await
            .map_err(|e| launch_error(e.to_string()))?;
        let handler_config = HandlerConfig {
            viewport: Some(Viewport {
                width: w,
                height: h,
                device_scale_factor: Some(1.0),
                ..Viewport::default()
            }),
            request_timeout: config.command_timeout,
            ..HandlerConfig::default()
        };
        let (browser, mut handler) =
            match chromiumoxide::Browser::connect_with_config(url, handler_config).await {
                Ok(connected) => connected,
                Err(e) => {
                    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
                        tandem_process::stop_group(pid, Duration::from_millis(500)).await;
                    }
                    let _ = child.wait().await;
                    return Err(launch_error(format!("cannot connect to it: {e}")));
                }
            };
        let alive = Arc::new(AtomicBool::new(true));
        let flag = Arc::clone(&alive);
        let handler = tokio::spawn(async move {
            // Cleared however the loop ends, a panic of the handler included.
            let _alive = ClearOnDrop(flag);
            // Chromium 156 sends messages chromiumoxide's types do not know; those are errors
            // of one message, not of the connection, so the loop goes on until the stream ends.
            // A WebSocket error means the connection is gone (Chromium exited or was killed).
            while let Some(event) = handler.next().await {
                match event {
                    Ok(()) => {}
                    Err(chromiumoxide::error::CdpError::Ws(e)) => {
                        tracing::debug!(error = %e, "the CDP connection ended");
                        break;
                    }
                    Err(e) => tracing::trace!(error = %e, "CDP message skipped"),
                }
            }
        });
        let mut engine = Self {
            browser,
            child,
            handler,
            alive,
            tabs: Vec::new(),
            active: 0,
            stuck: Vec::new(),
            pending_notice: None,
        };
        let page = engine
            .browser
            .new_page("about:blank")
            .await
            .map_err(|e| launch_error(format!("no first tab: {e}")))?;
        engine.tabs.push(Tab {
            id: tab_id(&page),
            page,
        });
        Ok(engine)
    }

    /// Whether the CDP connection is up and the process has not exited.
    pub fn is_alive(&mut self) -> bool {
        if !self.alive.load(Ordering::SeqCst) {
            return false;
        }
        !matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// Keeps `notice` for the agent's next result.
    pub fn tell(&mut self, notice: Option<String>) {
        if let Some(n) = notice {
            self.pending_notice = Some(match self.pending_notice.take() {
                Some(before) => format!("{before} {n}"),
                None => n,
            });
        }
    }

    /// The tab the agent acts on.
    pub fn active_page(&self) -> Option<&Page> {
        self.tabs.get(self.active).map(|t| &t.page)
    }

    /// The active tab's page.
    pub fn page(&self) -> Result<Page, BrowserError> {
        self.active_page().cloned().ok_or(BrowserError::NotRunning)
    }

    /// Opens a tab at `url` and makes it active.
    pub async fn open_tab(&mut self, url: &str) -> Result<Page, BrowserError> {
        let page = self.browser.new_page(url).await?;
        self.tabs.push(Tab {
            id: tab_id(&page),
            page: page.clone(),
        });
        self.active = self.tabs.len() - 1;
        Ok(page)
    }

    /// Replaces the active tab by a new one at `url` (for a tab whose load never finished).
    pub async fn replace_active(
        &mut self,
        url: &str,
        limit: std::time::Duration,
    ) -> Result<Page, BrowserError> {
        let page = match tokio::time::timeout(limit, self.browser.new_page(url)).await {
            Ok(page) => page?,
            Err(_) => {
                return Err(BrowserError::Cdp(format!(
                    "{url} did not open within {} s",
                    limit.as_secs()
                )));
            }
        };
        if let Some(old) = self.tabs.get(self.active).cloned() {
            self.stuck.retain(|id| id != &old.id);
            let _ = old.page.close().await;
            self.tabs[self.active] = Tab {
                id: tab_id(&page),
                page: page.clone(),
            };
        } else {
            self.tabs.push(Tab {
                id: tab_id(&page),
                page: page.clone(),
            });
            self.active = self.tabs.len() - 1;
        }
        Ok(page)
    }

    /// Brings the tab list in line with Chromium's: tabs a page opened are added (and the
    /// newest becomes active when `follow_new` is set), tabs that closed are dropped. Answers
    /// whether the active tab disappeared.
    pub async fn sync_tabs(&mut self, follow_new: bool) -> Result<bool, BrowserError> {
        let pages = self.browser.pages().await?;
        let active_id = self.tabs.get(self.active).map(|t| t.id.clone());
        self.tabs
            .retain(|t| pages.iter().any(|p| p.target_id() == t.page.target_id()));
        let mut added = false;
        for page in pages {
            // Only tabs the agent's pages opened are adopted (Chromium's own start page is
            // not one).
            let opened_by_ours = page
                .opener_id()
                .as_ref()
                .is_some_and(|o| self.tabs.iter().any(|t| t.page.target_id() == o));
            if opened_by_ours
                && !self
                    .tabs
                    .iter()
                    .any(|t| t.page.target_id() == page.target_id())
            {
                self.tabs.push(Tab {
                    id: tab_id(&page),
                    page,
                });
                added = true;
            }
        }
        let lost = match &active_id {
            Some(id) => !self.tabs.iter().any(|t| &t.id == id),
            None => true,
        };
        if added && follow_new {
            self.active = self.tabs.len().saturating_sub(1);
        } else if let Some(i) = active_id.and_then(|id| self.tabs.iter().position(|t| t.id == id)) {
            self.active = i;
        } else {
            self.active = self.tabs.len().saturating_sub(1);
        }
        if self.tabs.is_empty() {
            self.open_tab("about:blank").await?;
        }
        Ok(lost)
    }

    /// Closes Chromium and waits for it: asked over CDP, then its whole process group is
    /// stopped (SIGTERM, SIGKILL after a grace) so none of its helpers stays behind.
    pub async fn shutdown(mut self) {
        let pgid = self.child.id().and_then(|p| i32::try_from(p).ok());
        let closed = tokio::time::timeout(Duration::from_secs(3), self.browser.close()).await;
        if matches!(closed, Ok(Ok(_))) {
            let _ = tokio::time::timeout(Duration::from_secs(3), self.child.wait()).await;
        }
        if let Some(pgid) = pgid {
            tandem_process::stop_group(pgid, tandem_process::DEFAULT_GRACE).await;
        }
        let _ = tokio::time::timeout(Duration::from_secs(3), self.child.wait()).await;
        self.handler.abort();
    }

    /// The process id of Chromium's main process.
    pub fn pid(&mut self) -> Option<u32> {
        self.child.id()
    }
    /// The CDP connection, for browser-wide events (the live view's followers).
    pub fn cdp(&self) -> &chromiumoxide::Browser {
        &self.browser
    }
}
