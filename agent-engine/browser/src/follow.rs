//! The live view follows the page through CDP's own events, whoever or whatever changed it:
//! a page that redirects itself, a script that sets `document.title`, a slow load, a tab a
//! page opens or closes. The state is published as each event arrives, not only after an
//! agent action or a person's input.
//!
//! - Browser-wide (`Target.targetInfoChanged` / `targetCreated` / `targetDestroyed`): each
//!   tab's URL and title, tabs our pages open, tabs that close.
//! - Per tab (`Page.frameStartedNavigating`, `Page.frameNavigated`,
//!   `Page.navigatedWithinDocument`, `Page.frameStartedLoading`, `Page.frameStoppedLoading`,
//!   `Page.loadEventFired`): the main frame's URL and whether it is loading (from the moment a
//!   navigation starts, before any response has arrived).
//!
//! Followers run on their own tasks and never take the engine lock, so the state moves while
//! an agent action is in flight; each stops with its tab, or with Chromium.

use std::collections::{HashMap, HashSet};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::page::{
    EventFrameNavigated, EventFrameStartedLoading, EventFrameStartedNavigating,
    EventFrameStoppedLoading, EventLoadEventFired, EventNavigatedWithinDocument,
    FrameStartedNavigatingNavigationType as NavigationType,
};
use chromiumoxide::cdp::browser_protocol::target::{
    EventTargetCreated, EventTargetDestroyed, EventTargetInfoChanged, TargetInfo,
};
use chromiumoxide::listeners::EventStream;
use futures::StreamExt;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::browser::Browser;
use crate::engine::Engine;
use tandem_protocol::BrowserTab as TabInfo;

/// The running followers (dropping one stops it).
#[derive(Default)]
pub(crate) struct Followers {
    /// The browser-wide one, for the Chromium running now.
    browser: Option<(CancellationToken, DropGuard)>,
    /// One per followed tab, by CDP target id.
    pages: HashMap<String, DropGuard>,
    /// Short ids of tabs whose main frame is loading.
    loading: HashSet<String>,
}

/// A tab's short id from its CDP target id (as [`crate::engine::tab_id`] makes it).
fn short_id(target_id: &str) -> String {
    let start = target_id.len().saturating_sub(4);
    target_id[start..].to_ascii_uppercase()
}

impl Browser {
    fn followers(&self) -> std::sync::MutexGuard<'_, Followers> {
        self.inner
            .followers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stops every follower (Chromium went away).
    pub(crate) fn stop_following(&self) {
        *self.followers() = Followers::default();
    }

    /// Whether the tab `short` is loading.
    pub(crate) fn is_loading(&self, short: &str) -> bool {
        self.followers().loading.contains(short)
    }

    /// Follows Chromium's tabs and each of the engine's tabs not followed yet.
    pub(crate) async fn follow(&self, engine: &Engine) {
        let running = self.followers().browser.as_ref().map(|(t, _)| t.clone());
        let browser_stop = match running {
            Some(token) => token,
            None => {
                let cdp = engine.cdp();
                let streams = async {
                    Ok::<_, chromiumoxide::error::CdpError>((
                        cdp.event_listener::<EventTargetInfoChanged>().await?,
                        cdp.event_listener::<EventTargetCreated>().await?,
                        cdp.event_listener::<EventTargetDestroyed>().await?,
                    ))
                };
                let streams = match streams.await {
                    Ok(s) => s,
                    Err(e) => {
                        tracing::debug!(error = %e, "cannot follow the browser's tabs");
                        return;
                    }
                };
                let token = CancellationToken::new();
                let mut f = self.followers();
                if let Some((running, _)) = &f.browser {
                    // Another caller started following meanwhile.
                    running.clone()
                } else {
                    f.browser = Some((token.clone(), token.clone().drop_guard()));
                    let me = self.clone();
                    let stop = token.clone();
                    tokio::spawn(async move { me.follow_targets(streams, stop).await });
                    token
                }
            }
        };
        for tab in &engine.tabs {
            self.follow_page(&tab.page, &browser_stop);
        }
    }

    fn follow_page(&self, page: &Page, browser_stop: &CancellationToken) {
        let target = page.target_id().as_ref().to_owned();
        let mut f = self.followers();
        if f.pages.contains_key(&target) {
            return;
        }
        let stop = browser_stop.child_token();
        f.pages.insert(target, stop.clone().drop_guard());
        let me = self.clone();
        let page = page.clone();
        tokio::spawn(async move {
            if let Err(e) = me.follow_tab(page, stop).await {
                tracing::debug!(error = %e, "stopped following a tab");
            }
        });
    }

    async fn follow_targets(
        &self,
        (mut changed, mut created, mut destroyed): (
            EventStream<EventTargetInfoChanged>,
            EventStream<EventTargetCreated>,
            EventStream<EventTargetDestroyed>,
        ),
        stop: CancellationToken,
    ) {
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                e = changed.next() => match e {
                    Some(e) => self.on_target(&e.target_info, false),
                    None => break,
                },
                e = created.next() => match e {
                    Some(e) => self.on_target(&e.target_info, true),
                    None => break,
                },
                e = destroyed.next() => match e {
                    Some(e) => self.on_target_gone(e.target_id.as_ref()),
                    None => break,
                },
            }
        }
    }

    /// A tab's URL or title changed, or a tab opened.
    fn on_target(&self, info: &TargetInfo, created: bool) {
        if info.r#type != "page" {
            return;
        }
        let id = short_id(info.target_id.as_ref());
        let opener = info
            .opener_id
            .as_ref()
            .map(|o| short_id(o.as_ref()))
            .unwrap_or_default();
        self.inner.state.send_if_modified(|s| {
            if let Some(tab) = s.tabs.iter_mut().find(|t| t.id == id) {
                let changed = tab.url != info.url || tab.title != info.title;
                tab.url.clone_from(&info.url);
                tab.title.clone_from(&info.title);
                if tab.active {
                    s.url.clone_from(&info.url);
                    s.title.clone_from(&info.title);
                }
                changed
            } else if created && s.tabs.iter().any(|t| t.id == opener) {
                // A tab one of ours opened (the agent's next action adopts it as well).
                s.tabs.push(TabInfo {
                    id,
                    url: info.url.clone(),
                    title: info.title.clone(),
                    active: false,
                });
                true
            } else {
                false
            }
        });
    }

    fn on_target_gone(&self, target_id: &str) {
        let id = short_id(target_id);
        {
            let mut f = self.followers();
            f.pages.remove(target_id);
            f.loading.remove(&id);
        }
        self.inner.state.send_if_modified(|s| {
            let before = s.tabs.len();
            s.tabs.retain(|t| t.id != id || t.active);
            s.tabs.len() != before
        });
    }

    async fn follow_tab(
        &self,
        page: Page,
        stop: CancellationToken,
    ) -> Result<(), chromiumoxide::error::CdpError> {
        let target = page.target_id().as_ref().to_owned();
        let id = short_id(&target);
        let mut navigated = page.event_listener::<EventFrameNavigated>().await?;
        let mut within = page
            .event_listener::<EventNavigatedWithinDocument>()
            .await?;
        let mut navigating = page.event_listener::<EventFrameStartedNavigating>().await?;
        let mut started = page.event_listener::<EventFrameStartedLoading>().await?;
        let mut stopped = page.event_listener::<EventFrameStoppedLoading>().await?;
        let mut loaded = page.event_listener::<EventLoadEventFired>().await?;
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                e = navigated.next() => match e {
                    Some(e) if e.frame.parent_id.is_none() => {
                        let url = match &e.frame.url_fragment {
                            Some(fragment) => format!("{}{fragment}", e.frame.url),
                            None => e.frame.url.clone(),
                        };
                        self.tab_changed(&id, Some(url), None);
                    }
                    Some(_) => {}
                    None => break,
                },
                e = within.next() => match e {
                    Some(e) if e.frame_id.as_ref() == target => {
                        self.tab_changed(&id, Some(e.url.clone()), None);
                    }
                    Some(_) => {}
                    None => break,
                },
                e = navigating.next() => match e {
                    Some(e) if e.frame_id.as_ref() == target
                        && !matches!(
                            e.navigation_type,
                            NavigationType::SameDocument | NavigationType::HistorySameDocument
                        ) => self.tab_changed(&id, None, Some(true)),
                    Some(_) => {}
                    None => break,
                },
                e = started.next() => match e {
                    Some(e) if e.frame_id.as_ref() == target => self.tab_changed(&id, None, Some(true)),
                    Some(_) => {}
                    None => break,
                },
                e = stopped.next() => match e {
                    Some(e) if e.frame_id.as_ref() == target => {
                        self.tab_changed(&id, None, Some(false));
                        self.read_location(&page, &id).await;
                    }
                    Some(_) => {}
                    None => break,
                },
                e = loaded.next() => match e {
                    Some(_) => {
                        self.tab_changed(&id, None, Some(false));
                        // A title set while the document was parsed is not always announced
                        // by Target.targetInfoChanged: read it once the page has loaded.
                        self.read_location(&page, &id).await;
                    }
                    None => break,
                },
            }
        }
        Ok(())
    }

    /// Reads the URL and title the tab shows now and publishes them.
    async fn read_location(&self, page: &Page, id: &str) {
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(2),
            crate::actions::location(page),
        );
        let Ok((url, title)) = read.await else { return };
        if url.is_empty() {
            return;
        }
        self.inner.state.send_if_modified(|s| {
            let Some(tab) = s.tabs.iter_mut().find(|t| t.id == id) else {
                return false;
            };
            let changed = tab.url != url || tab.title != title;
            tab.url.clone_from(&url);
            tab.title.clone_from(&title);
            if tab.active {
                let active_changed = s.url != url || s.title != title;
                s.url = url;
                s.title = title;
                return changed || active_changed;
            }
            changed
        });
    }

    /// Publishes a tab's new URL or loading state.
    fn tab_changed(&self, id: &str, url: Option<String>, loading: Option<bool>) {
        if let Some(loading) = loading {
            let mut f = self.followers();
            if loading {
                f.loading.insert(id.to_owned());
            } else {
                f.loading.remove(id);
            }
        }
        self.inner.state.send_if_modified(|s| {
            let Some(tab) = s.tabs.iter_mut().find(|t| t.id == id) else {
                return false;
            };
            let mut changed = false;
            if let Some(url) = &url
                && &tab.url != url
            {
                tab.url.clone_from(url);
                changed = true;
            }
            if tab.active {
                if let Some(url) = url {
                    changed |= s.url != url;
                    s.url = url;
                }
                if let Some(loading) = loading {
                    changed |= s.loading != loading;
                    s.loading = loading;
                }
            }
            changed
        });
    }
}
