//! `tandem-e2e`: black-box tests that spawn the built `tandem` binary and real peers — the
//! official OpenHands Python client, the upstream `openhands-agent-server`, the `openai` Python
//! client — on loopback, plus the server benchmarks (`cargo bench -p tandem-e2e`).
//!
//! Helpers here: [`tandem_bin`] builds and finds the binary, [`oh_venv`] finds the Python 3.12
//! venv `scripts/setup.sh` prepares (and fails loudly without it), [`Child`] kills its process
//! group on drop, [`TandemServer`] / [`UpstreamServer`] start the two agent servers on free
//! ports and wait until they are healthy.

pub mod chaos;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

/// The session key the test servers accept.
pub const KEY: &str = "e2e-key";

/// `METHOD url` with the session key `key` (and a JSON body): the status and the JSON answer
/// (its text as a string when it is not JSON); status 0 with the error when the request could
/// not be sent (a server killed on purpose).
pub async fn api(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: &str,
    key: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let mut r = http.request(method, url).header("X-Session-API-Key", key);
    if let Some(b) = body {
        r = r.json(&b);
    }
    match r.send().await {
        Ok(resp) => {
            let status = resp.status().as_u16();
            let text = resp.text().await.unwrap_or_default();
            (
                status,
                serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)),
            )
        }
        Err(e) => (0, serde_json::Value::String(e.to_string())),
    }
}

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(".."))
}

/// The `tandem` binary of the profile this test or bench was built with: `TANDEM_BIN` if set,
/// else built once with `cargo build -p tandem-cli` into this target directory.
pub fn tandem_bin() -> Result<PathBuf> {
    static BIN: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();
    BIN.get_or_init(|| build_tandem().map_err(|e| format!("{e:#}")))
        .clone()
        .map_err(anyhow::Error::msg)
}

fn build_tandem() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("TANDEM_BIN") {
        let p = PathBuf::from(p);
        if !p.is_file() {
            bail!("TANDEM_BIN points at {}, which is not a file", p.display());
        }
        return Ok(p);
    }
    // <target>/<profile>/deps/<this exe>
    let exe = std::env::current_exe().context("current exe")?;
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .context("exe has no profile dir")?;
    let target_dir = profile_dir.parent().context("exe has no target dir")?;
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.args([
        "build",
        "-q",
        "-p",
        "tandem-cli",
        "--bin",
        "tandem",
        "--target-dir",
    ])
    .arg(target_dir)
    .current_dir(repo_root());
    if release {
        cmd.arg("--release");
    }
    let status = cmd.status().context("running cargo build for tandem")?;
    if !status.success() {
        bail!("cargo build -p tandem-cli failed");
    }
    let bin = profile_dir.join("tandem");
    if !bin.exists() {
        bail!("built tandem but {} is missing", bin.display());
    }
    Ok(bin)
}

/// The Python 3.12 venv with openhands-sdk / openhands-agent-server 1.58.2 and openai:
/// `TANDEM_OH_VENV`, else `$HOME/.cache/tandem/oh-venv`. Fails with what to run when missing.
pub fn oh_venv() -> Result<PathBuf> {
    let venv = match std::env::var_os("TANDEM_OH_VENV") {
        Some(v) => PathBuf::from(v),
        None => dirs_home().join(".cache/tandem/oh-venv"),
    };
    let python = venv.join("bin/python");
    if !python.exists() {
        bail!(
            "the OpenHands compatibility venv is missing at {} (no python there).\n\
             Create it with `scripts/setup.sh` (it installs openhands-sdk/agent-server 1.58.2 and openai \
             into a Python 3.12 venv), or point TANDEM_OH_VENV at one.",
            venv.display()
        );
    }
    Ok(venv)
}

fn dirs_home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/root"))
}

/// A free loopback port (bound, then released).
pub fn free_port() -> Result<u16> {
    let l = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(l.local_addr()?.port())
}

/// A child process in its own process group, killed (group and all) on drop.
#[derive(Debug)]
pub struct Child {
    child: std::process::Child,
    name: String,
}

impl Child {
    /// Spawns `cmd` in a new process group.
    pub fn spawn(name: &str, mut cmd: Command) -> Result<Self> {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        let child = cmd.spawn().with_context(|| format!("spawning {name}"))?;
        Ok(Self {
            child,
            name: name.to_owned(),
        })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Kills the whole group with SIGKILL and reaps the child.
    pub fn kill9(&mut self) {
        // The group we created at spawn: the child and everything it started.
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Whether it exited, and how.
    pub fn try_wait(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// User + system CPU seconds it has used so far (from /proc).
    pub fn cpu_seconds(&self) -> f64 {
        cpu_seconds(self.pid())
    }

    /// Resident memory in MB (VmRSS).
    pub fn rss_mb(&self) -> f64 {
        rss_mb(self.pid())
    }

    /// The name given at spawn.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// CPU seconds of `pid` from `/proc/<pid>/stat` (utime + stime).
pub fn cpu_seconds(pid: u32) -> f64 {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return 0.0;
    };
    let Some(after) = stat.rfind(')').map(|i| &stat[i + 2..]) else {
        return 0.0;
    };
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // Fields after the name start at state (3rd field overall): utime is 14th → index 11.
    // USER_HZ is 100 on every Linux this runs on.
    (ticks(11) + ticks(12)) / 100.0
}

/// VmRSS of `pid` in MB.
pub fn rss_mb(pid: u32) -> f64 {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return 0.0;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Polls `url` until it answers 200, up to `limit`. Returns the time it took.
pub fn wait_healthy(
    url: &str,
    limit: Duration,
    child: &mut Child,
    every: Duration,
) -> Result<Duration> {
    let start = Instant::now();
    let client = probe::blocking_client();
    loop {
        if let Ok(r) = client.get(url).send()
            && r.status().is_success()
        {
            return Ok(start.elapsed());
        }
        if let Some(status) = child.try_wait() {
            bail!("{} exited ({status}) before {url} answered", child.name());
        }
        if start.elapsed() > limit {
            bail!("{} did not answer {url} within {limit:?}", child.name());
        }
        std::thread::sleep(every);
    }
}

mod probe {
    //! A tiny blocking HTTP/1.1 GET for health polls (no async runtime needed at spawn time).
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    pub struct Client;
    pub struct Req(String);
    pub struct Resp(u16);

    pub fn blocking_client() -> Client {
        Client
    }

    impl Client {
        pub fn get(&self, url: &str) -> Req {
            Req(url.to_owned())
        }
    }

    impl Req {
        pub fn send(&self) -> std::io::Result<Resp> {
            let rest = self.0.strip_prefix("http://").unwrap_or(&self.0);
            let (host, path) = rest
                .split_once('/')
                .map_or((rest, "/".to_owned()), |(h, p)| (h, format!("/{p}")));
            let mut s = TcpStream::connect(host)?;
            s.set_read_timeout(Some(Duration::from_secs(5)))?;
            write!(
                s,
                "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
            )?;
            let mut buf = [0u8; 64];
            let n = s.read(&mut buf)?;
            let head = String::from_utf8_lossy(&buf[..n]);
            let code = head
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            Ok(Resp(code))
        }
    }

    impl Resp {
        pub fn status(&self) -> Status {
            Status(self.0)
        }
    }

    pub struct Status(u16);
    impl Status {
        pub fn is_success(&self) -> bool {
            (200..300).contains(&self.0)
        }
    }
}

/// `tandem serve` on a free loopback port with its own `TANDEM_HOME`, killed on drop.
#[derive(Debug)]
pub struct TandemServer {
    /// The process.
    pub child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// Its `TANDEM_HOME`.
    pub home: PathBuf,
    /// How long it took to answer `/health` (and the poll interval's granularity).
    pub startup: Duration,
}

impl TandemServer {
    /// Starts `tandem serve` with session key [`KEY`] in `home`; `env` adds variables (e.g. the
    /// gateway's `LLM_MODEL` / `LLM_BASE_URL`). Waits up to 30 s for `/health`.
    pub fn start(home: &Path, env: &[(&str, String)]) -> Result<Self> {
        Self::start_on(home, env, free_port()?, Duration::from_millis(2))
    }

    /// The same on a given port, polling `/health` every `every`.
    pub fn start_on(
        home: &Path,
        env: &[(&str, String)],
        port: u16,
        every: Duration,
    ) -> Result<Self> {
        let bin = tandem_bin()?;
        std::fs::create_dir_all(home)?;
        let mut cmd = Command::new(bin);
        cmd.args(["serve", "--host", "127.0.0.1", "--port", &port.to_string()])
            .env("TANDEM_HOME", home)
            .env("TANDEM_SESSION_KEYS", KEY)
            .env_remove("LLM_MODEL")
            .env_remove("LLM_BASE_URL")
            .env_remove("LLM_API_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = Child::spawn("tandem serve", cmd)?;
        let url = format!("http://127.0.0.1:{port}");
        let startup = wait_healthy(
            &format!("{url}/health"),
            Duration::from_secs(30),
            &mut child,
            every,
        )?;
        Ok(Self {
            child,
            url,
            home: home.to_owned(),
            startup,
        })
    }
}

/// The upstream `openhands-agent-server` 1.58.2 from the venv, started as in
/// `anchor-numbers.md`, killed (with its tmux) on drop.
#[derive(Debug)]
pub struct UpstreamServer {
    /// The process.
    pub child: Child,
    /// `http://127.0.0.1:<port>`.
    pub url: String,
    /// The run directory (conversations, project, bash_events, tmux).
    pub run_dir: PathBuf,
}

impl UpstreamServer {
    /// Starts it in `run_dir` with session key [`KEY`]; waits up to 180 s (its imports alone
    /// take 15–50 s on this machine kind).
    pub fn start(run_dir: &Path) -> Result<Self> {
        let venv = oh_venv()?;
        let port = free_port()?;
        for d in ["conversations", "project", "bash_events", "tmux"] {
            std::fs::create_dir_all(run_dir.join(d))?;
        }
        let mut cmd = Command::new(venv.join("bin/python"));
        cmd.args([
            "-m",
            "openhands.agent_server",
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .current_dir(run_dir)
        .env("OH_CONVERSATIONS_PATH", run_dir.join("conversations"))
        .env("OH_WORKSPACE_PATH", run_dir.join("project"))
        .env("OH_BASH_EVENTS_DIR", run_dir.join("bash_events"))
        .env("OH_ENABLE_VSCODE", "false")
        .env("OH_ENABLE_BROWSER", "false")
        .env("OH_SESSION_API_KEYS_0", KEY)
        .env("OH_SECRET_KEY", "e2e-secret")
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .env("OPENHANDS_SUPPRESS_BANNER", "1")
        .env("TMUX_TMPDIR", run_dir.join("tmux"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(std::fs::File::create(
            run_dir.join("server.log"),
        )?));
        let mut child = Child::spawn("openhands-agent-server", cmd)?;
        let url = format!("http://127.0.0.1:{port}");
        if let Err(e) = wait_healthy(
            &format!("{url}/health"),
            Duration::from_secs(180),
            &mut child,
            Duration::from_millis(100),
        ) {
            let log = std::fs::read_to_string(run_dir.join("server.log")).unwrap_or_default();
            let tail: String = log
                .lines()
                .rev()
                .take(30)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect::<Vec<_>>()
                .join("\n");
            bail!("{e:#}\n--- server.log (tail) ---\n{tail}");
        }
        Ok(Self {
            child,
            url,
            run_dir: run_dir.to_owned(),
        })
    }
}

impl Drop for UpstreamServer {
    fn drop(&mut self) {
        self.child.kill9();
        // Its terminals are tmux servers on named sockets under the TMUX_TMPDIR we gave it
        // (tmux-<uid>/openhands-<id>): tell each one to exit.
        let sockets = std::fs::read_dir(self.run_dir.join("tmux"))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|d| std::fs::read_dir(d.path()).ok())
            .flatten()
            .flatten();
        for socket in sockets {
            let _ = Command::new("tmux")
                .arg("-S")
                .arg(socket.path())
                .arg("kill-server")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// Runs a Python script from `tests/compat/` in the venv with `args` and `env`; fails with its
/// whole output when it exits non-zero.
pub fn run_python(
    script: &str,
    args: &[&str],
    env: &[(&str, String)],
    timeout: Duration,
) -> Result<String> {
    let venv = oh_venv()?;
    let path = repo_root().join("tests/compat").join(script);
    let mut cmd = Command::new(venv.join("bin/python"));
    cmd.arg(&path)
        .args(args)
        .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        .env("OPENHANDS_SUPPRESS_BANNER", "1")
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out_path = tempfile::NamedTempFile::new()?;
    let err_path = tempfile::NamedTempFile::new()?;
    cmd.stdout(Stdio::from(out_path.reopen()?))
        .stderr(Stdio::from(err_path.reopen()?));
    let mut child = Child::spawn(script, cmd)?;
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait() {
            break Some(s);
        }
        if start.elapsed() > timeout {
            child.kill9();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let stdout = std::fs::read_to_string(out_path.path()).unwrap_or_default();
    let stderr = std::fs::read_to_string(err_path.path()).unwrap_or_default();
    match status {
        Some(s) if s.success() => Ok(stdout),
        Some(s) => {
            bail!("{script} failed ({s})\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}")
        }
        None => bail!(
            "{script} timed out after {timeout:?}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}"
        ),
    }
}
