//! [`Browser`]: a conversation's browser. Chromium starts at the agent's first browser action;
//! the agent's tools, the live view and a person's input all go through here, and who drives
//! decides whose input counts.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::sync::{Mutex, MutexGuard, oneshot, watch};

use crate::config::BrowserConfig;
use crate::engine::Engine;
use crate::error::BrowserError;
use crate::state::Frame;
use tandem_protocol::{
    BrowserDriver as Driver, BrowserHandoff as Handoff, BrowserState, BrowserTab as TabInfo,
};

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
    /// Where the person was when they took control.
    pub taken_at: std::sync::Mutex<Option<(String, String)>>,
    /// The agent's `browser_request_handoff`, answered at the hand-back.
    pub handoff_reply: std::sync::Mutex<Option<oneshot::Sender<HandBack>>>,
    pub screencast: std::sync::Mutex<Option<crate::screencast::Screencast>>,
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
                taken_at: std::sync::Mutex::new(None),
                handoff_reply: std::sync::Mutex::new(None),
                screencast: std::sync::Mutex::new(None),
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

    /// Who drives.
    pub fn driver(&self) -> Driver {
        self.inner.state.borrow().driver
    }

    /// The engine for an agent action: refused while a person drives; Chromium started (or
    /// restarted after a crash) as needed.
    pub(crate) async fn for_agent(&self) -> Result<Session<'_>, BrowserError> {
        if self.driver() == Driver::Person {
            return Err(BrowserError::PersonDrives);
        }
        self.session(true).await
    }

    /// The engine for a person's input: refused unless they drive; never starts Chromium.
    pub(crate) async fn for_person(&self) -> Result<Session<'_>, BrowserError> {
        if self.driver() != Driver::Person {
            return Err(BrowserError::AgentDrives);
        }
        self.session(false).await
    }

    async fn session(&self, start: bool) -> Result<Session<'_>, BrowserError> {
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
            self.inner.state.send_modify(|s| {
                s.running = false;
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
        let (url, title) = tabs
            .iter()
            .find(|t| t.active)
            .map(|t| (t.url.clone(), t.title.clone()))
            .unwrap_or_default();
        self.inner.state.send_if_modified(|s| {
            let changed = s.url != url || s.title != title || s.tabs != tabs || !s.running;
            s.url = url;
            s.title = title;
            s.tabs = tabs;
            s.running = true;
            changed
        });
        if let Some(page) = engine.active_page() {
            self.point_screencast(page.clone());
        }
    }

    /// A person takes control: the agent's browser actions are refused until the hand-back.
    /// Answers false when they already had it.
    pub fn take_control(&self) -> bool {
        let mut taken = false;
        self.inner.state.send_if_modified(|s| {
            if s.driver == Driver::Person {
                return false;
            }
            s.driver = Driver::Person;
            taken = true;
            true
        });
        if taken {
            let s = self.state();
            if let Ok(mut at) = self.inner.taken_at.lock() {
                *at = Some((s.url, s.title));
            }
        }
        taken
    }

    /// The person hands control back with `note`. Answers what changed, or `None` when the
    /// agent already drove. A pending `browser_request_handoff` receives it as its result.
    pub fn hand_back(&self, note: &str) -> Option<(HandBack, bool)> {
        let mut given = false;
        self.inner.state.send_if_modified(|s| {
            if s.driver != Driver::Person {
                return false;
            }
            s.driver = Driver::Agent;
            s.handoff = None;
            given = true;
            true
        });
        if !given {
            return None;
        }
        let (url_before, title_before) = self
            .inner
            .taken_at
            .lock()
            .ok()
            .and_then(|mut at| at.take())
            .unwrap_or_default();
        let now = self.state();
        let back = HandBack {
            url_before,
            title_before,
            url_after: now.url,
            title_after: now.title,
            note: note.to_owned(),
        };
        let waiting = self
            .inner
            .handoff_reply
            .lock()
            .ok()
            .and_then(|mut r| r.take());
        let answered = match waiting {
            Some(reply) => reply.send(back.clone()).is_ok(),
            None => false,
        };
        Some((back, answered))
    }

    /// Whether the agent is waiting in `browser_request_handoff`.
    pub fn handoff_pending(&self) -> bool {
        self.inner.state.borrow().handoff.is_some()
    }

    /// The agent asks for a person; the answer comes at the hand-back.
    pub(crate) fn request_handoff(&self, reason: &str) -> oneshot::Receiver<HandBack> {
        let (tx, rx) = oneshot::channel();
        if let Ok(mut r) = self.inner.handoff_reply.lock() {
            *r = Some(tx);
        }
        self.inner.state.send_modify(|s| {
            s.handoff = Some(Handoff {
                reason: reason.to_owned(),
            })
        });
        rx
    }

    /// Withdraws a handoff request the agent stopped waiting for (interrupted).
    pub(crate) fn cancel_handoff(&self) {
        if let Ok(mut r) = self.inner.handoff_reply.lock() {
            r.take();
        }
        self.inner
            .state
            .send_if_modified(|s| s.handoff.take().is_some());
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

    /// Starts closing Chromium on the runtime, once however many tools ask (their `close` is
    /// synchronous).
    pub fn close_soon(&self) {
        if self.inner.closing.swap(true, Ordering::SeqCst) {
            return;
        }
        let browser = self.clone();
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { browser.close().await });
        }
    }

    /// Closes Chromium (the conversation closed). Later actions fail with [`BrowserError::Closed`].
    pub async fn close(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        self.cancel_handoff();
        self.stop_screencast();
        if let Ok(mut r) = self.inner.recording.lock() {
            r.take();
        }
        if let Some(engine) = self.inner.engine.lock().await.take() {
            engine.shutdown().await;
        }
        self.inner.state.send_modify(|s| {
            s.running = false;
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
