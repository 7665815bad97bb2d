//! The web UI under `/ui/`: the same `ui/dist` build the desktop app embeds, for people who
//! open the agent server in a browser. By default the build embedded in this binary at
//! compile time (see `build.rs`), so a `tandem` copied anywhere serves it; `TANDEM_UI_DIR`
//! points at a build on disk instead, read on each request. Paths cannot leave the build.
//! Hashed assets (`assets/…`) are cached for a year, everything else is revalidated
//! (`no-cache`, with an ETag for embedded files); embedded files are stored gzipped and sent
//! so to clients that accept gzip. A browser opening the server's root (`GET /` preferring
//! HTML) is sent on to `/ui/`; API clients asking for JSON, or for nothing in particular, keep
//! getting the server info there.

use std::path::{Component, Path, PathBuf};

use axum::Router;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

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
        .route("/ui/", get(index))
        .route("/ui/{*path}", get(file))
        .with_state(source)
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

/// Whether `Accept-Encoding` admits gzip (`gzip` or `*` with a q above zero, unless `gzip`
/// itself is refused).
fn accepts_gzip(headers: &HeaderMap) -> bool {
    let list = q_list(headers, header::ACCEPT_ENCODING);
    match list.iter().find(|(c, _)| c == "gzip" || c == "x-gzip") {
        Some((_, q)) => *q > 0.0,
        None => list.iter().any(|(c, q)| c == "*" && *q > 0.0),
    }
}

async fn index(State(source): State<UiSource>, headers: HeaderMap) -> Response {
    serve(&source, "index.html", &headers).await
}

async fn file(
    State(source): State<UiSource>,
    UrlPath(path): UrlPath<String>,
    headers: HeaderMap,
) -> Response {
    serve(&source, &path, &headers).await
}

fn not_found() -> Response {
    (StatusCode::NOT_FOUND, "not found").into_response()
}

async fn serve(source: &UiSource, relative: &str, headers: &HeaderMap) -> Response {
    let rel = Path::new(relative);
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return not_found();
    }
    match source {
        UiSource::Dir(dir) => {
            let path = dir.join(rel);
            match tokio::fs::read(&path).await {
                Ok(bytes) => (
                    [
                        (header::CONTENT_TYPE, content_type(relative)),
                        (header::CACHE_CONTROL, cache_control(relative)),
                    ],
                    bytes,
                )
                    .into_response(),
                Err(_) => not_found(),
            }
        }
        UiSource::Embedded => match embedded::find(relative) {
            Some(f) => serve_embedded(f, headers),
            None if !embedded::present() => (
                StatusCode::NOT_FOUND,
                [
                    (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                    (header::CACHE_CONTROL, REVALIDATE),
                ],
                embedded::MISSING_PAGE,
            )
                .into_response(),
            None => not_found(),
        },
    }
}

fn serve_embedded(f: &'static embedded::EmbeddedFile, headers: &HeaderMap) -> Response {
    let mut resp_headers = HeaderMap::new();
    resp_headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(content_type(f.path)),
    );
    resp_headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(cache_control(f.path)),
    );
    resp_headers.insert(header::ETAG, HeaderValue::from_static(f.etag));
    if f.gzip {
        resp_headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    let fresh = headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|tag| {
            let tag = tag.trim();
            tag == "*" || tag.trim_start_matches("W/") == f.etag
        });
    if fresh {
        return (StatusCode::NOT_MODIFIED, resp_headers).into_response();
    }
    if !f.gzip {
        return (resp_headers, f.bytes).into_response();
    }
    if accepts_gzip(headers) {
        resp_headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        return (resp_headers, f.bytes).into_response();
    }
    match gunzip(f.bytes) {
        Ok(bytes) => (resp_headers, bytes).into_response(),
        Err(e) => {
            tracing::warn!("the embedded UI file {} does not unpack: {e}", f.path);
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                "the embedded UI file is damaged",
            )
                .into_response()
        }
    }
}

fn gunzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes).read_to_end(&mut out)?;
    Ok(out)
}

/// Hashed build output (Vite's `assets/`) never changes under its name.
fn cache_control(path: &str) -> &'static str {
    if path.starts_with("assets/") {
        IMMUTABLE
    } else {
        REVALIDATE
    }
}

fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "wasm" => "application/wasm",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "ttf" => "font/ttf",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests;
