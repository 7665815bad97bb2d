//! One binary serves the UI: the built `tandem`, copied to a folder of its own and started
//! from yet another folder (so neither the checkout's `ui/dist` nor the working directory can
//! help), serves the web UI embedded in it at `/ui/`, its assets too; `TANDEM_UI_DIR` still
//! points it at another build.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use tandem_e2e::{Child, free_port, tandem_bin, wait_healthy};

/// `tandem serve` from `bin`, in `cwd`, with `TANDEM_HOME=home`; stdout goes to `log`.
fn serve(
    bin: &Path,
    cwd: &Path,
    home: &Path,
    log: &Path,
    ui_dir: Option<&Path>,
) -> (Child, String) {
    let port = free_port().unwrap();
    let mut cmd = Command::new(bin);
    cmd.args(["serve", "--host", "127.0.0.1", "--port", &port.to_string()])
        .current_dir(cwd)
        .env("TANDEM_HOME", home)
        .env_remove("TANDEM_UI_DIR")
        .env_remove("TANDEM_SESSION_KEYS")
        .env_remove("LLM_MODEL")
        .env_remove("LLM_BASE_URL")
        .env_remove("LLM_API_KEY")
        .stdin(Stdio::null())
        .stdout(Stdio::from(std::fs::File::create(log).unwrap()))
        .stderr(Stdio::inherit());
    if let Some(d) = ui_dir {
        cmd.env("TANDEM_UI_DIR", d);
    }
    let mut child = Child::spawn("tandem serve (copied)", cmd).unwrap();
    let url = format!("http://127.0.0.1:{port}");
    wait_healthy(
        &format!("{url}/health"),
        Duration::from_secs(60),
        &mut child,
        Duration::from_millis(20),
    )
    .unwrap();
    (child, url)
}

/// The first `./assets/….js` the page loads.
fn script_of(html: &str) -> String {
    let start = html
        .find("assets/")
        .expect("the page loads an asset from assets/");
    let rest = &html[start..];
    let end = rest.find(".js").expect("a script under assets/") + 3;
    rest[..end].to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copied_binary_serves_the_embedded_ui() {
    let tmp = tempfile::tempdir().unwrap();
    let bin_dir = tmp.path().join("bin");
    let cwd = tmp.path().join("elsewhere");
    for d in [&bin_dir, &cwd] {
        std::fs::create_dir_all(d).unwrap();
    }
    let bin = bin_dir.join("tandem");
    std::fs::copy(tandem_bin().unwrap(), &bin).unwrap();
    let log = tmp.path().join("stdout.log");
    let (_server, url) = serve(&bin, &cwd, &tmp.path().join("home"), &log, None);
    let http = reqwest::Client::new();

    let resp = http.get(format!("{url}/ui/")).send().await.unwrap();
    assert_eq!(
        resp.status(),
        200,
        "the binary has no UI built in: build it with `npm run -w ui build` before cargo"
    );
    assert_eq!(resp.headers()["content-type"], "text/html; charset=utf-8");
    let html = resp.text().await.unwrap();
    assert!(html.contains("<div id=\"root\"></div>"), "{html}");
    let stdout = std::fs::read_to_string(&log).unwrap();
    assert!(stdout.contains("/ui/"), "{stdout}");

    let script = script_of(&html);
    let resp = http.get(format!("{url}/ui/{script}")).send().await.unwrap();
    assert_eq!(resp.status(), 200, "{script}");
    assert_eq!(
        resp.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    assert!(
        resp.headers()["cache-control"]
            .to_str()
            .unwrap()
            .contains("immutable")
    );
    let plain = resp.bytes().await.unwrap();
    assert!(!plain.is_empty());
    let resp = http
        .get(format!("{url}/ui/{script}"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-encoding"], "gzip");
    let zipped = resp.bytes().await.unwrap();
    assert!(zipped.len() < plain.len());
    assert_eq!(&zipped[..2], &[0x1f, 0x8b], "a gzip stream");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandem_ui_dir_overrides_the_embedded_ui() {
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("other-ui");
    std::fs::create_dir_all(dist.join("assets")).unwrap();
    std::fs::write(dist.join("index.html"), "<html>another build</html>").unwrap();
    std::fs::write(dist.join("assets/x-1.js"), "export {}").unwrap();
    let (_server, url) = serve(
        &tandem_bin().unwrap(),
        tmp.path(),
        &tmp.path().join("home"),
        &tmp.path().join("stdout.log"),
        Some(&dist),
    );
    let http = reqwest::Client::new();
    let resp = http.get(format!("{url}/ui/")).send().await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.text().await.unwrap(), "<html>another build</html>");
    let resp = http
        .get(format!("{url}/ui/assets/x-1.js"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.text().await.unwrap(), "export {}");
}
