//! The live view's state follows the page through CDP's own events, with no agent action or
//! person's input after the change: a page that redirects itself, a script that changes the
//! title or the URL's fragment, and a slow load (a loopback server that holds the response
//! until the test lets it go) that shows as loading while it lasts.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tandem_browser::{Browser, BrowserConfig};
use tandem_protocol::BrowserState;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::Notify;

/// Hang guard for each wait; the tests never assert speed.
const PATIENCE: Duration = Duration::from_secs(30);

const REDIRECT: &str = "<!doctype html><title>Before</title><p>moving on\
<script>setTimeout(() => location.replace('/after'), 300)</script>";
const AFTER: &str = "<!doctype html><title>After</title><p>arrived";
const RETITLE: &str = "<!doctype html><title>Old title</title><p>watch the title\
<script>setTimeout(() => { document.title = 'New title'; }, 300);\
setTimeout(() => { location.hash = 'part2'; }, 600)</script>";
const SLOW: &str = "<!doctype html><title>Slow page</title><p>finally";

struct Site {
    addr: SocketAddr,
    /// Lets `/slow`'s response go.
    release: Arc<Notify>,
}

impl Site {
    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

async fn serve() -> Site {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let release = Arc::new(Notify::new());
    let gate = Arc::clone(&release);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let gate = Arc::clone(&gate);
            tokio::spawn(async move {
                let mut buf = vec![0u8; 8192];
                let n = stream.read(&mut buf).await.unwrap_or(0);
                let req = String::from_utf8_lossy(&buf[..n]).to_string();
                let path = req.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let body = match path.as_str() {
                    "/redirect" => REDIRECT,
                    "/after" => AFTER,
                    "/retitle" => RETITLE,
                    "/slow" => {
                        gate.notified().await;
                        SLOW
                    }
                    _ => "<title>Not found</title>",
                };
                let resp = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = stream.write_all(resp.as_bytes()).await;
            });
        }
    });
    Site { addr, release }
}

fn browser(dir: &tempfile::TempDir) -> Browser {
    let mut config =
        BrowserConfig::for_conversation(dir.path().join("conv"), dir.path().join("ws"));
    config.navigation_timeout = Duration::from_secs(30);
    config.command_timeout = Duration::from_secs(10);
    Browser::new(config)
}

/// Waits (with no action on the browser) until the published state matches `pred`.
async fn until(b: &Browser, what: &str, pred: impl Fn(&BrowserState) -> bool) -> BrowserState {
    let mut states = b.watch_state();
    match tokio::time::timeout(PATIENCE, states.wait_for(|s| pred(s))).await {
        Ok(Ok(s)) => s.clone(),
        _ => panic!("the state never showed {what}: {:?}", b.state()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_that_redirects_itself_is_followed_without_an_action() {
    let site = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let b = browser(&dir);
    let out = b.navigate(&site.url("/redirect"), false).await.unwrap();
    assert!(!out.is_error, "{}", out.text);
    let s = until(&b, "the redirected page", |s| {
        s.url == site.url("/after") && s.title == "After"
    })
    .await;
    let tab = s.tabs.iter().find(|t| t.active).unwrap();
    assert_eq!(
        (tab.url.as_str(), tab.title.as_str()),
        (site.url("/after").as_str(), "After"),
        "the active tab follows too: {s:?}"
    );
    until(&b, "the load finished", |s| !s.loading).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_that_changes_the_title_and_the_fragment_is_followed() {
    let site = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let b = browser(&dir);
    let out = b.navigate(&site.url("/retitle"), false).await.unwrap();
    assert!(!out.is_error, "{}", out.text);
    until(&b, "the new title", |s| s.title == "New title").await;
    until(&b, "the fragment", |s| s.url == site.url("/retitle#part2")).await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_load_shows_as_loading_until_the_page_arrives() {
    let site = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let b = browser(&dir);
    let out = b.navigate(&site.url("/after"), false).await.unwrap();
    assert!(!out.is_error, "{}", out.text);
    until(&b, "the first page loaded", |s| {
        !s.loading && s.title == "After"
    })
    .await;
    // The agent's navigation waits for the load; the state says it is loading meanwhile.
    let agent = b.clone();
    let slow = site.url("/slow");
    let nav = tokio::spawn(async move { agent.navigate(&slow, false).await });
    let s = until(&b, "loading", |s| s.loading).await;
    assert_eq!(
        s.url,
        site.url("/after"),
        "nothing has arrived yet, so the old page still shows"
    );
    assert!(!nav.is_finished(), "the response is still held back");
    site.release.notify_one();
    until(&b, "the slow page", |s| {
        s.url == site.url("/slow") && s.title == "Slow page" && !s.loading
    })
    .await;
    let out = tokio::time::timeout(PATIENCE, nav)
        .await
        .expect("the navigation ended")
        .unwrap()
        .unwrap();
    assert!(!out.is_error, "{}", out.text);
    b.close().await;
}
