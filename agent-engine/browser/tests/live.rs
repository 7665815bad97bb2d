//! The browser on real Chromium against the test site: the agent's actions, a person's
//! takeover, the screencast, and what bad input and crashes get.

use std::time::Duration;

use serde_json::Value;
use tandem_browser::{Browser, BrowserConfig, BrowserError};
use tandem_protocol::{BrowserClientFrame, BrowserDriver};

use tandem_testkit::site::{Site, serve};

fn browser(dir: &tempfile::TempDir) -> Browser {
    let mut config =
        BrowserConfig::for_conversation(dir.path().join("conv"), dir.path().join("ws"));
    config.navigation_timeout = Duration::from_secs(3);
    config.command_timeout = Duration::from_secs(3);
    Browser::new(config)
}

fn elements(state_text: &str) -> Vec<Value> {
    let v: Value = serde_json::from_str(state_text).unwrap();
    v["interactive_elements"].as_array().unwrap().clone()
}

fn index_of(elements: &[Value], pred: impl Fn(&Value) -> bool) -> i64 {
    elements.iter().find(|e| pred(e)).unwrap()["index"]
        .as_i64()
        .unwrap()
}

async fn login_by_index(b: &Browser, site: &Site) {
    let out = b.navigate(&site.url("/"), false).await.unwrap();
    assert!(!out.is_error, "{}", out.text);
    let state = b.get_state(false).await.unwrap();
    let v: Value = serde_json::from_str(&state.text).unwrap();
    assert_eq!(v["title"], "Tandem Shop", "the real title, not the URL");
    assert_eq!(v["url"], site.url("/"));
    let els = elements(&state.text);
    let link = index_of(&els, |e| e["tag"] == "a");
    assert_eq!(els[(link - 1) as usize]["href"], "/login.html");
    let clicked = b.click(link, false).await.unwrap();
    assert!(clicked.text.contains("login.html"), "{}", clicked.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agent_navigates_reads_clicks_and_types_by_index_to_log_in() {
    let site = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let b = browser(&dir);
    assert!(
        !b.state().running,
        "Chromium starts at the first action, not before"
    );
    login_by_index(&b, &site).await;
    let state = b.get_state(true).await.unwrap();
    let shot = state.screenshot.as_deref().unwrap();
    assert!(shot.starts_with("iVBOR"), "a PNG screenshot");
    let els = elements(&state.text);
    let user = index_of(&els, |e| e["id"] == "user");
    let pass = index_of(&els, |e| e["id"] == "pass");
    let go = index_of(&els, |e| e["id"] == "go");
    assert!(!b.type_text(user, "alice").await.unwrap().is_error);
    assert!(!b.type_text(pass, "s3cret").await.unwrap().is_error);
    let state = b.get_state(false).await.unwrap();
    assert!(
        !state.text.contains("s3cret"),
        "password values are never shown"
    );
    b.click(go, false).await.unwrap();
    let content = b.get_content(false, 0).await.unwrap();
    assert!(content.text.contains("Welcome, alice"), "{}", content.text);
    let s = b.state();
    assert!(s.url.contains("/welcome.html?user=alice"), "{}", s.url);
    assert_eq!(s.title, "Your account");
    // Back goes to the login page.
    let back = b.go_back().await.unwrap();
    assert!(back.text.contains("login.html"), "{}", back.text);
    assert!(
        dir.path().join("conv/browser-profile").is_dir(),
        "the profile lives in the conversation"
    );
    b.close().await;
    assert!(matches!(
        b.navigate(&site.url("/"), false).await,
        Err(BrowserError::Closed)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_takes_control_types_by_coordinates_and_hands_back() {
    let site = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let b = browser(&dir);
    login_by_index(&b, &site).await;
    // Input while the agent drives is refused and does nothing.
    let refused = b
        .person_input(BrowserClientFrame::Text { text: "x".into() })
        .await;
    assert!(
        matches!(refused, Err(BrowserError::AgentDrives)),
        "{refused:?}"
    );
    let mut frames = b.watch_frames();
    assert!(b.take_control(|| false).await.is_some());
    assert_eq!(b.driver(), BrowserDriver::Person);
    assert!(
        b.take_control(|| false).await.is_none(),
        "they already drive"
    );
    assert!(matches!(
        b.get_state(false).await,
        Err(BrowserError::PersonDrives)
    ));
    // A frame of the live view arrives, sized in CSS pixels of the viewport.
    tokio::time::timeout(Duration::from_secs(20), frames.rx.wait_for(|f| f.is_some()))
        .await
        .expect("a screencast frame")
        .unwrap();
    let f = frames.rx.borrow().clone().unwrap();
    assert_eq!((f.width, f.height), (1280.0, 800.0));
    // The login page places its fields at fixed spots: user centred at (250, 215), password
    // at (250, 315); a person clicks where they see them.
    let rects =
        std::collections::HashMap::from([("user", (250.0, 215.0)), ("pass", (250.0, 315.0))]);
    for (id, text) in [("user", "bob"), ("pass", "pw")] {
        let (x, y) = rects[id];
        b.person_input(BrowserClientFrame::Mouse {
            action: "click".into(),
            x,
            y,
            button: None,
            delta_x: 0.0,
            delta_y: 0.0,
            modifiers: 0,
        })
        .await
        .unwrap();
        b.person_input(BrowserClientFrame::Text { text: text.into() })
            .await
            .unwrap();
    }
    b.person_input(BrowserClientFrame::Key {
        key: "Enter".into(),
        modifiers: 0,
    })
    .await
    .unwrap();
    let mut states = b.watch_state();
    tokio::time::timeout(
        Duration::from_secs(10),
        states.wait_for(|s| s.url.contains("welcome")),
    )
    .await
    .expect("the form was submitted")
    .unwrap();
    let bad = b
        .person_input(BrowserClientFrame::Mouse {
            action: "click".into(),
            x: -5.0,
            y: 99999.0,
            button: None,
            delta_x: 0.0,
            delta_y: 0.0,
            modifiers: 0,
        })
        .await;
    assert!(matches!(bad, Err(BrowserError::BadInput(_))), "{bad:?}");
    let mut over = b.hand_back("logged in as bob").await.unwrap();
    assert!(!over.answer(), "nobody asked");
    assert!(!over.resume_run, "no run was paused");
    assert!(
        over.secrets.is_empty(),
        "a two-character password is too short to mask: {:?}",
        over.secrets.len()
    );
    let back = over.back.clone();
    drop(over);
    assert!(back.url_before.contains("login.html"));
    assert!(back.url_after.contains("welcome.html?user=bob"), "{back:?}");
    let told = back.describe();
    assert!(
        told.contains("Your account") && told.contains("logged in as bob"),
        "{told}"
    );
    assert_eq!(b.driver(), BrowserDriver::Agent);
    assert!(b.hand_back("again").await.is_none());
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_pages_and_stale_indices_get_clear_observations() {
    let site = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let b = browser(&dir);
    // A port nothing listens on any more.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let out = b
        .navigate(&format!("http://{closed}/"), false)
        .await
        .unwrap();
    assert!(
        out.is_error && out.text.contains("ERR_CONNECTION_REFUSED"),
        "{}",
        out.text
    );
    let out = b.navigate(&site.url("/data.json"), false).await.unwrap();
    assert!(!out.is_error, "{}", out.text);
    let content = b.get_content(false, 0).await.unwrap();
    assert!(content.text.contains("42"), "{}", content.text);
    let out = b.navigate(&site.url("/never"), false).await.unwrap();
    assert!(
        !out.is_error && out.text.contains("had not finished loading"),
        "{}",
        out.text
    );
    b.navigate(&site.url("/huge.html"), false).await.unwrap();
    let state = b.get_state(false).await.unwrap();
    let v: Value = serde_json::from_str(&state.text).unwrap();
    assert_eq!(v["interactive_elements"].as_array().unwrap().len(), 400);
    assert_eq!(v["elements_not_shown"], 2600);
    let content = b.get_content(false, 0).await.unwrap();
    assert!(content.text.contains("start_from_char=20000"), "paged");
    let next = b.get_content(false, 20_000).await.unwrap();
    assert!(!next.is_error);
    b.navigate(&site.url("/"), false).await.unwrap();
    b.get_state(false).await.unwrap();
    let stale = b.click(3999, false).await.unwrap();
    assert!(
        stale.is_error && stale.text.contains("index 3999 not found"),
        "{}",
        stale.text
    );
    let tab = b.switch_tab("ZZZZ").await.unwrap();
    assert!(tab.is_error && tab.text.contains("ZZZZ"), "{}", tab.text);
    let typed = b.type_text(2, "x").await.unwrap();
    assert!(
        typed.is_error && typed.text.contains("<button>"),
        "{}",
        typed.text
    );
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_browser_is_restarted_and_the_agent_told() {
    let site = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let b = browser(&dir);
    b.navigate(&site.url("/"), false).await.unwrap();
    let pid = b.pid().await.unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    // The next action restarts Chromium and says so (one in the moment before the connection
    // is seen gone may fail with the reason).
    let mut out = b.navigate(&site.url("/"), false).await;
    for _ in 0..3 {
        if out.as_ref().is_ok_and(|o| o.text.contains("restarted")) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        out = b.navigate(&site.url("/"), false).await;
    }
    let out = out.unwrap();
    assert!(
        out.text.contains("restarted") && out.text.contains("Navigated to"),
        "{}",
        out.text
    );
    assert_ne!(b.pid().await.unwrap(), pid);
    b.close().await;
}

/// Viewers come and go quickly (each leaving stops the screencast, the next starts it again):
/// every one of them gets frames, because a stop never lands after the next start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn viewers_coming_and_going_each_get_frames() {
    const NOISE: &str = "data:text/html,<title>Noise</title><canvas id=c width=64 height=64></canvas><script>const x=document.getElementById('c').getContext('2d');function f(){x.fillStyle='#'+(Math.random()*0xffffff|0).toString(16).padStart(6,'0');x.fillRect(0,0,64,64);requestAnimationFrame(f)}f()</script>";
    let dir = tempfile::tempdir().unwrap();
    let b = browser(&dir);
    b.navigate(NOISE, false).await.unwrap();
    let mut last = 0;
    for round in 0..20 {
        let mut frames = b.watch_frames();
        tokio::time::timeout(
            Duration::from_secs(30),
            frames
                .rx
                .wait_for(|f| f.as_ref().is_some_and(|f| f.seq > last)),
        )
        .await
        .unwrap_or_else(|_| panic!("viewer {round} got no frame"))
        .unwrap();
        last = frames.rx.borrow().as_ref().map_or(last, |f| f.seq);
        drop(frames);
    }
    b.close().await;
}

/// Whether a process other than a zombie is in group `pgid`.
fn group_alive(pgid: i32) -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        // pid (comm) state ppid pgrp ...: the fields after the last ')'.
        let fields: Vec<&str> = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest.split_whitespace().collect())
            .unwrap_or_default();
        fields.len() > 2 && fields[0] != "Z" && fields[2] == pgid.to_string()
    })
}

#[test]
fn a_browser_closed_after_its_runtime_is_gone_still_stops_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let b = browser(&dir);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let pid = rt.block_on(async {
        b.navigate("data:text/html,<title>t</title>", false)
            .await
            .unwrap();
        b.pid().await.unwrap() as i32
    });
    assert!(group_alive(pid));
    // The conversation is dropped as its process ends: no runtime to close Chromium on.
    drop(rt);
    b.close_soon();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while group_alive(pid) {
        assert!(
            std::time::Instant::now() < deadline,
            "Chromium ({pid}) outlived its browser"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test]
async fn a_missing_chromium_is_named_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = BrowserConfig::for_conversation(dir.path().into(), dir.path().into());
    config.executable = "/nonexistent/chromium".into();
    let b = Browser::new(config);
    let err = b.navigate("http://127.0.0.1:9/", false).await.unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("/nonexistent/chromium") && text.contains("TANDEM_CHROMIUM"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tab_the_page_opens_is_followed_and_one_closed_under_the_agent_is_reported() {
    let site = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let b = browser(&dir);
    b.navigate(&site.url("/"), false).await.unwrap();
    let els = elements(&b.get_state(false).await.unwrap().text);
    let opener = index_of(&els, |e| e["text"] == "Open closer");
    let out = b.click(opener, false).await.unwrap();
    assert!(out.text.contains("new tab"), "{}", out.text);
    let tabs = b.list_tabs().await.unwrap();
    let listed: Value = serde_json::from_str(&tabs.text).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 2, "{listed}");
    assert_eq!(b.state().title, "Closer");
    let els = elements(&b.get_state(false).await.unwrap().text);
    let close = index_of(&els, |e| e["text"] == "Close me");
    let clicked = b.click(close, false).await;
    let mut told = match clicked {
        Ok(out) => out.text,
        Err(e) => e.to_string(),
    };
    // Chromium reports the closed target a moment later; until then an action may fail on it.
    for _ in 0..20 {
        if told.contains("closed") {
            break;
        }
        told = match b.get_state(false).await {
            Ok(out) => out.text,
            Err(e) => e.to_string(),
        };
        if told.contains("was closed") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        told.contains("The tab you were on was closed") || told.contains("The page closed its tab"),
        "{told}"
    );
    assert_eq!(b.state().title, "Tandem Shop");
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tabs_scrolling_storage_and_recording_work_on_real_pages() {
    let site = serve().await;
    let dir = tempfile::tempdir().unwrap();
    let b = browser(&dir);
    b.navigate(&site.url("/huge.html"), false).await.unwrap();
    let down = b.scroll("down").await.unwrap();
    assert!(
        down.text.starts_with("Scrolled down; now at"),
        "{}",
        down.text
    );
    let up = b.scroll("up").await.unwrap();
    assert!(up.text.contains("now at 0"), "{}", up.text);
    let top = b.scroll("up").await.unwrap();
    assert!(
        top.text.starts_with("Cannot scroll up further"),
        "{}",
        top.text
    );

    // A second tab, switched to and closed by its id.
    b.navigate(&site.url("/login.html"), true).await.unwrap();
    let tabs: Value = serde_json::from_str(&b.list_tabs().await.unwrap().text).unwrap();
    let tabs = tabs.as_array().unwrap().clone();
    assert_eq!(tabs.len(), 2);
    let first = tabs[0]["tab_id"].as_str().unwrap().to_owned();
    let second = tabs[1]["tab_id"].as_str().unwrap().to_owned();
    assert_eq!(first.len(), 4);
    assert_eq!(b.state().title, "Log in");
    b.switch_tab(&first.to_lowercase()).await.unwrap();
    assert_eq!(b.state().title, "Huge");
    let closed = b.close_tab(&second).await.unwrap();
    assert!(
        closed.text.contains(&format!("Closed tab {second}")),
        "{}",
        closed.text
    );
    assert_eq!(b.state().tabs.len(), 1);

    // Storage: set on this origin, read back, in the shape set_storage takes.
    let origin = site.url("");
    let storage = serde_json::json!({
        "cookies": [{"name": "session", "value": "abc", "url": origin}],
        "origins": [{"origin": origin, "localStorage": [{"name": "theme", "value": "dark"}]}],
    });
    let set = b.set_storage(&storage).await.unwrap();
    assert!(
        set.text.contains("Set 1 cookies and 1 storage items"),
        "{}",
        set.text
    );
    let got: Value = serde_json::from_str(&b.get_storage().await.unwrap().text).unwrap();
    assert!(
        got["cookies"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "session" && c["value"] == "abc"),
        "{got}"
    );
    assert_eq!(
        got["origins"][0]["localStorage"][0]["value"], "dark",
        "{got}"
    );
    let bad = b
        .set_storage(&serde_json::json!({"cookies": [{"nope": 1}]}))
        .await
        .unwrap();
    assert!(
        bad.is_error && bad.text.contains("cookies[0]"),
        "{}",
        bad.text
    );

    // A recording keeps page changes and frames in numbered JSON files.
    let started = b.start_recording().await.unwrap();
    assert!(
        started.text.contains("Recording started"),
        "{}",
        started.text
    );
    b.navigate(&site.url("/"), false).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let stopped = b.stop_recording().await.unwrap();
    assert!(
        stopped.text.contains("Recording stopped"),
        "{}",
        stopped.text
    );
    let rec_root = dir.path().join("ws/.agent_tmp/browser_observations");
    let rec = std::fs::read_dir(&rec_root)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let events: Value =
        serde_json::from_slice(&std::fs::read(rec.join("1.json")).unwrap()).unwrap();
    assert!(
        events
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["type"] == "page" && e["title"] == "Tandem Shop"),
        "{events}"
    );
    let again = b.stop_recording().await.unwrap();
    assert!(again.is_error, "no recording runs any more");
    b.close().await;
}
