//! The web UI's static files under `/ui/`: the same `ui/dist` build the desktop app embeds,
//! for people who open the agent server in a browser. Read from disk on each request (the
//! files are few and small next to what the UI then fetches); paths cannot leave the folder.
//! A browser opening the server's root (`GET /` preferring HTML) is sent on to `/ui/`; API
//! clients asking for JSON, or for nothing in particular, keep getting the server info there.

use std::path::{Component, Path, PathBuf};

use axum::Router;
use axum::extract::{Path as UrlPath, Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

/// Routes `/ui`, `/ui/` and `/ui/{*path}` serving the files of `dir`.
pub fn router(dir: PathBuf) -> Router {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", get(index))
        .route("/ui/{*path}", get(file))
        .with_state(dir)
}

/// Middleware: `GET /` from a browser (its `Accept` prefers `text/html` over JSON) answers
/// 303 See Other to `/ui/`; browsers keep the URL's `#key=` fragment across the redirect.
pub async fn redirect_browsers(req: Request, next: Next) -> Response {
    if req.method() == Method::GET && req.uri().path() == "/" && prefers_html(req.headers()) {
        return Redirect::to("/ui/").into_response();
    }
    next.run(req).await
}

/// Whether the `Accept` headers rank `text/html` above `application/json` (by q-value, each
/// type taking the q of the most specific range that matches it). No `Accept`, `*/*` alone or
/// a tie keep JSON.
pub fn prefers_html(headers: &HeaderMap) -> bool {
    let ranges: Vec<(String, f32)> = headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|item| {
            let mut parts = item.split(';');
            let range = parts.next()?.trim().to_ascii_lowercase();
            if !range.contains('/') {
                return None;
            }
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            Some((range, q))
        })
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

async fn index(State(dir): State<PathBuf>) -> Response {
    serve(&dir, "index.html").await
}

async fn file(State(dir): State<PathBuf>, UrlPath(path): UrlPath<String>) -> Response {
    serve(&dir, &path).await
}

async fn serve(dir: &Path, relative: &str) -> Response {
    let rel = Path::new(relative);
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return (StatusCode::NOT_FOUND, "not found").into_response();
    }
    let path = dir.join(rel);
    match tokio::fs::read(&path).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, content_type(&path))], bytes).into_response(),
        Err(_) => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
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
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use tower::ServiceExt;

    use super::*;

    async fn get_path(app: &Router, uri: &str) -> (StatusCode, String, String) {
        let resp = app
            .clone()
            .oneshot(Request::get(uri).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        let ct = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default();
        let body = String::from_utf8_lossy(&resp.into_body().collect().await.unwrap().to_bytes())
            .into_owned();
        (status, ct, body)
    }

    #[test]
    fn browsers_prefer_html_and_api_clients_json() {
        let accepts = |values: &[&str]| {
            let mut h = HeaderMap::new();
            for v in values {
                h.append(header::ACCEPT, v.parse().unwrap());
            }
            prefers_html(&h)
        };
        // Chromium's and Firefox's navigation Accept headers.
        assert!(accepts(&[
            "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"
        ]));
        assert!(accepts(&["text/html"]));
        assert!(accepts(&["application/json;q=0.5", "text/*"]));
        assert!(!accepts(&[]));
        assert!(!accepts(&["*/*"]));
        assert!(!accepts(&["application/json"]));
        assert!(!accepts(&["application/json, text/html"]));
        assert!(!accepts(&["text/html;q=0.5, application/json"]));
        assert!(!accepts(&["text/html;q=0"]));
        assert!(!accepts(&["nonsense"]));
    }

    #[tokio::test]
    async fn serves_the_build_and_nothing_outside_it() {
        let root = tempfile::tempdir().unwrap();
        let dist = root.path().join("dist");
        std::fs::create_dir_all(dist.join("assets")).unwrap();
        std::fs::write(dist.join("index.html"), "<html>tandem</html>").unwrap();
        std::fs::write(dist.join("assets/app.js"), "console.log(1)").unwrap();
        std::fs::write(root.path().join("secret.txt"), "outside").unwrap();
        let app = router(dist);
        assert_eq!(
            get_path(&app, "/ui/").await,
            (
                StatusCode::OK,
                "text/html; charset=utf-8".into(),
                "<html>tandem</html>".into()
            )
        );
        let (status, ct, body) = get_path(&app, "/ui/assets/app.js").await;
        assert_eq!(
            (status, ct.as_str(), body.as_str()),
            (
                StatusCode::OK,
                "text/javascript; charset=utf-8",
                "console.log(1)"
            )
        );
        assert_eq!(
            get_path(&app, "/ui/../secret.txt").await.0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            get_path(&app, "/ui/%2e%2e/secret.txt").await.0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            get_path(&app, "/ui/missing.js").await.0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            get_path(&app, "/ui").await.0,
            StatusCode::PERMANENT_REDIRECT
        );
    }
}
