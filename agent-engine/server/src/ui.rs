//! The web UI under `/ui/`: the same `ui/dist` build the desktop app embeds, for people who
//! open the agent server in a browser. By default the build embedded in this binary at
//! compile time (see `build.rs`), so a `tandem` copied anywhere serves it; `TANDEM_UI_DIR`
//! points at a build on disk instead, read on each request. Both are served by tower-http's
//! `ServeDir` (the embedded one through its in-memory `Backend`), which keeps paths inside the
//! build, answers ranges and revalidates by ETag and Last-Modified, and sends an embedded
//! file's gzipped copy to clients that accept gzip. Hashed assets (`assets/…`) are cached for
//! a year, everything else is revalidated (`no-cache`). A browser opening the server's root
//! (`GET /` preferring HTML) is sent on to `/ui/`; API clients asking for JSON, or for nothing
//! in particular, keep getting the server info there.

use std::path::PathBuf;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use tower::ServiceExt;
use tower_http::services::ServeDir;
use tower_http::services::fs::DefaultServeDirFallback;

mod embedded;

/// `Cache-Control` of hashed assets: their name changes with their content.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// `Cache-Control` of everything else (`index.html` first): revalidate every time.
const REVALIDATE: &str = "no-cache";

/// Where the UI's files come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UiSource {
    /// The build embedded in this binary; a page saying how to build the UI when the binary
    /// was built without one.
    Embedded,
    /// A build on disk (a folder with `index.html`), read on each request.
    Dir(PathBuf),
}

impl UiSource {
    /// `TANDEM_UI_DIR` when it is set, else the embedded build; see [`choose`](Self::choose).
    pub fn from_env() -> (Self, Option<String>) {
        Self::choose(
            std::env::var_os("TANDEM_UI_DIR")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
        )
    }

    /// `dir` (the value of `TANDEM_UI_DIR`) when it holds a build, else the embedded build;
    /// with a note to show when `dir` was given but holds no `index.html`.
    pub fn choose(dir: Option<PathBuf>) -> (Self, Option<String>) {
        match dir {
            Some(d) if d.join("index.html").is_file() => (Self::Dir(d), None),
            Some(d) => (
                Self::Embedded,
                Some(format!(
                    "TANDEM_UI_DIR={} has no index.html: serving the UI built into this binary instead",
                    d.display()
                )),
            ),
            None => (Self::Embedded, None),
        }
    }

    /// Whether it serves a UI (the embedded source of a binary built without one does not).
    pub fn has_ui(&self) -> bool {
        match self {
            Self::Embedded => embedded::present(),
            Self::Dir(_) => true,
        }
    }

    /// Where the UI comes from, for the start-up message.
    pub fn describe(&self) -> String {
        match self {
            Self::Dir(d) => format!("the UI build in {} (TANDEM_UI_DIR)", d.display()),
            Self::Embedded if embedded::present() => {
                let (files, raw, stored) = embedded::stats();
                format!(
                    "the UI built into this binary ({files} files, {:.1} MB, {:.1} MB stored)",
                    mb(raw),
                    mb(stored)
                )
            }
            Self::Embedded => "no UI: this binary was built without ui/dist (run `npm run -w ui build`, then build tandem again, or set TANDEM_UI_DIR)".into(),
        }
    }
}

fn mb(bytes: u64) -> f64 {
    // Display only.
    #[allow(clippy::cast_precision_loss)]
    let b = bytes as f64;
    b / 1_000_000.0
}

/// Routes `/ui`, `/ui/` and `/ui/{*path}` serving `source`.
pub fn router(source: UiSource) -> Router {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", get(serve))
        .route("/ui/{*path}", get(serve))
        .with_state(Files::new(source))
}

/// What serves a [`UiSource`].
#[derive(Debug, Clone)]
enum Files {
    Dir(ServeDir),
    Embedded(ServeDir<DefaultServeDirFallback, embedded::Backend>),
    /// The binary was built without a UI: every path gets [`embedded::MISSING_PAGE`].
    Missing,
}

impl Files {
    fn new(source: UiSource) -> Self {
        // A folder without its trailing slash (`/ui/assets`) is not found, as it has no
        // index.html, rather than redirected to its slashed path outside `/ui/`.
        match source {
            UiSource::Dir(dir) => Self::Dir(ServeDir::new(dir).redirect_to_trailing_slash(false)),
            UiSource::Embedded if embedded::present() => Self::Embedded(
                ServeDir::with_backend("", embedded::Backend)
                    .precompressed_gzip()
                    .redirect_to_trailing_slash(false),
            ),
            UiSource::Embedded => Self::Missing,
        }
    }
}

/// Middleware: `GET /` from a browser (its `Accept` prefers `text/html` over JSON) answers
/// 303 See Other to `/ui/`; browsers keep the URL's `#key=` fragment across the redirect.
pub async fn redirect_browsers(req: Request, next: Next) -> Response {
    if req.method() == Method::GET && req.uri().path() == "/" && prefers_html(req.headers()) {
        return Redirect::to("/ui/").into_response();
    }
    next.run(req).await
}

/// The `(range, q)` pairs of the comma-separated lists in the headers `name`.
fn q_list(headers: &HeaderMap, name: header::HeaderName) -> Vec<(String, f32)> {
    headers
        .get_all(name)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|item| {
            let mut parts = item.split(';');
            let range = parts.next()?.trim().to_ascii_lowercase();
            if range.is_empty() {
                return None;
            }
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            Some((range, q))
        })
        .collect()
}

/// Whether the `Accept` headers rank `text/html` above `application/json` (by q-value, each
/// type taking the q of the most specific range that matches it). No `Accept`, `*/*` alone or
/// a tie keep JSON.
pub fn prefers_html(headers: &HeaderMap) -> bool {
    let ranges: Vec<(String, f32)> = q_list(headers, header::ACCEPT)
        .into_iter()
        .filter(|(r, _)| r.contains('/'))
        .collect();
    let q_of = |media: &str| -> f32 {
        let (kind, _) = media.split_once('/').unwrap_or((media, ""));
        let type_any = format!("{kind}/*");
        ranges
            .iter()
            .filter_map(|(r, q)| {
                let specificity = if r == media {
                    3
                } else if *r == type_any {
                    2
                } else if r == "*/*" {
                    1
                } else {
                    return None;
                };
                Some((specificity, *q))
            })
            .max_by_key(|(s, _)| *s)
            .map_or(0.0, |(_, q)| q)
    };
    let html = q_of("text/html");
    html > 0.0 && html > q_of("application/json")
}

async fn serve(State(files): State<Files>, req: Request) -> Response {
    // ServeDir serves the build at the root: `/ui/assets/a.js` is its `/assets/a.js`.
    let (mut parts, body) = req.into_parts();
    let path = parts
        .uri
        .path()
        .strip_prefix("/ui")
        .unwrap_or("/")
        .to_owned();
    let Ok(uri) = path.parse::<Uri>() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    parts.uri = uri;
    let req = Request::from_parts(parts, body);
    let mut resp = match files {
        Files::Dir(dir) => {
            let Ok(resp) = dir.oneshot(req).await;
            resp.into_response()
        }
        Files::Embedded(dir) => {
            let Ok(resp) = dir.oneshot(req).await;
            resp.into_response()
        }
        Files::Missing => {
            return (
                StatusCode::NOT_FOUND,
                [
                    (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                    (header::CACHE_CONTROL, REVALIDATE),
                ],
                embedded::MISSING_PAGE,
            )
                .into_response();
        }
    };
    if resp.status().is_success() || resp.status() == StatusCode::NOT_MODIFIED {
        resp.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static(cache_control(&path)),
        );
    }
    with_charset(resp.headers_mut());
    resp
}

/// Hashed build output (Vite's `assets/`) never changes under its name.
fn cache_control(path: &str) -> &'static str {
    if path.starts_with("/assets/") {
        IMMUTABLE
    } else {
        REVALIDATE
    }
}

/// Names UTF-8 (what Vite writes) as the charset of text, which `ServeDir` sends with the
/// media type alone.
fn with_charset(headers: &mut HeaderMap) {
    let Some(media) = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
    else {
        return;
    };
    if media.starts_with("text/")
        && !media.contains("charset")
        && let Ok(v) = HeaderValue::from_str(&format!("{media}; charset=utf-8"))
    {
        headers.insert(header::CONTENT_TYPE, v);
    }
}

#[cfg(test)]
mod tests;
