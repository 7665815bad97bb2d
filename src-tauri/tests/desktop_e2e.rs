//! The desktop app end to end: the real `tandem-desktop` binary under Xvfb, driven through
//! tauri-driver + WebKitWebDriver, in a private D-Bus session with gnome-keyring. It checks the
//! window comes up with the local backend connected (and measures that cold start), the demo
//! badge, one conversation run by the demo LLM from the UI until it finishes, a keyring
//! round-trip through the app's commands into the real Secret Service, and a restart that
//! reopens the same backend and conversation. Then it launches the app once more without any
//! D-Bus session, with its own HOME and XDG folders: secrets go to the 0600 file, the window
//! shows the keyring warning as a banner and in Settings, and a key entered there lands in that
//! file. The launches run one after the other (one WebDriver session at a time) on one Xvfb.
//!
//! Everything it needs is installed by `scripts/setup.sh`; a missing part fails the test with
//! what to run. The WebDriver session is always deleted and Xvfb and the driver are always
//! killed. Screenshots land in `$CARGO_TARGET_TMPDIR/desktop-e2e/` (and in
//! `$TANDEM_SCREENSHOTS_DIR` when set).

#[path = "desktop_e2e/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

use harness::{
    Group, Session, app_env, free_display, free_port, launch, need, wait_for, wait_for_driver,
};

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
    let home = root.join("home");
    app_env(&mut d, display, &home, &root.join("tandem"));
    let driver_log = artefacts.join("tauri-driver.log");
    let driver_group = Group::spawn("tauri-driver", d, &driver_log);
    wait_for_driver("tauri-driver and WebKitWebDriver", port, native);

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = rt.block_on(drive(&app, port, &bus_file, &shots, &home));
    // The D-Bus session (and its keyring) ends with its driver.
    drop(driver_group);
    if let Err(e) = &result {
        let log = std::fs::read_to_string(&driver_log).unwrap_or_default();
        panic!("desktop end-to-end failed: {e:#}\n--- tauri-driver / app log ---\n{log}");
    }

    // 6. Without a D-Bus session: the keyring warning.
    let port = free_port();
    let native = free_port();
    let home = root.join("home-no-dbus");
    let runtime = root.join("runtime-no-dbus");
    std::fs::create_dir_all(&runtime).unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let mut d = Command::new(&driver);
    d.args([
        "--port",
        &port.to_string(),
        "--native-port",
        &native.to_string(),
    ]);
    app_env(&mut d, display, &home, &root.join("tandem-no-dbus"));
    // An empty runtime folder: no `bus` socket for the keyring's D-Bus client to find.
    d.env("XDG_RUNTIME_DIR", &runtime);
    let driver_log = artefacts.join("tauri-driver-no-dbus.log");
    let driver_group = Group::spawn("tauri-driver (no D-Bus)", d, &driver_log);
    wait_for_driver("tauri-driver and WebKitWebDriver (no D-Bus)", port, native);
    let result = rt.block_on(drive_without_dbus(&app, port, &shots, &home));
    drop(driver_group);
    if let Err(e) = &result {
        let log = std::fs::read_to_string(&driver_log).unwrap_or_default();
        panic!(
            "desktop end-to-end without D-Bus failed: {e:#}\n--- tauri-driver / app log ---\n{log}"
        );
    }
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
    // The Docker sandbox is offered, and idle until a folder is picked for it.
    let sandbox = s
        .invoke_script("return await invoke('sandbox_status');")
        .await?;
    ensure!(
        sandbox["state"]["state"] == "stopped",
        "sandbox status {sandbox}"
    );
    ensure!(
        !s.find_all("#backend-select option[value='sandbox']")
            .await?
            .is_empty(),
        "no Docker sandbox in the backend switch"
    );

    // 3. Keyring round-trip through the app's commands, into the real Secret Service.
    let st = s
        .invoke_script("return await invoke('keyring_status');")
        .await?;
    ensure!(
        st["backend"] == "os" && st["warning"].is_null(),
        "keyring status {st}"
    );
    ensure!(
        s.find_all(KEYRING_BANNER).await?.is_empty(),
        "a keyring warning banner although the Secret Service holds the secrets"
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
    // The demo's tour waits for the person twice: its risky command asks for approval (the
    // form's default asks before risky actions), and it asks the person to take over the
    // browser to sign in. Answer both as a person would, until the run finishes.
    let finished = answer_the_tour(s, Duration::from_secs(180)).await;
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
        Ok(clicked) if actions >= 2 => {
            println!(
                "desktop: demo conversation finished {} ms after Start, {actions} actions shown; the person clicked {clicked:?}",
                sent.elapsed().as_millis()
            );
            for wanted in ["Approve", "Take control", "Hand back"] {
                if !clicked.iter().any(|c| c == wanted) {
                    missing.push(format!(
                        "the demo's tour never offered {wanted:?} (clicked {clicked:?})"
                    ));
                }
            }
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

/// Clicks through what the demo's tour asks of the person (Approve; Show the browser, Take
/// control, Hand back) until the conversation shows finished; the buttons clicked, in order.
async fn answer_the_tour(s: &Session, limit: Duration) -> Result<Vec<String>> {
    let script = "const by = (root, text) => root && Array.from(root.querySelectorAll('button')).find(b => b.textContent.trim() === text && !b.disabled);\n\
        const approval = document.querySelector('[aria-label=\"Pending approval\"]');\n\
        const asks = document.querySelector('[aria-label=\"The agent asks for you\"]:not([role=alert])');\n\
        const pane = document.querySelector('[data-pane=\"browser\"]');\n\
        const request = pane && pane.querySelector('[role=alert][aria-label=\"The agent asks for you\"]');\n\
        const b = by(approval, 'Approve') || by(pane, 'Hand back') || by(request, 'Take control') || (!request && by(asks, 'Show the browser'));\n\
        if (b) { b.click(); return b.textContent.trim(); }\n\
        return document.querySelector('.pane-head .status-pill.st-finished') ? 'finished' : '';";
    let deadline = Instant::now() + limit;
    let mut clicked = Vec::new();
    while Instant::now() < deadline {
        let did = s
            .post("/execute/sync", json!({"script": script, "args": []}))
            .await?;
        match did.as_str().unwrap_or_default() {
            "finished" => return Ok(clicked),
            "" => {}
            button => clicked.push(button.to_owned()),
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    Err(anyhow::anyhow!(
        "the demo conversation did not finish within {limit:?} (clicked {clicked:?})"
    ))
}

/// The shell's banner for secrets kept outside a keyring.
const KEYRING_BANNER: &str = "[role=alert][aria-label='Keyring warning']";

/// Launches the app without a D-Bus session and checks the keyring warning; the WebDriver
/// session is deleted whatever happens.
async fn drive_without_dbus(app: &Path, port: u16, shots: &[PathBuf], home: &Path) -> Result<()> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(120))
        .build()?;
    let s = launch(&http, port, app).await?;
    let result = keyring_warning(&s, shots, home).await;
    let deleted = s.cmd(reqwest::Method::DELETE, "", None).await;
    result?;
    deleted
        .map(drop)
        .context("deleting the WebDriver session without D-Bus")
}

/// Step 6, no Secret Service: the banner and Settings say where secrets go, and a key entered
/// in Settings lands in that 0600 file.
async fn keyring_warning(s: &Session, shots: &[PathBuf], home: &Path) -> Result<()> {
    s.wait_css(".backend-switcher .conn.conn-ok", Duration::from_secs(60))
        .await
        .context("without D-Bus the local backend never showed connected")?;
    let file = home.join(".config/dev.tandem.desktop/secrets.json");
    let path = file.to_string_lossy().into_owned();
    let st = s
        .invoke_script("return await invoke('keyring_status');")
        .await?;
    ensure!(
        st["backend"] == "file" && st["file"] == path.as_str(),
        "keyring status without D-Bus {st}"
    );
    let banner = s
        .wait_css(KEYRING_BANNER, Duration::from_secs(30))
        .await
        .context("no keyring warning banner without a D-Bus session")?;
    let shown = s
        .cmd(
            reqwest::Method::GET,
            &format!("/element/{banner}/displayed"),
            None,
        )
        .await?;
    ensure!(
        shown == true,
        "the keyring banner is in the page but hidden"
    );
    let text = s.text(&banner).await?;
    ensure!(
        text.contains("No system keyring is available") && text.contains(&path),
        "the keyring banner reads {text:?}"
    );
    println!("desktop without D-Bus: the banner reads {text:?}");
    // The sentence is for people; the D-Bus error is folded away under "Technical details".
    let details = s
        .invoke_script(&format!(
            "const d = document.querySelector(\"{KEYRING_BANNER} details\");\n\
             return d && {{open: d.open, summary: d.querySelector('summary').textContent, \
             cause: d.querySelector('code').textContent}};"
        ))
        .await?;
    ensure!(
        details["open"] == false
            && details["summary"] == "Technical details"
            && details["cause"]
                .as_str()
                .is_some_and(|c| c.contains("Secret Service")),
        "the keyring banner's technical details are {details}"
    );
    s.screenshot(shots, "desktop-keyring-warning").await?;

    // Settings repeats it where keys are entered; a key saved there goes to the file.
    let open = s
        .wait_css(
            "header.topbar button[title^='Settings']",
            Duration::from_secs(5),
        )
        .await?;
    s.click(&open).await?;
    let profiles = "[role=dialog] section[aria-label='LLM profiles']";
    let note = s
        .wait_css(&format!("{profiles} [role=note]"), Duration::from_secs(10))
        .await
        .context("Settings shows no keyring warning")?;
    let note = s.text(&note).await?;
    ensure!(
        note.contains("No system keyring is available") && note.contains(&path),
        "Settings' keyring warning reads {note:?}"
    );
    let model = s
        .wait_css(
            &format!("{profiles} input[aria-label='Model']"),
            Duration::from_secs(5),
        )
        .await?;
    s.type_into(&model, "openai/gpt-5").await?;
    let key = s
        .wait_css(
            &format!("{profiles} input[aria-label='API key']"),
            Duration::from_secs(5),
        )
        .await?;
    s.type_into(&key, "sk-e2e-in-file").await?;
    let add = s
        .wait_css(
            &format!("{profiles} button[type=submit]"),
            Duration::from_secs(5),
        )
        .await?;
    s.click(&add).await?;
    let deadline = Instant::now() + Duration::from_secs(20);
    let stored: Value = loop {
        let v = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok());
        if let Some(v) = v.filter(|v| v.to_string().contains("sk-e2e-in-file")) {
            break v;
        }
        ensure!(
            Instant::now() < deadline,
            "the key entered in Settings never reached {path}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let accounts = stored["tandem"].as_object().cloned().unwrap_or_default();
    ensure!(
        accounts
            .iter()
            .any(|(a, v)| a.starts_with("llm:") && v == "sk-e2e-in-file"),
        "{path} holds {stored}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file)?.permissions().mode() & 0o777;
    ensure!(mode == 0o600, "{path} has mode {mode:o}");

    // Dismissed, the banner stays away for the session.
    let close = s
        .wait_css(
            "button[aria-label='Close settings']",
            Duration::from_secs(5),
        )
        .await?;
    s.click(&close).await?;
    let dismiss = s
        .wait_css(&format!("{KEYRING_BANNER} button"), Duration::from_secs(5))
        .await?;
    s.click(&dismiss).await?;
    ensure!(
        s.find_all(KEYRING_BANNER).await?.is_empty(),
        "the keyring banner is still shown after Dismiss"
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
