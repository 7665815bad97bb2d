//! The desktop app end to end: the real `tandem-desktop` binary under Xvfb, driven through
//! tauri-driver + WebKitWebDriver, in a private D-Bus session with gnome-keyring. It checks the
//! window comes up with the local backend connected (and measures that cold start), the demo
//! badge, one conversation run by the demo LLM from the UI until it finishes, a keyring
//! round-trip through the app's commands into the real Secret Service, and a restart that
//! reopens the same backend and conversation.
//!
//! Everything it needs is installed by `scripts/setup.sh`; a missing part fails the test with
//! what to run. The WebDriver session is always deleted and Xvfb and the driver are always
//! killed. Screenshots land in `$CARGO_TARGET_TMPDIR/desktop-e2e/` (and in
//! `$TANDEM_SCREENSHOTS_DIR` when set).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail, ensure};
use serde_json::{Value, json};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A child process in its own process group, killed with its whole group when dropped.
struct Group {
    child: Child,
    name: &'static str,
}

impl Group {
    fn spawn(name: &'static str, mut cmd: Command, log: &Path) -> Self {
        use std::os::unix::process::CommandExt;
        let out = std::fs::File::create(log).unwrap();
        let err = out.try_clone().unwrap();
        cmd.process_group(0)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        Self { child, name }
    }

    fn signal_group(&self, sig: &str) {
        let _ = Command::new("kill")
            .args([sig, "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.signal_group("-TERM");
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.signal_group("-KILL");
        let _ = self.child.wait();
        eprintln!("stopped {}", self.name);
    }
}

fn need(program: &str) -> PathBuf {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(program))
            .find(|f| f.is_file())
    });
    let home_bin = dirs_cargo_bin().join(program);
    found
        .or_else(|| home_bin.is_file().then_some(home_bin))
        .unwrap_or_else(|| panic!("`{program}` is missing: run scripts/setup.sh (it installs what the desktop tests need)"))
}

fn dirs_cargo_bin() -> PathBuf {
    std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cargo")
        })
        .join("bin")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn free_display() -> u32 {
    (90..400)
        .find(|n| {
            !Path::new(&format!("/tmp/.X{n}-lock")).exists()
                && !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
        })
        .expect("a free X display number")
}

fn wait_for(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !ok() {
        assert!(
            Instant::now() < deadline,
            "{what} did not come up within {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A W3C WebDriver session.
struct Session {
    http: reqwest::Client,
    base: String,
}

impl Session {
    async fn cmd(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> Result<Value> {
        let url = format!("{}{path}", self.base);
        let mut req = self.http.request(method, &url);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let resp = req
            .send()
            .await
            .with_context(|| format!("WebDriver {url}"))?;
        let status = resp.status();
        let v: Value = resp
            .json()
            .await
            .with_context(|| format!("WebDriver {url}: not JSON"))?;
        if !status.is_success() {
            bail!("WebDriver {url}: {status} {}", v["value"]);
        }
        Ok(v["value"].clone())
    }

    async fn post(&self, path: &str, body: Value) -> Result<Value> {
        self.cmd(reqwest::Method::POST, path, Some(body)).await
    }

    async fn find_all(&self, css: &str) -> Result<Vec<String>> {
        let v = self
            .post("/elements", json!({"using": "css selector", "value": css}))
            .await?;
        Ok(v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e[ELEMENT].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default())
    }

    async fn wait_css(&self, css: &str, timeout: Duration) -> Result<String> {
        let deadline = Instant::now() + timeout;
        loop {
            // WebKitWebDriver answers "stale element reference" when the page replaces a match
            // while it collects them; that is a moment to look again, not a failure.
            match self.find_all(css).await {
                Ok(found) => {
                    if let Some(e) = found.into_iter().next() {
                        return Ok(e);
                    }
                }
                Err(e) if format!("{e:#}").contains("stale element") => {}
                Err(e) => return Err(e),
            }
            if Instant::now() > deadline {
                bail!("no `{css}` within {timeout:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn click(&self, el: &str) -> Result<()> {
        self.post(&format!("/element/{el}/click"), json!({}))
            .await
            .map(drop)
    }

    async fn type_into(&self, el: &str, text: &str) -> Result<()> {
        self.post(&format!("/element/{el}/clear"), json!({}))
            .await?;
        self.post(&format!("/element/{el}/value"), json!({"text": text}))
            .await
            .map(drop)
    }

    async fn text(&self, el: &str) -> Result<String> {
        Ok(self
            .cmd(reqwest::Method::GET, &format!("/element/{el}/text"), None)
            .await?
            .as_str()
            .unwrap_or_default()
            .to_owned())
    }

    /// Runs `body` (an async function body using `invoke`) in the page and returns its value.
    async fn invoke_script(&self, body: &str) -> Result<Value> {
        let script = format!(
            "const done = arguments[arguments.length - 1];\n\
             const invoke = window.__TAURI_INTERNALS__.invoke;\n\
             (async () => {{ {body} }})().then(v => done({{ok: v === undefined ? null : v}}), e => done({{error: (e && e.message) || JSON.stringify(e)}}));"
        );
        let v = self
            .post("/execute/async", json!({"script": script, "args": []}))
            .await?;
        match v.get("error") {
            Some(e) if !e.is_null() => Err(anyhow!("in the page: {e}")),
            _ => Ok(v["ok"].clone()),
        }
    }

    /// Best effort: WebKitWebDriver's screenshot can hang under Xvfb, so a failure is logged.
    async fn screenshot(&self, dirs: &[PathBuf], name: &str) -> Result<()> {
        match tokio::time::timeout(Duration::from_secs(20), self.try_screenshot(dirs, name)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => eprintln!("screenshot {name} failed: {e:#}"),
            Err(_) => eprintln!("screenshot {name} timed out"),
        }
        Ok(())
    }

    async fn try_screenshot(&self, dirs: &[PathBuf], name: &str) -> Result<()> {
        let b64 = self.cmd(reqwest::Method::GET, "/screenshot", None).await?;
        let png = decode_base64(b64.as_str().unwrap_or_default())?;
        for d in dirs {
            std::fs::create_dir_all(d)?;
            std::fs::write(d.join(format!("{name}.png")), &png)?;
        }
        Ok(())
    }
}

fn decode_base64(s: &str) -> Result<Vec<u8>> {
    let val = |c: u8| -> Result<u32> {
        Ok(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => bail!("bad base64 byte {c}"),
        } as u32)
    };
    let clean: Vec<u8> = s
        .bytes()
        .filter(|b| !b.is_ascii_whitespace() && *b != b'=')
        .collect();
    let mut out = Vec::with_capacity(clean.len() * 3 / 4);
    for chunk in clean.chunks(4) {
        let mut n = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            n |= val(c)? << (18 - 6 * i);
        }
        let bytes = [(n >> 16) as u8, (n >> 8) as u8, n as u8];
        out.extend_from_slice(&bytes[..chunk.len().saturating_sub(1)]);
    }
    Ok(out)
}

#[test]
fn desktop_app_end_to_end() {
    let app = PathBuf::from(env!("CARGO_BIN_EXE_tandem-desktop"));
    let xvfb = need("Xvfb");
    let driver = need("tauri-driver");
    need("WebKitWebDriver");
    need("dbus-run-session");
    need("gnome-keyring-daemon");
    need("secret-tool");
    let dist = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/dist/index.html");
    let page = std::fs::read_to_string(&dist).unwrap_or_default();
    assert!(
        !page.is_empty() && !page.contains("data-tandem-placeholder"),
        "the UI is not built ({}): run `npm ci && npm run -w ui build`, then rebuild (scripts/test.sh does)",
        dist.display()
    );

    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let artefacts = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("desktop-e2e");
    std::fs::create_dir_all(&artefacts).unwrap();
    let mut shots = vec![artefacts.clone()];
    if let Some(d) = std::env::var_os("TANDEM_SCREENSHOTS_DIR") {
        shots.push(PathBuf::from(d));
    }

    let display = free_display();
    let mut x = Command::new(xvfb);
    x.args([
        &format!(":{display}"),
        "-screen",
        "0",
        "1400x900x24",
        "-nolisten",
        "tcp",
        "-noreset",
    ]);
    let _xvfb = Group::spawn("Xvfb", x, &artefacts.join("xvfb.log"));
    wait_for("Xvfb", Duration::from_secs(15), || {
        Path::new(&format!("/tmp/.X11-unix/X{display}")).exists()
    });

    let port = free_port();
    let native = free_port();
    let bus_file = root.join("bus-address");
    let script = format!(
        r#"printf tandem-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null; printf %s "$DBUS_SESSION_BUS_ADDRESS" > '{}'; exec '{}' --port {port} --native-port {native}"#,
        bus_file.display(),
        driver.display()
    );
    let mut d = Command::new("dbus-run-session");
    d.args(["--", "bash", "-c", &script]);
    for k in [
        "WAYLAND_DISPLAY",
        "LLM_MODEL",
        "LLM_BASE_URL",
        "LLM_API_KEY",
        "DBUS_SESSION_BUS_ADDRESS",
        "XDG_RUNTIME_DIR",
    ] {
        d.env_remove(k);
    }
    let home = root.join("home");
    for d in [".config", ".local/share", ".cache"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    d.env("DISPLAY", format!(":{display}"))
        .env("HOME", &home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("TANDEM_HOME", root.join("tandem"))
        .env("WEBKIT_DISABLE_DMABUF_RENDERER", "1")
        // Without a GPU, WebKit's accelerated compositing leaves WebDriver screenshots hanging.
        .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
        .env("RUST_LOG", "warn,tandem_desktop=info");
    let driver_log = artefacts.join("tauri-driver.log");
    let _driver = Group::spawn("tauri-driver", d, &driver_log);
    wait_for(
        "tauri-driver and WebKitWebDriver",
        Duration::from_secs(30),
        || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
                && std::net::TcpStream::connect(("127.0.0.1", native)).is_ok()
        },
    );

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = rt.block_on(drive(&app, port, &bus_file, &shots, &home));
    if let Err(e) = &result {
        let log = std::fs::read_to_string(&driver_log).unwrap_or_default();
        panic!("desktop end-to-end failed: {e:#}\n--- tauri-driver / app log ---\n{log}");
    }
}

/// Launches the app through a new WebDriver session.
async fn launch(http: &reqwest::Client, port: u16, app: &Path) -> Result<Session> {
    let caps = json!({"capabilities": {"alwaysMatch": {"tauri:options": {"application": app}}}});
    let resp = http
        .post(format!("http://127.0.0.1:{port}/session"))
        .json(&caps)
        .send()
        .await?;
    let status = resp.status();
    let v: Value = resp.json().await?;
    let id = v["value"]["sessionId"].as_str().map(str::to_owned);
    let Some(id) = id.filter(|_| status.is_success()) else {
        bail!("new WebDriver session: {status} {v}");
    };
    Ok(Session {
        http: http.clone(),
        base: format!("http://127.0.0.1:{port}/session/{id}"),
    })
}

/// Launches the app, runs the checks, quits it, launches it again to check that it restores the
/// session; every WebDriver session is deleted whatever happens.
async fn drive(
    app: &Path,
    port: u16,
    bus_file: &Path,
    shots: &[PathBuf],
    home: &Path,
) -> Result<()> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()?;
    let started = Instant::now();
    let s = launch(&http, port, app).await?;
    let result = checks(&s, started, bus_file, shots, home).await;
    let deleted = s.cmd(reqwest::Method::DELETE, "", None).await;
    result?;
    deleted.context("deleting the WebDriver session")?;

    let s = launch(&http, port, app).await?;
    let result = restored(&s, shots, home).await;
    let deleted = s.cmd(reqwest::Method::DELETE, "", None).await;
    result?;
    deleted
        .map(drop)
        .context("deleting the second WebDriver session")
}

/// 5. After a restart the app is back on the local backend with the finished conversation open.
async fn restored(s: &Session, shots: &[PathBuf], home: &Path) -> Result<()> {
    let file = home.join(".config/dev.tandem.desktop/session.json");
    let saved: Value = serde_json::from_str(
        &std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?,
    )?;
    ensure!(
        saved["backend"].as_str().unwrap_or("local") == "local"
            && saved["lastConversation.local"].is_string(),
        "session.json after the first run: {saved}"
    );
    s.wait_css(".backend-switcher .conn.conn-ok", Duration::from_secs(60))
        .await
        .context("after a restart the local backend never showed connected")?;
    s.wait_css(
        ".pane-head .status-pill.st-finished",
        Duration::from_secs(30),
    )
    .await
    .with_context(|| format!("after a restart the last conversation is not open ({saved})"))?;
    if let Err(e) = s
        .wait_css(".timeline-list .item.action", Duration::from_secs(30))
        .await
    {
        bail!(
            "after a restart the timeline of the last conversation shows no action ({e}): {}",
            timeline_probe(s).await
        );
    }
    s.screenshot(shots, "desktop-restored").await?;
    println!("desktop: the restarted app reopened the last conversation");
    Ok(())
}

async fn checks(
    s: &Session,
    started: Instant,
    bus_file: &Path,
    shots: &[PathBuf],
    home: &Path,
) -> Result<()> {
    // 1. Launch: the UI reports the local backend connected.
    s.wait_css("body", Duration::from_secs(30)).await?;
    ensure!(
        s.find_all("[data-tandem-placeholder]").await?.is_empty(),
        "the app embeds the placeholder page: build the UI first"
    );
    s.wait_css(".backend-switcher .conn.conn-ok", Duration::from_secs(60))
        .await
        .context("the local backend never showed connected")?;
    let cold = started.elapsed();
    println!(
        "bench desktop_cold_start_to_interactive_xvfb: {} ms (spawn → UI shows the local backend connected)",
        cold.as_millis()
    );
    let title = s.cmd(reqwest::Method::GET, "/title", None).await?;
    ensure!(title == "Tandem", "window title {title}");
    // Parts that fail below are collected so one run reports all of them.
    let mut missing: Vec<String> = Vec::new();
    if let Err(e) = s.wait_css(".badge.demo", Duration::from_secs(5)).await {
        missing.push(format!("no demo badge although no provider is configured ({e}); the UI reads `demo`/`llm_model` from GET /server_info"));
    }
    s.screenshot(shots, "desktop-start").await?;

    // 2. The local backend as the app reports it.
    let local = s
        .invoke_script("return await invoke('backend_local');")
        .await?;
    let base = local["baseUrl"].as_str().unwrap_or_default();
    ensure!(
        base.starts_with("http://127.0.0.1:"),
        "local backend {local}"
    );
    ensure!(
        local["demo"] == true && local["key"].as_str().is_some_and(|k| k.len() >= 32),
        "local backend {local}"
    );
    let workspace = local["workspace"].as_str().unwrap_or_default().to_owned();

    // 3. Keyring round-trip through the app's commands, into the real Secret Service.
    let st = s
        .invoke_script("return await invoke('keyring_status');")
        .await?;
    ensure!(
        st["backend"] == "os" && st["warning"].is_null(),
        "keyring status {st}"
    );
    s.invoke_script("await invoke('keyring_set', {account: 'e2e', secret: 'sk-e2e-secret'});")
        .await?;
    let bus = std::fs::read_to_string(bus_file).context("the D-Bus address")?;
    let out = Command::new("secret-tool")
        .args(["lookup", "service", "tandem", "username", "e2e"])
        .env("DBUS_SESSION_BUS_ADDRESS", bus.trim())
        .env("HOME", home)
        .output()?;
    ensure!(
        String::from_utf8_lossy(&out.stdout) == "sk-e2e-secret",
        "secret-tool found {:?}",
        String::from_utf8_lossy(&out.stdout)
    );
    let got = s
        .invoke_script("return await invoke('keyring_get', {account: 'e2e'});")
        .await?;
    ensure!(got == "sk-e2e-secret", "keyring_get {got}");
    s.invoke_script("await invoke('keyring_delete', {account: 'e2e'});")
        .await?;
    let gone = s
        .invoke_script("return await invoke('keyring_get', {account: 'e2e'});")
        .await?;
    ensure!(gone.is_null(), "after delete {gone}");

    // 4. One conversation from the UI, run by the demo LLM until it finishes.
    let new = s
        .wait_css(
            ".conversations .toolbar button.primary",
            Duration::from_secs(10),
        )
        .await?;
    s.click(&new).await?;
    let folder = s
        .wait_css("form.new-conv input.mono", Duration::from_secs(10))
        .await?;
    s.type_into(&folder, &workspace).await?;
    let task = s
        .wait_css("form.new-conv textarea", Duration::from_secs(5))
        .await?;
    s.type_into(&task, "Show me around this workspace").await?;
    let start = s
        .wait_css("form.new-conv button[type=submit]", Duration::from_secs(5))
        .await?;
    let sent = Instant::now();
    s.click(&start).await?;
    s.wait_css(".timeline-list .item", Duration::from_secs(30))
        .await
        .context("no event appeared in the timeline")?;
    let first = s.post("/execute/sync", json!({"script": "return document.querySelector('.timeline-list .item')?.textContent ?? ''", "args": []})).await?;
    println!(
        "desktop: first timeline event {} ms after Start: {:.80}",
        sent.elapsed().as_millis(),
        first.as_str().unwrap_or_default()
    );
    let finished = s
        .wait_css(
            ".pane-head .status-pill.st-finished",
            Duration::from_secs(120),
        )
        .await;
    let mut actions = 0;
    for _ in 0..20 {
        match s.find_all(".timeline-list .item.action").await {
            Ok(found) => {
                actions = found.len();
                break;
            }
            Err(e) if format!("{e:#}").contains("stale element") => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => return Err(e),
        }
    }
    s.screenshot(shots, "desktop-conversation").await?;
    match finished {
        Ok(_) if actions >= 2 => {
            println!(
                "desktop: demo conversation finished {} ms after Start, {actions} actions shown",
                sent.elapsed().as_millis()
            )
        }
        Ok(_) => missing.push(format!(
            "the demo conversation finished with only {actions} actions in the timeline ({})",
            timeline_probe(s).await
        )),
        Err(e) => {
            let status = match s.find_all(".status-pill").await?.into_iter().next() {
                Some(el) => s.text(&el).await?,
                None => "none".into(),
            };
            missing.push(format!("the demo conversation did not finish ({e}; status {status}, {actions} actions shown)"))
        }
    }
    ensure!(
        missing.is_empty(),
        "missing parts:\n- {}",
        missing.join("\n- ")
    );
    Ok(())
}

/// What the timeline list looks like in the page, for failure messages: the scroller's
/// geometry and the rows in the DOM.
async fn timeline_probe(s: &Session) -> String {
    let script = "const list = document.querySelector('.timeline-list');\n\
        const sc = list && list.querySelector('[data-virtuoso-scroller], [data-test-id=virtuoso-scroller]');\n\
        const rows = list ? list.querySelectorAll('[data-index]') : [];\n\
        return JSON.stringify({list: list && list.getBoundingClientRect().height, \
          scroller: sc && {top: sc.scrollTop, height: sc.scrollHeight, client: sc.clientHeight}, \
          rows: Array.from(rows).map(r => r.getAttribute('data-index') + ':' + r.getBoundingClientRect().height + ':' + (r.textContent || '').slice(0, 20)), \
          html: list ? list.innerHTML.slice(0, 600) : null});";
    match s
        .post("/execute/sync", json!({"script": script, "args": []}))
        .await
    {
        Ok(v) => v.as_str().unwrap_or_default().to_owned(),
        Err(e) => format!("probe failed: {e:#}"),
    }
}
