//! Browser-facing behaviour of the full router: `GET /` sends browsers to the UI and keeps
//! answering API clients with the server info; the UI embedded in the binary is served
//! whatever the working directory, and a UI folder (`TANDEM_UI_DIR`) replaces it; CORS admits
//! exactly the configured origins (preflights without the key, real requests still with it).

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::Value;
use tandem_server::ui::UiSource;
use tandem_server::{Cors, Server, ServerConfig};
use tower::ServiceExt;

const KEY: &str = "k-web";
const BROWSER_ACCEPT: &str =
    "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

struct App {
    router: Router,
    _server: Server,
    _home: tempfile::TempDir,
}

async fn app(ui: bool, cors: Cors) -> App {
    let home = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::new(home.path());
    config.session_keys = vec![KEY.into()];
    let mut server = Server::start(config).await.with_cors(cors);
    if ui {
        let dist = home.path().join("dist");
        std::fs::create_dir_all(&dist).unwrap();
        std::fs::write(dist.join("index.html"), "<html>tandem</html>").unwrap();
        server = server.with_ui_dir(dist);
    }
    App {
        router: server.router(),
        _server: server,
        _home: home,
    }
}

async fn send(app: &App, req: Request<Body>) -> (StatusCode, HeaderMap, String) {
    let resp = app.router.clone().oneshot(req).await.unwrap();
    let (parts, body) = resp.into_parts();
    let bytes = body.collect().await.unwrap().to_bytes();
    (
        parts.status,
        parts.headers,
        String::from_utf8_lossy(&bytes).into_owned(),
    )
}

fn get(path: &str, headers: &[(&str, &str)]) -> Request<Body> {
    let mut b = Request::get(path);
    for (k, v) in headers {
        b = b.header(*k, *v);
    }
    b.body(Body::empty()).unwrap()
}

fn is_server_info(body: &str) -> bool {
    serde_json::from_str::<Value>(body)
        .is_ok_and(|v| v["title"] == "Tandem Agent Server" && v["capabilities"].is_array())
}

#[tokio::test]
async fn browsers_are_sent_to_the_ui_and_api_clients_get_server_info() {
    let app = app(true, Cors::default()).await;
    let (status, headers, _) = send(&app, get("/", &[("accept", BROWSER_ACCEPT)])).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[header::LOCATION], "/ui/");
    let (status, _, body) = send(&app, get("/ui/", &[("accept", BROWSER_ACCEPT)])).await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, "<html>tandem</html>")
    );

    for accept in [
        &[("accept", "application/json")][..],
        &[("accept", "*/*")],
        &[],
        &[("accept", "application/json, text/html;q=0.5")],
    ] {
        let (status, headers, body) = send(&app, get("/", accept)).await;
        assert_eq!(status, StatusCode::OK, "{accept:?}");
        assert!(
            headers[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("application/json")
        );
        assert!(is_server_info(&body), "{accept:?}: {body}");
    }
    // Only the root redirects.
    let (status, _, body) = send(&app, get("/server_info", &[("accept", BROWSER_ACCEPT)])).await;
    assert_eq!(status, StatusCode::OK);
    assert!(is_server_info(&body));
}

#[tokio::test]
async fn without_a_ui_browsers_get_server_info_too() {
    let app = app(false, Cors::default()).await;
    let (status, _, body) = send(&app, get("/", &[("accept", BROWSER_ACCEPT)])).await;
    assert_eq!(status, StatusCode::OK);
    assert!(is_server_info(&body));
}

async fn app_with_ui(source: UiSource) -> App {
    let home = tempfile::tempdir().unwrap();
    let mut config = ServerConfig::new(home.path());
    config.session_keys = vec![KEY.into()];
    let server = Server::start(config).await.with_ui(source);
    App {
        router: server.router(),
        _server: server,
        _home: home,
    }
}

#[tokio::test]
async fn the_embedded_ui_is_served_whatever_the_working_directory() {
    // Nothing to find here: no ui/dist, no checkout.
    let elsewhere = tempfile::tempdir().unwrap();
    std::env::set_current_dir(elsewhere.path()).unwrap();
    let (source, note) = UiSource::choose(None);
    assert_eq!((&source, note), (&UiSource::Embedded, None));
    assert!(
        source.has_ui(),
        "tandem-server was built without ui/dist: run `npm run -w ui build` before cargo"
    );
    let app = app_with_ui(source).await;

    let (status, headers, html) = send(&app, get("/ui/", &[("accept", BROWSER_ACCEPT)])).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_TYPE], "text/html; charset=utf-8");
    assert_eq!(headers[header::CACHE_CONTROL], "no-cache");
    assert!(html.contains("<div id=\"root\"></div>"), "{html}");
    // The entry script the page names.
    let start = html.find("assets/").expect("the page loads assets/");
    let end = start + html[start..].find(".js").expect("a script") + 3;
    let script = &html[start..end];
    let (status, headers, body) = send(&app, get(&format!("/ui/{script}"), &[])).await;
    assert_eq!(status, StatusCode::OK, "{script}");
    assert_eq!(
        headers[header::CONTENT_TYPE],
        "text/javascript; charset=utf-8"
    );
    assert!(
        headers[header::CACHE_CONTROL]
            .to_str()
            .unwrap()
            .contains("immutable")
    );
    assert!(!body.is_empty());
    let (status, headers, _) = send(
        &app,
        get(&format!("/ui/{script}"), &[("accept-encoding", "gzip")]),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(headers[header::CONTENT_ENCODING], "gzip");
    // Browsers opening the root land there.
    let (status, headers, _) = send(&app, get("/", &[("accept", BROWSER_ACCEPT)])).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(headers[header::LOCATION], "/ui/");
}

#[tokio::test]
async fn a_ui_folder_replaces_the_embedded_ui() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("assets")).unwrap();
    std::fs::write(dir.path().join("index.html"), "<html>from disk</html>").unwrap();
    std::fs::write(dir.path().join("assets/a-1.js"), "export {}").unwrap();
    let (source, note) = UiSource::choose(Some(dir.path().to_path_buf()));
    assert_eq!(note, None);
    let app = app_with_ui(source).await;
    let (status, _, body) = send(&app, get("/ui/", &[])).await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, "<html>from disk</html>")
    );
    let (status, _, body) = send(&app, get("/ui/assets/a-1.js", &[])).await;
    assert_eq!((status, body.as_str()), (StatusCode::OK, "export {}"));
    // A folder without a build is not used.
    let (source, note) = UiSource::choose(Some(dir.path().join("assets")));
    assert_eq!(source, UiSource::Embedded);
    assert!(note.unwrap().contains("TANDEM_UI_DIR"));
}

const ALLOWED: &str = "https://app.example.com";

fn preflight(origin: &str, path: &str) -> Request<Body> {
    Request::builder()
        .method(Method::OPTIONS)
        .uri(path)
        .header("origin", origin)
        .header("access-control-request-method", "PUT")
        .header(
            "access-control-request-headers",
            "content-type,x-session-api-key",
        )
        .body(Body::empty())
        .unwrap()
}

fn cors_headers(h: &HeaderMap) -> Vec<String> {
    h.keys()
        .map(|k| k.as_str().to_owned())
        .filter(|k| k.starts_with("access-control-"))
        .collect()
}

#[tokio::test]
async fn an_allowed_origin_gets_cors_and_still_needs_the_key() {
    let app = app(false, Cors::new([ALLOWED]).unwrap()).await;
    let path = "/api/conversations/search";

    // Preflight: answered without the key.
    let (status, h, _) = send(&app, preflight(ALLOWED, path)).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(h["access-control-allow-origin"], ALLOWED);
    let methods = h["access-control-allow-methods"].to_str().unwrap();
    assert!(
        methods.contains("PUT") && methods.contains("DELETE"),
        "{methods}"
    );
    let allowed = h["access-control-allow-headers"]
        .to_str()
        .unwrap()
        .to_ascii_lowercase();
    for name in ["x-session-api-key", "authorization", "content-type"] {
        assert!(allowed.contains(name), "{allowed}");
    }
    assert!(h.get("access-control-allow-credentials").is_none());
    assert_ne!(h["access-control-allow-origin"], "*");

    // The real request without the key: 401, with CORS so the page can read the refusal.
    let (status, h, body) = send(&app, get(path, &[("origin", ALLOWED)])).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(h["access-control-allow-origin"], ALLOWED);

    // With the key: the answer, with CORS.
    let (status, h, body) = send(
        &app,
        get(path, &[("origin", ALLOWED), ("x-session-api-key", KEY)]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(h["access-control-allow-origin"], ALLOWED);
    // Header names in Vary are case-insensitive.
    let vary: Vec<String> = h
        .get_all(header::VARY)
        .iter()
        .map(|v| v.to_str().unwrap().to_ascii_lowercase())
        .collect();
    assert!(vary.iter().any(|v| v.contains("origin")), "{vary:?}");
    assert!(serde_json::from_str::<Value>(&body).unwrap()["items"].is_array());
}

#[tokio::test]
async fn a_disallowed_origin_gets_no_cors_headers() {
    let app = app(false, Cors::new([ALLOWED]).unwrap()).await;
    let path = "/api/conversations/search";
    for origin in [
        "https://evil.example.com",
        "https://app.example.com:8443",
        "http://app.example.com",
        "null",
    ] {
        let (status, h, _) = send(&app, preflight(origin, path)).await;
        assert_ne!(status, StatusCode::NO_CONTENT, "{origin}");
        assert!(cors_headers(&h).is_empty(), "{origin}: {h:?}");
        let (status, h, _) = send(
            &app,
            get(path, &[("origin", origin), ("x-session-api-key", KEY)]),
        )
        .await;
        // The server still answers (CORS is the browser's to enforce), without CORS headers.
        assert_eq!(status, StatusCode::OK);
        assert!(cors_headers(&h).is_empty(), "{origin}: {h:?}");
    }
}

#[tokio::test]
async fn without_allowed_origins_no_cors_is_sent() {
    let app = app(false, Cors::default()).await;
    let (_, h, _) = send(&app, preflight(ALLOWED, "/api/conversations/search")).await;
    assert!(cors_headers(&h).is_empty(), "{h:?}");
}
