use axum::body::Body;
use axum::http::Request;
use http_body_util::BodyExt;
use tower::ServiceExt;

use super::*;

struct Got {
    status: StatusCode,
    headers: HeaderMap,
    body: Vec<u8>,
}

impl Got {
    fn header(&self, name: header::HeaderName) -> &str {
        self.headers
            .get(name)
            .map_or("", |v| v.to_str().unwrap_or(""))
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

async fn get_with(app: &Router, uri: &str, headers: &[(&str, &str)]) -> Got {
    let mut req = Request::get(uri);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = app
        .clone()
        .oneshot(req.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let (parts, body) = resp.into_parts();
    Got {
        status: parts.status,
        headers: parts.headers,
        body: body.collect().await.unwrap().to_bytes().to_vec(),
    }
}

async fn get_path(app: &Router, uri: &str) -> (StatusCode, String, String) {
    let got = get_with(app, uri, &[]).await;
    (
        got.status,
        got.header(header::CONTENT_TYPE).to_owned(),
        got.text(),
    )
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
async fn gzip_is_sent_only_to_clients_that_take_it() {
    let Some(script) = embedded::FILES.iter().find(|f| f.gzip) else {
        // Built without ui/dist: nothing is stored gzipped.
        return;
    };
    let app = router(UiSource::Embedded);
    let uri = format!("/ui/{}", script.path);
    for (accept, gzip) in [
        (Some("gzip, deflate, br, zstd"), true),
        (Some("br;q=1.0, gzip;q=0.8"), true),
        (None, false),
        (Some("identity"), false),
        (Some("br"), false),
        (Some("gzip;q=0, *"), false),
        (Some("*;q=0"), false),
    ] {
        let headers: Vec<(&str, &str)> =
            accept.map(|a| ("accept-encoding", a)).into_iter().collect();
        let got = get_with(&app, &uri, &headers).await;
        assert_eq!(got.status, StatusCode::OK, "{accept:?}");
        let encoding = got.header(header::CONTENT_ENCODING);
        assert_eq!(encoding == "gzip", gzip, "{accept:?}: {encoding:?}");
    }
}

#[test]
fn ui_dir_overrides_the_embedded_build_only_when_it_holds_one() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("index.html"), "<html></html>").unwrap();
    assert_eq!(
        UiSource::choose(Some(root.path().to_path_buf())),
        (UiSource::Dir(root.path().to_path_buf()), None)
    );
    let empty = root.path().join("empty");
    let (source, note) = UiSource::choose(Some(empty));
    assert_eq!(source, UiSource::Embedded);
    assert!(note.unwrap().contains("no index.html"));
    assert_eq!(UiSource::choose(None), (UiSource::Embedded, None));
}

#[tokio::test]
async fn serves_a_build_on_disk_and_nothing_outside_it() {
    let root = tempfile::tempdir().unwrap();
    let dist = root.path().join("dist");
    std::fs::create_dir_all(dist.join("assets")).unwrap();
    std::fs::write(dist.join("index.html"), "<html>tandem</html>").unwrap();
    std::fs::write(dist.join("assets/app-1a2b.js"), "console.log(1)").unwrap();
    std::fs::write(root.path().join("secret.txt"), "outside").unwrap();
    let app = router(UiSource::Dir(dist));
    assert_eq!(
        get_path(&app, "/ui/").await,
        (
            StatusCode::OK,
            "text/html; charset=utf-8".into(),
            "<html>tandem</html>".into()
        )
    );
    assert_eq!(
        get_with(&app, "/ui/", &[])
            .await
            .header(header::CACHE_CONTROL),
        "no-cache"
    );
    let got = get_with(&app, "/ui/assets/app-1a2b.js", &[]).await;
    assert_eq!(
        (
            got.status,
            got.header(header::CONTENT_TYPE),
            got.text().as_str()
        ),
        (
            StatusCode::OK,
            "text/javascript; charset=utf-8",
            "console.log(1)"
        )
    );
    assert_eq!(got.header(header::CACHE_CONTROL), IMMUTABLE);
    for outside in [
        "/ui/../secret.txt",
        "/ui/%2e%2e/secret.txt",
        "/ui/missing.js",
    ] {
        assert_eq!(
            get_path(&app, outside).await.0,
            StatusCode::NOT_FOUND,
            "{outside}"
        );
    }
    assert_eq!(
        get_path(&app, "/ui").await.0,
        StatusCode::PERMANENT_REDIRECT
    );
}

#[tokio::test]
async fn serves_the_embedded_build_gzipped_or_plain_with_cache_headers() {
    let app = router(UiSource::Embedded);
    if !embedded::present() {
        // Built without ui/dist: the page saying how to build the UI.
        let got = get_with(&app, "/ui/", &[]).await;
        assert_eq!(got.status, StatusCode::NOT_FOUND);
        assert!(got.text().contains("npm run -w ui build"));
        return;
    }
    let index = get_with(&app, "/ui/", &[]).await;
    assert_eq!(index.status, StatusCode::OK);
    assert_eq!(
        index.header(header::CONTENT_TYPE),
        "text/html; charset=utf-8"
    );
    assert_eq!(index.header(header::CACHE_CONTROL), "no-cache");
    assert!(index.text().contains("id=\"root\""), "{}", index.text());
    // Revalidation by ETag.
    let etag = index.header(header::ETAG).to_owned();
    assert!(etag.starts_with('"'), "{etag}");
    let again = get_with(&app, "/ui/", &[("if-none-match", &etag)]).await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert!(again.body.is_empty());

    // Every embedded asset, plain and gzipped, is the same file.
    let biggest = embedded::FILES
        .iter()
        .filter(|f| f.gzip && f.path.ends_with(".js"))
        .max_by_key(|f| f.bytes.len())
        .expect("the build has gzipped scripts");
    let uri = format!("/ui/{}", biggest.path);
    let plain = get_with(&app, &uri, &[]).await;
    assert_eq!(plain.status, StatusCode::OK);
    assert_eq!(
        plain.header(header::CONTENT_TYPE),
        "text/javascript; charset=utf-8"
    );
    assert_eq!(plain.header(header::CONTENT_ENCODING), "");
    assert_eq!(plain.header(header::CACHE_CONTROL), IMMUTABLE);
    assert_eq!(plain.header(header::VARY), "accept-encoding");
    let zipped = get_with(&app, &uri, &[("accept-encoding", "gzip, br")]).await;
    assert_eq!(zipped.status, StatusCode::OK);
    assert_eq!(zipped.header(header::CONTENT_ENCODING), "gzip");
    assert!(zipped.body.len() < plain.body.len());
    assert_eq!(embedded::gunzip(&zipped.body).unwrap(), plain.body);

    for missing in ["/ui/assets/missing.js", "/ui/../Cargo.toml"] {
        assert_eq!(
            get_with(&app, missing, &[]).await.status,
            StatusCode::NOT_FOUND
        );
    }
}
