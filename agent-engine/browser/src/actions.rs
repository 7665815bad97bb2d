//! The agent's browser actions, as upstream's tools define them. Each answers the text the
//! model reads (and a screenshot when asked); failures the model can act on are errors with a
//! message saying what to do.

use std::time::{Duration, Instant};

use chromiumoxide::Page;
use chromiumoxide::cdp::browser_protocol::input::{
    DispatchMouseEventParams, DispatchMouseEventType, InsertTextParams, MouseButton,
};
use chromiumoxide::cdp::browser_protocol::page::{
    CaptureScreenshotFormat, CaptureScreenshotParams, GetNavigationHistoryParams, NavigateParams,
    NavigateToHistoryEntryParams, StopLoadingParams,
};
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::browser::Browser;
use crate::engine::Engine;
use crate::error::BrowserError;
use crate::script;

/// What an action answers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// What the model reads.
    pub text: String,
    /// Base64 PNG of the viewport, when asked for.
    pub screenshot: Option<String>,
    /// Whether the action failed.
    pub is_error: bool,
}

impl Outcome {
    fn ok(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    fn error(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
            ..Self::default()
        }
    }
}

/// How long after a click a navigation it causes has begun.
pub(crate) const CLICK_GRACE: Duration = Duration::from_millis(50);

/// How many characters of page content one `browser_get_content` returns.
pub const CONTENT_PAGE: usize = 20_000;

/// Evaluates `expr` in the page's current document and answers its value. Raw
/// `Runtime.evaluate` without a context id always reaches the document the tab shows now,
/// also after a navigation that never finished loading.
pub(crate) async fn eval(page: &Page, expr: impl Into<String>) -> Result<Value, BrowserError> {
    let mut params = EvaluateParams::new(expr.into());
    params.return_by_value = Some(true);
    params.await_promise = Some(true);
    let reply = page.execute(params).await?;
    if let Some(ex) = &reply.result.exception_details {
        return Err(BrowserError::Cdp(format!(
            "the page's script failed: {}",
            ex.text
        )));
    }
    Ok(reply.result.result.value.clone().unwrap_or(Value::Null))
}

/// Evaluates `expr` (which returns a JSON string) and parses it.
pub(crate) async fn eval_json<T: serde::de::DeserializeOwned>(
    page: &Page,
    expr: impl Into<String>,
) -> Result<T, BrowserError> {
    let value = eval(page, expr).await?;
    let text = value.as_str().unwrap_or_default();
    serde_json::from_str(text)
        .map_err(|e| BrowserError::Cdp(format!("the page answered something unexpected: {e}")))
}

/// URL and title of the document `page` shows.
pub(crate) async fn location(page: &Page) -> (String, String) {
    match eval_json::<Value>(page, "JSON.stringify([location.href, document.title])").await {
        Ok(Value::Array(v)) => (
            v.first()
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            v.get(1)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        ),
        _ => (String::new(), String::new()),
    }
}

#[derive(Deserialize)]
struct Located {
    #[serde(default)]
    missing: bool,
    #[serde(default)]
    x: f64,
    #[serde(default)]
    y: f64,
    #[serde(default)]
    href: Option<String>,
}

fn not_found(index: i64) -> Outcome {
    Outcome::error(format!(
        "Element with index {index} not found. The page may have changed: call browser_get_state for the current indices."
    ))
}

/// Sends a left click at (x, y) in viewport CSS pixels.
pub(crate) async fn click_at(
    page: &Page,
    x: f64,
    y: f64,
    modifiers: i64,
) -> Result<(), BrowserError> {
    for kind in [
        DispatchMouseEventType::MouseMoved,
        DispatchMouseEventType::MousePressed,
        DispatchMouseEventType::MouseReleased,
    ] {
        let pressed = kind != DispatchMouseEventType::MouseMoved;
        let mut p = DispatchMouseEventParams::new(kind, x, y);
        p.modifiers = Some(modifiers);
        if pressed {
            p.button = Some(MouseButton::Left);
            p.buttons = Some(1);
            p.click_count = Some(1);
        }
        page.execute(p).await?;
    }
    Ok(())
}

/// Waits until the page has loaded (or `limit` passes): answers whether it has.
pub(crate) async fn settle(page: &Page, limit: Duration) -> bool {
    let end = Instant::now() + limit;
    loop {
        let state =
            tokio::time::timeout(Duration::from_secs(2), eval(page, script::READY_STATE)).await;
        if let Ok(Ok(v)) = state
            && v == "complete"
        {
            return true;
        }
        if Instant::now() >= end {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
}

impl Browser {
    /// Finishes an action: refreshes the state and puts what the agent must be told first.
    async fn finish(&self, engine: &mut Engine, mut out: Outcome) -> Outcome {
        self.publish(engine).await;
        if let Some(n) = engine.pending_notice.take() {
            out.text = format!("{n}\n\n{}", out.text);
        }
        out
    }

    /// `browser_navigate`.
    pub async fn navigate(&self, url: &str, new_tab: bool) -> Result<Outcome, BrowserError> {
        let url = url.trim();
        if url.is_empty() {
            return Ok(Outcome::error("The URL is empty."));
        }
        let mut s = self.for_agent().await?;
        let timeout = self.inner.config.navigation_timeout;
        let engine = s.begin().await?;
        let stuck = engine
            .tabs
            .get(engine.active)
            .is_some_and(|t| engine.stuck.contains(&t.id));
        let out = if stuck && !new_tab {
            // The tab's last load never finished: a fresh tab takes its place.
            match engine.replace_active(&with_scheme(url), timeout).await {
                Ok(page) => {
                    let loaded = settle(&page, timeout).await;
                    let mut text = format!("Navigated to: {}", with_scheme(url));
                    if !loaded {
                        text.push_str("\nThe page had not finished loading; what has loaded so far can be read.");
                    }
                    Outcome::ok(text)
                }
                Err(e) => Outcome::error(format!("Could not open {url}: {e}")),
            }
        } else {
            let page = if new_tab {
                engine.open_tab("about:blank").await?
            } else {
                engine.page()?
            };
            let out = navigate_page(&page, url, timeout).await?;
            if out.text.contains("had not finished loading") {
                engine.stuck.push(crate::engine::tab_id(&page));
            }
            out
        };
        let out = self.finish(engine, out).await;
        Ok(out)
    }

    /// `browser_click`.
    pub async fn click(&self, index: i64, new_tab: bool) -> Result<Outcome, BrowserError> {
        let mut s = self.for_agent().await?;
        let timeout = self.inner.config.navigation_timeout;
        let engine = s.begin().await?;
        let page = engine.page()?;
        let at: Located = eval_json(&page, script::locate(index)).await?;
        if at.missing {
            return Ok(self.finish(engine, not_found(index)).await);
        }
        let tabs_before = engine.tabs.len();
        if new_tab && let Some(href) = at.href.filter(|h| !h.is_empty()) {
            let tab = engine.open_tab("about:blank").await?;
            let out = navigate_page(&tab, &href, timeout).await?;
            let text = format!(
                "Clicked element {index}; opened {href} in a new tab.\n{}",
                out.text
            );
            return Ok(self.finish(engine, Outcome { text, ..out }).await);
        }
        if let Err(e) = click_at(&page, at.x, at.y, 0).await {
            // A click that closes its own tab gets no answer: tell that apart from a failure.
            if engine.sync_tabs(true).await? {
                let now = engine
                    .tabs
                    .get(engine.active)
                    .map(|t| t.id.clone())
                    .unwrap_or_default();
                let out = Outcome::ok(format!(
                    "Clicked element {index}. The page closed its tab; the active tab is now {now}."
                ));
                return Ok(self.finish(engine, out).await);
            }
            return Err(e);
        }
        // A click's navigation starts a moment after the click; give it that moment.
        tokio::time::sleep(CLICK_GRACE).await;
        let loaded = settle(&page, timeout).await;
        let lost = engine.sync_tabs(true).await?;
        let mut text = format!("Clicked element {index}.");
        if lost {
            let now = engine
                .tabs
                .get(engine.active)
                .map(|t| t.id.clone())
                .unwrap_or_default();
            text.push_str(&format!(
                " The page closed its tab; the active tab is now {now}."
            ));
        } else if engine.tabs.len() > tabs_before {
            text.push_str(" It opened a new tab, which is now active.");
        }
        if !loaded {
            text.push_str(" The page is still loading.");
        }
        let page = engine.page()?;
        let (url, _) = location(&page).await;
        if !url.is_empty() {
            text.push_str(&format!(" Current URL: {url}"));
        }
        Ok(self.finish(engine, Outcome::ok(text)).await)
    }

    /// `browser_type`.
    pub async fn type_text(&self, index: i64, text: &str) -> Result<Outcome, BrowserError> {
        let mut s = self.for_agent().await?;
        let engine = s.begin().await?;
        let page = engine.page()?;
        let focus: Value = eval_json(&page, script::focus_for_typing(index)).await?;
        let out = if focus.get("missing").is_some() {
            not_found(index)
        } else if let Some(tag) = focus.get("not_typeable").and_then(Value::as_str) {
            Outcome::error(format!(
                "Element {index} is a <{tag}>, which does not take text; use browser_click for it."
            ))
        } else if focus.get("select").is_some() {
            let chosen: Value = eval_json(&page, script::choose(index, text)).await?;
            match chosen.get("options") {
                Some(options) => Outcome::error(format!(
                    "Element {index} is a list without an option \"{text}\"; its options are {options}."
                )),
                None => Outcome::ok(format!("Selected \"{text}\" in element {index}.")),
            }
        } else {
            page.execute(InsertTextParams::new(text)).await?;
            Outcome::ok(format!("Typed '{text}' into element {index}."))
        };
        Ok(self.finish(engine, out).await)
    }

    /// `browser_get_state`.
    pub async fn get_state(&self, include_screenshot: bool) -> Result<Outcome, BrowserError> {
        let mut s = self.for_agent().await?;
        let engine = s.begin().await?;
        self.publish(engine).await;
        let page = engine.page()?;
        let mut st: Value = eval_json(&page, script::STATE).await?;
        let tabs: Vec<Value> = self
            .state()
            .tabs
            .iter()
            .map(|t| json!({"tab_id": t.id, "url": t.url, "title": t.title}))
            .collect();
        let total = st.get("total").and_then(Value::as_u64).unwrap_or(0);
        let shown = st
            .get("elements")
            .and_then(Value::as_array)
            .map_or(0, Vec::len) as u64;
        let mut state = json!({
            "url": st["url"].take(),
            "title": st["title"].take(),
            "tabs": tabs,
            "interactive_elements": st["elements"].take(),
            "viewport": st["viewport"].take(),
            "page": st["page"].take(),
            "scroll": st["scroll"].take(),
        });
        if total > shown {
            state["elements_not_shown"] = json!(total - shown);
        }
        let screenshot = if include_screenshot {
            let (w, h) = self.inner.config.viewport;
            state["screenshot_dimensions"] = json!({"width": w, "height": h});
            Some(screenshot(&page).await?)
        } else {
            None
        };
        let text = serde_json::to_string_pretty(&state).unwrap_or_default();
        let out = Outcome {
            text,
            screenshot,
            is_error: false,
        };
        Ok(self.finish(engine, out).await)
    }

    /// `browser_get_content`.
    pub async fn get_content(
        &self,
        extract_links: bool,
        start: i64,
    ) -> Result<Outcome, BrowserError> {
        let mut s = self.for_agent().await?;
        let engine = s.begin().await?;
        let page = engine.page()?;
        let c: Value = eval_json(&page, script::markdown(extract_links)).await?;
        let md = c["markdown"].as_str().unwrap_or_default();
        let url = c["url"].as_str().unwrap_or_default();
        let total = md.chars().count();
        let start = usize::try_from(start.max(0)).unwrap_or(0);
        if start > 0 && start >= total {
            let out = Outcome::error(format!(
                "start_from_char {start} is past the end of the content ({total} characters)."
            ));
            return Ok(self.finish(engine, out).await);
        }
        let part: String = md.chars().skip(start).take(CONTENT_PAGE).collect();
        let end = start + part.chars().count();
        let mut stats = format!(
            "Content processed: {} HTML chars → {total} markdown chars",
            c["html"].as_u64().unwrap_or(0)
        );
        if start > 0 || end < total {
            stats.push_str(&format!("; showing characters {start} to {end}"));
        }
        let mut text = format!(
            "<url>\n{url}\n</url>\n<content>\n<content_stats>\n{stats}\n</content_stats>\n\n<webpage_content>\n{part}\n</webpage_content>\n</content>"
        );
        if end < total {
            text.push_str(&format!(
                "\n\nThe content was truncated: call browser_get_content with start_from_char={end} for the rest."
            ));
        }
        Ok(self.finish(engine, Outcome::ok(text)).await)
    }

    /// `browser_scroll`.
    pub async fn scroll(&self, direction: &str) -> Result<Outcome, BrowserError> {
        let mut s = self.for_agent().await?;
        let engine = s.begin().await?;
        let page = engine.page()?;
        let sign = if direction == "up" { -1 } else { 1 };
        let r: Value = eval_json(&page, script::scroll(sign)).await?;
        let y = r["y"].as_i64().unwrap_or(0);
        let height = r["height"].as_i64().unwrap_or(0);
        let text = if r["moved"].as_bool().unwrap_or(false) {
            format!("Scrolled {direction}; now at {y} of {height} pixels.")
        } else {
            format!("Cannot scroll {direction} further; at {y} of {height} pixels.")
        };
        Ok(self.finish(engine, Outcome::ok(text)).await)
    }

    /// `browser_go_back`.
    pub async fn go_back(&self) -> Result<Outcome, BrowserError> {
        let mut s = self.for_agent().await?;
        let timeout = self.inner.config.navigation_timeout;
        let engine = s.begin().await?;
        let page = engine.page()?;
        let out = history_step(&page, -1, timeout).await?;
        Ok(self.finish(engine, out).await)
    }

    /// `browser_list_tabs`.
    pub async fn list_tabs(&self) -> Result<Outcome, BrowserError> {
        let mut s = self.for_agent().await?;
        let engine = s.begin().await?;
        self.publish(engine).await;
        let tabs: Vec<Value> = self
            .state()
            .tabs
            .iter()
            .map(|t| json!({"tab_id": t.id, "url": t.url, "title": t.title, "active": t.active}))
            .collect();
        let text = serde_json::to_string_pretty(&tabs).unwrap_or_default();
        Ok(self.finish(engine, Outcome::ok(text)).await)
    }

    /// `browser_switch_tab`.
    pub async fn switch_tab(&self, tab_id: &str) -> Result<Outcome, BrowserError> {
        let mut s = self.for_agent().await?;
        let engine = s.begin().await?;
        let out = switch(engine, tab_id).await?;
        Ok(self.finish(engine, out).await)
    }

    /// `browser_close_tab`.
    pub async fn close_tab(&self, tab_id: &str) -> Result<Outcome, BrowserError> {
        let mut s = self.for_agent().await?;
        let engine = s.begin().await?;
        let wanted = tab_id.trim().to_ascii_uppercase();
        let Some(i) = engine.tabs.iter().position(|t| t.id == wanted) else {
            let out = unknown_tab(engine, tab_id);
            return Ok(self.finish(engine, out).await);
        };
        let tab = engine.tabs.remove(i);
        tab.page.close().await?;
        if engine.active >= i && engine.active > 0 {
            engine.active -= 1;
        }
        engine.sync_tabs(false).await?;
        let now = engine
            .tabs
            .get(engine.active)
            .map(|t| t.id.clone())
            .unwrap_or_default();
        let out = Outcome::ok(format!("Closed tab {wanted}. Active tab: {now}."));
        Ok(self.finish(engine, out).await)
    }

    /// `browser_get_storage`: cookies of every site, and the current origin's local and
    /// session storage, in the shape `browser_set_storage` takes.
    pub async fn get_storage(&self) -> Result<Outcome, BrowserError> {
        let mut s = self.for_agent().await?;
        let engine = s.begin().await?;
        let page = engine.page()?;
        let cookies = page.get_cookies().await?;
        let origin: Value = eval_json(&page, script::STORAGE).await?;
        let origins = if origin["origin"]
            .as_str()
            .is_some_and(|o| o.starts_with("http"))
        {
            vec![origin]
        } else {
            Vec::new()
        };
        let state = json!({"cookies": cookies, "origins": origins});
        let text = serde_json::to_string_pretty(&state).unwrap_or_default();
        Ok(self.finish(engine, Outcome::ok(text)).await)
    }

    /// `browser_set_storage`.
    pub async fn set_storage(&self, storage: &Value) -> Result<Outcome, BrowserError> {
        let mut s = self.for_agent().await?;
        let engine = s.begin().await?;
        let page = engine.page()?;
        let out = apply_storage(&page, storage).await?;
        Ok(self.finish(engine, out).await)
    }
}

/// Navigates `page` to `url` and waits for it to load (up to `timeout`).
fn with_scheme(url: &str) -> String {
    if url.contains("://") || url.starts_with("about:") || url.starts_with("data:") {
        url.to_owned()
    } else {
        format!("https://{url}")
    }
}

pub(crate) async fn navigate_page(
    page: &Page,
    url: &str,
    timeout: Duration,
) -> Result<Outcome, BrowserError> {
    let url = with_scheme(url);
    // chromiumoxide tracks a Page.navigate until the page has loaded and holds the tab's next
    // navigation until then or until its command timeout: past it the load is stopped.
    let sent = tokio::time::timeout(timeout, page.execute(NavigateParams::new(url.clone()))).await;
    let reply = match sent {
        Err(_) | Ok(Err(chromiumoxide::error::CdpError::Timeout)) => {
            // Stop it, so the tab takes the next navigation.
            let _ = page.execute(StopLoadingParams::default()).await;
            return Ok(Outcome::ok(format!(
                "Navigated to: {url}\nThe page had not finished loading after {} s; what has loaded so far can be read.",
                timeout.as_secs()
            )));
        }
        Ok(r) => r?,
    };
    if let Some(error) = reply.result.error_text.as_deref() {
        let text = if error.contains("ERR_ABORTED") {
            format!(
                "Could not open {url}: {error}. It may be a download or content the browser does not show."
            )
        } else {
            format!("Could not open {url}: {error}.")
        };
        return Ok(Outcome::error(text));
    }
    let loaded = settle(page, timeout).await;
    if !loaded {
        let _ = page.execute(StopLoadingParams::default()).await;
    }
    let mut text = format!("Navigated to: {url}");
    if !loaded {
        text.push_str(&format!(
            "\nThe page had not finished loading after {} s; what has loaded so far can be read.",
            timeout.as_secs()
        ));
    }
    Ok(Outcome::ok(text))
}

/// Moves `delta` entries through `page`'s history.
pub(crate) async fn history_step(
    page: &Page,
    delta: i64,
    timeout: Duration,
) -> Result<Outcome, BrowserError> {
    let history = page.execute(GetNavigationHistoryParams::default()).await?;
    let target = history.result.current_index + delta;
    let Some(entry) = usize::try_from(target)
        .ok()
        .and_then(|i| history.result.entries.get(i))
    else {
        let which = if delta < 0 { "previous" } else { "next" };
        return Ok(Outcome::error(format!(
            "There is no {which} page in this tab's history."
        )));
    };
    page.execute(NavigateToHistoryEntryParams::new(entry.id))
        .await?;
    let loaded = settle(page, timeout).await;
    let mut text = format!(
        "Went {} to: {}",
        if delta < 0 { "back" } else { "forward" },
        entry.url
    );
    if !loaded {
        text.push_str(" (still loading)");
    }
    Ok(Outcome::ok(text))
}

fn unknown_tab(engine: &Engine, tab_id: &str) -> Outcome {
    let known: Vec<&str> = engine.tabs.iter().map(|t| t.id.as_str()).collect();
    Outcome::error(format!(
        "No tab with id {tab_id:?}; open tabs: {}. Call browser_list_tabs for details.",
        known.join(", ")
    ))
}

/// Makes tab `tab_id` active.
pub(crate) async fn switch(engine: &mut Engine, tab_id: &str) -> Result<Outcome, BrowserError> {
    let wanted = tab_id.trim().to_ascii_uppercase();
    let Some(i) = engine.tabs.iter().position(|t| t.id == wanted) else {
        return Ok(unknown_tab(engine, tab_id));
    };
    engine.active = i;
    engine.tabs[i].page.bring_to_front().await?;
    let (url, _) = location(&engine.tabs[i].page).await;
    Ok(Outcome::ok(format!("Switched to tab {wanted}: {url}")))
}

/// A PNG of the viewport, base64.
pub(crate) async fn screenshot(page: &Page) -> Result<String, BrowserError> {
    let shot = page
        .execute(CaptureScreenshotParams {
            format: Some(CaptureScreenshotFormat::Png),
            ..CaptureScreenshotParams::default()
        })
        .await?;
    let data: &str = shot.result.data.as_ref();
    Ok(data.to_owned())
}

async fn apply_storage(page: &Page, storage: &Value) -> Result<Outcome, BrowserError> {
    let Some(obj) = storage.as_object() else {
        return Ok(Outcome::error(
            "storage_state must be an object with `cookies` and `origins`.",
        ));
    };
    let mut cookies = Vec::new();
    for (i, c) in obj
        .get("cookies")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        match serde_json::from_value::<chromiumoxide::cdp::browser_protocol::network::CookieParam>(
            c.clone(),
        ) {
            Ok(c) => cookies.push(c),
            Err(e) => {
                return Ok(Outcome::error(format!(
                    "cookies[{i}] is not a cookie (it needs at least `name`, `value` and `domain` or `url`): {e}"
                )));
            }
        }
    }
    let n_cookies = cookies.len();
    if !cookies.is_empty() {
        page.set_cookies(cookies).await?;
    }
    let current: Value = eval_json(page, script::STORAGE).await?;
    let here = current["origin"].as_str().unwrap_or_default().to_owned();
    let mut set = 0;
    let mut skipped = Vec::new();
    for o in obj
        .get("origins")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let origin = o.get("origin").and_then(Value::as_str).unwrap_or_default();
        if origin == here {
            let r: Value = eval_json(page, script::set_storage(o)).await?;
            set += r["set"].as_u64().unwrap_or(0);
        } else {
            skipped.push(origin.to_owned());
        }
    }
    let mut text = format!("Set {n_cookies} cookies and {set} storage items for {here}.");
    if !skipped.is_empty() {
        text.push_str(&format!(
            " Storage of other origins was not set (navigate there first): {}.",
            skipped.join(", ")
        ));
    }
    Ok(Outcome::ok(text))
}
