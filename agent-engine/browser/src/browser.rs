//! [`Browser`]: a conversation's browser. Chromium starts at the agent's first browser action;
//! the agent's tools, the live view and a person's input all go through here, and who drives
//! decides whose input counts.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::sync::{Mutex, MutexGuard, watch};

use crate::config::BrowserConfig;
use crate::engine::Engine;
use crate::error::BrowserError;
use crate::state::Frame;
use tandem_protocol::{BrowserDriver as Driver, BrowserState, BrowserTab as TabInfo};

/// What a person's hand-back tells the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HandBack {
    /// URL when the person took control.
    pub url_before: String,
    /// Title then.
    pub title_before: String,
    /// URL when they handed back.
    pub url_after: String,
    /// Title now.
    pub title_after: String,
    /// Their note (may be empty).
    pub note: String,
}

impl HandBack {
    /// The sentence the agent reads.
    pub fn describe(&self) -> String {
        let mut s = format!(
            "The person handed the browser back. Before: {} ({}). Now: {} ({}).",
            self.url_before,
            quoted(&self.title_before),
            self.url_after,
            quoted(&self.title_after)
        );
        if !self.note.trim().is_empty() {
            s.push_str(&format!(" Their note: {}", self.note.trim()));
        }
        s
    }
}

fn quoted(title: &str) -> String {
    if title.is_empty() {
        "no title".into()
    } else {
        format!("\"{title}\"")
    }
}

/// Shared by the tools, the live view and the server.
pub(crate) struct Inner {
    pub config: BrowserConfig,
    pub engine: Mutex<Option<Engine>>,
    pub state: watch::Sender<BrowserState>,
    pub frames: watch::Sender<Option<Frame>>,
    pub frame_seq: AtomicU64,
    /// Live views and recordings watching; the screencast runs while this is above zero.
    pub viewers: AtomicUsize,
    /// Who drives: the one state machine (see `control.rs`).
    pub control: std::sync::Mutex<crate::control::Control>,
    /// Takeovers and hand-backs take turns (see `control.rs`).
    pub turn: Arc<Mutex<()>>,
    /// The CDP event followers that keep the state true (see `follow.rs`).
    pub followers: std::sync::Mutex<crate::follow::Followers>,
    /// What a person typed into password fields (see `secrets.rs`).
    pub typed: std::sync::Mutex<crate::secrets::Typed>,
    pub screencast: std::sync::Mutex<Option<crate::screencast::Screencast>>,
    /// Held by a screencast's task for its whole life, its stop command included, so the next
    /// one's start reaches Chromium only after the last one's stop.
    pub screencast_turn: Mutex<()>,
    pub recording: std::sync::Mutex<Option<crate::recording::Recording>>,
    pub closed: std::sync::atomic::AtomicBool,
    /// Set by the first [`Browser::close_soon`].
    pub closing: std::sync::atomic::AtomicBool,
}

/// A conversation's browser (cheap to clone).
#[derive(Clone)]
pub struct Browser {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Browser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Browser")
            .field("state", &*self.inner.state.borrow())
            .finish_non_exhaustive()
    }
}

/// The engine, locked for one action, and what the agent must be told about it first.
pub(crate) struct Session<'a> {
    pub guard: MutexGuard<'a, Option<Engine>>,
    /// "The browser had crashed and was restarted" when it had.
    pub notice: Option<String>,
}

impl Session<'_> {
    pub fn engine(&mut self) -> Result<&mut Engine, BrowserError> {
        self.guard.as_mut().ok_or(BrowserError::NotRunning)
    }

    /// The engine with its tabs brought up to date. What the agent must be told first (a
    /// restart after a crash, the tab it was on closed) waits in the engine until an action
    /// finishes and reports it, so an action that fails on a vanished tab does not lose it.
    pub async fn begin(&mut self) -> Result<&mut Engine, BrowserError> {
        let restarted = self.notice.take();
        let engine = self.guard.as_mut().ok_or(BrowserError::NotRunning)?;
        engine.tell(restarted);
        if engine.sync_tabs(false).await? {
            let now = engine
                .tabs
                .get(engine.active)
                .map(|t| t.id.clone())
                .unwrap_or_default();
            engine.tell(Some(format!(
                "The tab you were on was closed; the active tab is now {now}."
            )));
        }
        Ok(engine)
    }
}

impl Browser {
    /// A browser that starts Chromium when first used.
    pub fn new(config: BrowserConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                config,
                engine: Mutex::new(None),
                state: watch::Sender::new(BrowserState::default()),
                frames: watch::Sender::new(None),
                frame_seq: AtomicU64::new(0),
                viewers: AtomicUsize::new(0),
                control: std::sync::Mutex::new(crate::control::Control::default()),
                turn: Arc::new(Mutex::new(())),
                followers: std::sync::Mutex::new(crate::follow::Followers::default()),
                typed: std::sync::Mutex::new(crate::secrets::Typed::default()),
                screencast: std::sync::Mutex::new(None),
                screencast_turn: Mutex::new(()),
                recording: std::sync::Mutex::new(None),
                closed: std::sync::atomic::AtomicBool::new(false),
                closing: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &BrowserConfig {
        &self.inner.config
    }

    /// The current state.
    pub fn state(&self) -> BrowserState {
        self.inner.state.borrow().clone()
    }

    /// Follows the state: every change is seen.
    pub fn watch_state(&self) -> watch::Receiver<BrowserState> {
        self.inner.state.subscribe()
    }

    /// The engine for an agent action: refused while a person drives; Chromium started (or
    /// restarted after a crash) as needed. The driver is checked again once the engine is
    /// held: a takeover waits for that lock, so no agent action runs while a person drives.
    pub(crate) async fn for_agent(&self) -> Result<Session<'_>, BrowserError> {
        if self.driver() == Driver::Person {
            return Err(BrowserError::PersonDrives);
        }
        let session = self.session(true).await?;
        if self.driver() == Driver::Person {
            return Err(BrowserError::PersonDrives);
        }
        Ok(session)
    }

    /// The engine for a person's input: refused unless they drive (checked with the engine
    /// held, as for the agent); never starts Chromium.
    pub(crate) async fn for_person(&self) -> Result<Session<'_>, BrowserError> {
        if self.driver() != Driver::Person {
            return Err(BrowserError::AgentDrives);
        }
        let session = self.session(false).await?;
        if self.driver() != Driver::Person {
            return Err(BrowserError::AgentDrives);
        }
        Ok(session)
    }

    pub(crate) async fn session(&self, start: bool) -> Result<Session<'_>, BrowserError> {
        if self.inner.closed.load(Ordering::SeqCst) {
            return Err(BrowserError::Closed);
        }
        let mut guard = self.inner.engine.lock().await;
        let mut notice = None;
        let crashed = match guard.as_mut() {
            Some(engine) => !engine.is_alive(),
            None => false,
        };
        if crashed {
            if let Some(old) = guard.take() {
                old.shutdown().await;
            }
            self.stop_screencast();
            self.stop_following();
            self.inner.state.send_modify(|s| {
                s.running = false;
                s.loading = false;
                s.tabs.clear();
            });
            notice = Some(
                "The browser had stopped (it crashed or was killed) and was restarted; the pages that were open are gone."
                    .to_owned(),
            );
        }
        if guard.is_none() {
            if !start {
                return Err(BrowserError::NotRunning);
            }
            let engine = Engine::launch(&self.inner.config).await?;
            self.follow(&engine).await;
            *guard = Some(engine);
            self.inner.state.send_modify(|s| s.running = true);
        }
        Ok(Session { guard, notice })
    }

    /// Refreshes URL, title and tabs in the state from Chromium, and points the screencast at
    /// the active tab.
    pub(crate) async fn publish(&self, engine: &mut Engine) {
        let mut tabs = Vec::with_capacity(engine.tabs.len());
        for (i, tab) in engine.tabs.iter().enumerate() {
            let (url, title) = crate::actions::location(&tab.page).await;
            tabs.push(TabInfo {
                id: tab.id.clone(),
                url,
                title,
                active: i == engine.active,
            });
        }
        let (url, title, loading) = tabs
            .iter()
            .find(|t| t.active)
            .map(|t| (t.url.clone(), t.title.clone(), self.is_loading(&t.id)))
            .unwrap_or_default();
        self.inner.state.send_if_modified(|s| {
            let changed = s.url != url
                || s.title != title
                || s.tabs != tabs
                || s.loading != loading
                || !s.running;
            s.url = url;
            s.title = title;
            s.tabs = tabs;
            s.loading = loading;
            s.running = true;
            changed
        });
        // Tabs opened since are followed from now on.
        self.follow(engine).await;
        if let Some(page) = engine.active_page() {
            self.point_screencast(page.clone());
        }
    }

    /// Follows the live frames (the screencast runs while someone follows). The latest frame
    /// is always the one seen; a slow reader skips frames instead of queueing them.
    pub fn watch_frames(&self) -> FrameWatch {
        self.inner.viewers.fetch_add(1, Ordering::SeqCst);
        let browser = self.clone();
        tokio::spawn(async move {
            if let Ok(mut session) = browser.session(false).await
                && let Ok(engine) = session.engine()
                && let Some(page) = engine.active_page()
            {
                browser.point_screencast(page.clone());
            }
        });
        FrameWatch {
            rx: self.inner.frames.subscribe(),
            browser: self.clone(),
        }
    }

    /// Follows the live frames without asking for them: the screencast runs only while a
    /// viewer ([`watch_frames`](Self::watch_frames)) watches, and this sees its frames then
    /// (for a recording that must cost nothing when no one watches).
    pub fn frames_passively(&self) -> watch::Receiver<Option<Frame>> {
        self.inner.frames.subscribe()
    }

    /// A JPEG (base64, quality 40: a replay frame, encoded by Chromium) of what the active
    /// tab shows, and its address, when Chromium runs; waits for the agent's or the person's
    /// action in progress to end. `None` when the browser is not running or the capture fails.
    /// (A scaled capture would change the live screencast's size while it runs: not done.)
    pub async fn capture(&self) -> Option<(String, String)> {
        use chromiumoxide::cdp::browser_protocol::page::{
            CaptureScreenshotFormat, CaptureScreenshotParams,
        };
        let mut session = self.session(false).await.ok()?;
        let page = session.engine().ok()?.active_page()?.clone();
        let shot = page
            .execute(CaptureScreenshotParams {
                format: Some(CaptureScreenshotFormat::Jpeg),
                quality: Some(40),
                ..CaptureScreenshotParams::default()
            })
            .await
            .ok()?;
        drop(session);
        let data: &str = shot.result.data.as_ref();
        Some((data.to_owned(), self.state().url))
    }

    /// Starts closing Chromium on the runtime, once however many tools ask (their `close` is
    /// synchronous). Without a runtime (the conversation dropped as its process ends) Chromium's
    /// process group is stopped here, blocking, so it never outlives its browser.
    pub fn close_soon(&self) {
        if self.inner.closing.swap(true, Ordering::SeqCst) {
            return;
        }
        let browser = self.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { browser.close().await });
            return;
        }
        self.inner.closed.store(true, Ordering::SeqCst);
        self.cancel_handoff();
        let pid = match self.inner.engine.try_lock() {
            Ok(mut engine) => engine.as_mut().and_then(Engine::pid),
            // An action in flight holds it and, its runtime gone, never lets go: Chromium's
            // parent-death signal and the next server's sweep are left for that one.
            Err(_) => None,
        };
        if let Some(pgid) = pid.and_then(|p| i32::try_from(p).ok()) {
            tandem_process::stop_group_blocking(pgid, tandem_process::DEFAULT_GRACE);
        }
    }

    /// Closes Chromium (the conversation closed). Later actions fail with [`BrowserError::Closed`].
    pub async fn close(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        self.cancel_handoff();
        self.stop_screencast();
        self.stop_following();
        if let Ok(mut r) = self.inner.recording.lock() {
            r.take();
        }
        if let Some(engine) = self.inner.engine.lock().await.take() {
            engine.shutdown().await;
        }
        self.inner.state.send_modify(|s| {
            s.running = false;
            s.loading = false;
            s.tabs.clear();
        });
    }

    /// Chromium's main process id, while it runs (for measuring and tests).
    pub async fn pid(&self) -> Option<u32> {
        self.inner
            .engine
            .lock()
            .await
            .as_mut()
            .and_then(Engine::pid)
    }

    pub(crate) fn next_frame_seq(&self) -> u64 {
        self.inner.frame_seq.fetch_add(1, Ordering::SeqCst) + 1
    }
}

/// A subscription to the live frames; dropping it lets the screencast stop.
pub struct FrameWatch {
    /// The latest frame.
    pub rx: watch::Receiver<Option<Frame>>,
    browser: Browser,
}

impl std::fmt::Debug for FrameWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameWatch").finish_non_exhaustive()
    }
}

impl Drop for FrameWatch {
    fn drop(&mut self) {
        if self.browser.inner.viewers.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.browser.stop_screencast();
        }
    }
}
