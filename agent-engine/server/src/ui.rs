//! The web UI's static files under `/ui/`: the same `ui/dist` build the desktop app embeds,
//! for people who open the agent server in a browser. Read from disk on each request (the
//! files are few and small next to what the UI then fetches); paths cannot leave the folder.

use std::path::{Component, Path, PathBuf};

use axum::Router;
use axum::extract::{Path as UrlPath, State};
use axum::http::{StatusCode, header};
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
