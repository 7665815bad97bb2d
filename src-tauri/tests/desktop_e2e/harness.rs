//! The desktop end-to-end test's harness: processes in their own group, the programs it needs,
//! free ports and X displays, the driver's environment, and a small W3C WebDriver client.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::{Value, json};

const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// A child process in its own process group, killed with its whole group when dropped.
pub struct Group {
    child: Child,
    name: &'static str,
}

impl Group {
    pub fn spawn(name: &'static str, mut cmd: Command, log: &Path) -> Self {
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

    fn signal_group(&self, signal: Signal) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = killpg(Pid::from_raw(pid), signal);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.signal_group(Signal::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(3);
        while Instant::now() < deadline {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.signal_group(Signal::SIGKILL);
        let _ = self.child.wait();
        eprintln!("stopped {}", self.name);
    }
}

pub fn need(program: &str) -> PathBuf {
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

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

pub fn free_display() -> u32 {
    (90..400)
        .find(|n| {
            !Path::new(&format!("/tmp/.X{n}-lock")).exists()
                && !Path::new(&format!("/tmp/.X11-unix/X{n}")).exists()
        })
        .expect("a free X display number")
}

pub fn wait_for(what: &str, timeout: Duration, mut ok: impl FnMut() -> bool) {
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
pub struct Session {
    http: reqwest::Client,
    base: String,
}

impl Session {
    pub async fn cmd(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<Value> {
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

    pub async fn post(&self, path: &str, body: Value) -> Result<Value> {
        self.cmd(reqwest::Method::POST, path, Some(body)).await
    }

    pub async fn find_all(&self, css: &str) -> Result<Vec<String>> {
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

    pub async fn wait_css(&self, css: &str, timeout: Duration) -> Result<String> {
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

    pub async fn click(&self, el: &str) -> Result<()> {
        self.post(&format!("/element/{el}/click"), json!({}))
            .await
            .map(drop)
    }

    pub async fn type_into(&self, el: &str, text: &str) -> Result<()> {
        self.post(&format!("/element/{el}/clear"), json!({}))
            .await?;
        self.post(&format!("/element/{el}/value"), json!({"text": text}))
            .await
            .map(drop)
    }

    pub async fn text(&self, el: &str) -> Result<String> {
        Ok(self
            .cmd(reqwest::Method::GET, &format!("/element/{el}/text"), None)
            .await?
            .as_str()
            .unwrap_or_default()
            .to_owned())
    }

    /// Runs `body` (an async function body using `invoke`) in the page and returns its value.
    pub async fn invoke_script(&self, body: &str) -> Result<Value> {
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
    pub async fn screenshot(&self, dirs: &[PathBuf], name: &str) -> Result<()> {
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

/// Launches the app through a new WebDriver session.
pub async fn launch(http: &reqwest::Client, port: u16, app: &Path) -> Result<Session> {
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

/// Points `cmd` (the driver, and so the app it launches) at `display`, its own HOME and XDG
/// folders under `home` and its own `TANDEM_HOME`, with no LLM configured (the demo runs) and
/// nothing inherited of the caller's D-Bus session or Wayland.
pub fn app_env(cmd: &mut Command, display: u32, home: &Path, tandem_home: &Path) {
    for k in [
        "WAYLAND_DISPLAY",
        "LLM_MODEL",
        "LLM_BASE_URL",
        "LLM_API_KEY",
        "DBUS_SESSION_BUS_ADDRESS",
        "DBUS_STARTER_ADDRESS",
        "XDG_RUNTIME_DIR",
    ] {
        cmd.env_remove(k);
    }
    for d in [".config", ".local/share", ".cache"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    cmd.env("DISPLAY", format!(":{display}"))
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"))
        .env("XDG_CACHE_HOME", home.join(".cache"))
        .env("TANDEM_HOME", tandem_home)
        .env("WEBKIT_DISABLE_DMABUF_RENDERER", "1")
        // Without a GPU, WebKit's accelerated compositing leaves WebDriver screenshots hanging.
        .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
        .env("RUST_LOG", "warn,tandem_desktop=info");
}

/// Waits until tauri-driver and its WebKitWebDriver listen.
pub fn wait_for_driver(what: &str, port: u16, native: u16) {
    wait_for(what, Duration::from_secs(30), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            && std::net::TcpStream::connect(("127.0.0.1", native)).is_ok()
    });
}
