//! A conversation's browser as it moves to another backend: its cookies, its open tabs and
//! their origins' storage, taken from one Chromium and given to another, so a login made
//! before the move still holds after it.

use chromiumoxide::cdp::browser_protocol::network::CookieParam;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tandem_sdk::Masker;

use crate::actions::{eval_json, location, navigate_page};
use crate::browser::Browser;
use crate::error::BrowserError;
use crate::script;

/// What the browser carries: every cookie Chromium holds, each tab's address (in order) and
/// which is active, and the local and session storage of the tabs' origins. Anything that
/// holds a secret is left out and named in `withheld`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MovedBrowser {
    /// Cookies as CDP's `Storage.getCookies` gives them.
    #[serde(default)]
    pub cookies: Vec<Value>,
    /// The tabs' addresses, in order.
    #[serde(default)]
    pub tabs: Vec<String>,
    /// The index of the active tab.
    #[serde(default)]
    pub active: usize,
    /// `{origin, localStorage: [{name, value}], sessionStorage: [...]}` per origin.
    #[serde(default)]
    pub origins: Vec<Value>,
    /// Cookies and storage items left out because they hold a secret.
    #[serde(default)]
    pub withheld: Vec<String>,
}

/// Whether a page at `url` can be opened again elsewhere (not Chromium's own pages).
fn reopenable(url: &str) -> bool {
    url.starts_with("http://") || url.starts_with("https://") || url.starts_with("file://")
}

impl Browser {
    /// The browser's state to move, or `None` when Chromium is not running (it is never
    /// started for this). Values holding one of `masker`'s secrets stay behind.
    pub async fn export_state(
        &self,
        masker: &Masker,
    ) -> Result<Option<MovedBrowser>, BrowserError> {
        let mut session = match self.session(false).await {
            Ok(s) => s,
            Err(BrowserError::NotRunning) => return Ok(None),
            Err(e) => return Err(e),
        };
        let engine = session.begin().await?;
        let mut moved = MovedBrowser {
            active: engine.active,
            ..MovedBrowser::default()
        };
        for cookie in engine.cdp().get_cookies().await? {
            let value = serde_json::to_value(&cookie).unwrap_or(Value::Null);
            if masker.contains_secret(&cookie.value) {
                moved
                    .withheld
                    .push(format!("cookie {} of {}", cookie.name, cookie.domain));
            } else {
                moved.cookies.push(value);
            }
        }
        for tab in &engine.tabs {
            let (url, _) = location(&tab.page).await;
            moved.tabs.push(url);
            let Ok(mut origin) = eval_json::<Value>(&tab.page, script::STORAGE).await else {
                continue;
            };
            let name = origin["origin"].as_str().unwrap_or_default().to_owned();
            if !name.starts_with("http") || moved.origins.iter().any(|o| o["origin"] == name) {
                continue;
            }
            for kind in ["localStorage", "sessionStorage"] {
                if let Some(items) = origin[kind].as_array_mut() {
                    items.retain(|it| {
                        let secret =
                            masker.contains_secret(it["value"].as_str().unwrap_or_default());
                        if secret {
                            moved.withheld.push(format!(
                                "{kind} {} of {name}",
                                it["name"].as_str().unwrap_or_default()
                            ));
                        }
                        !secret
                    });
                }
            }
            moved.origins.push(origin);
        }
        Ok(Some(moved))
    }

    /// Opens `moved` in this browser: its cookies first, then each tab at its address with
    /// its origin's storage (the page is loaded again when storage was set), and the active
    /// tab as it was. Starts Chromium when there is something to open.
    pub async fn import_state(&self, moved: &MovedBrowser) -> Result<(), BrowserError> {
        let tabs: Vec<&String> = moved.tabs.iter().filter(|u| reopenable(u)).collect();
        if tabs.is_empty() && moved.cookies.is_empty() {
            return Ok(());
        }
        let mut session = self.for_agent().await?;
        let engine = session.begin().await?;
        let cookies: Vec<CookieParam> = moved.cookies.iter().filter_map(cookie_param).collect();
        if !cookies.is_empty() {
            engine.cdp().set_cookies(cookies).await?;
        }
        let timeout = self.config().navigation_timeout;
        for (i, url) in tabs.iter().enumerate() {
            let page = if i == 0 {
                let page = engine.page()?;
                navigate_page(&page, url, timeout).await?;
                page
            } else {
                engine.open_tab(url).await?
            };
            restore_storage(&page, &moved.origins, timeout).await;
        }
        if !tabs.is_empty() {
            // The active tab among those reopened (Chromium's pages are not).
            let before = moved.tabs[..moved.active.min(moved.tabs.len())]
                .iter()
                .filter(|u| reopenable(u))
                .count();
            engine.active = before.min(engine.tabs.len().saturating_sub(1));
            if let Some(page) = engine.active_page() {
                let _ = page.bring_to_front().await;
            }
        }
        self.publish(engine).await;
        Ok(())
    }
}

/// A cookie as `Storage.getCookies` gave it, as `Storage.setCookies` takes it; a session
/// cookie stays one (no expiry).
fn cookie_param(cookie: &Value) -> Option<CookieParam> {
    let mut cookie = cookie.clone();
    let obj = cookie.as_object_mut()?;
    if obj.get("session").and_then(Value::as_bool) == Some(true)
        || obj
            .get("expires")
            .and_then(Value::as_f64)
            .is_some_and(|e| e < 0.0)
    {
        obj.remove("expires");
    }
    serde_json::from_value(cookie).ok()
}

/// Writes the storage moved for `page`'s origin into it, and loads the page again so it
/// reads it.
async fn restore_storage(
    page: &chromiumoxide::Page,
    origins: &[Value],
    timeout: std::time::Duration,
) {
    let Ok(here) = eval_json::<Value>(page, script::STORAGE).await else {
        return;
    };
    let Some(items) = origins.iter().find(|o| o["origin"] == here["origin"]) else {
        return;
    };
    let set: Value = eval_json(page, script::set_storage(items))
        .await
        .unwrap_or(Value::Null);
    if set["set"].as_u64().unwrap_or(0) > 0 {
        let _ = tokio::time::timeout(timeout, page.reload()).await;
    }
}
