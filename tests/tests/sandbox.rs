//! The Docker sandbox through the `tandem` binary, on a real Docker daemon with the image
//! `tandem sandbox build` made (scripts/test.sh starts the daemon and builds the image first):
//! a run whose files land in the mounted workspace while everything else stays in the
//! container, a memory limit that kills a hog and not the conversation, the authenticated VNC
//! proxy, and clear errors for no daemon, a missing image and a taken port. No sandbox is left
//! behind.
//!
//! Without a daemon these tests say so and pass, unless TANDEM_REQUIRE_DOCKER=1 (set by
//! scripts/test.sh), where a missing daemon or image fails them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tandem_e2e::tandem_bin;
use tandem_testkit::{Script, ScriptedLlmServer, Step};
use tokio_tungstenite::tungstenite::Message as Ws;

use crate::tandem;

pub(crate) fn text(out: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}\n--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Whether a daemon and the sandbox image are there; fails instead when they must be.
pub(crate) fn docker_ready(home: &Path) -> bool {
    let ls = tandem(home, &["sandbox", "ls"]);
    // TANDEM_SANDBOX_IMAGE: the image the tandem binary starts instead of the default.
    let tag =
        std::env::var("TANDEM_SANDBOX_IMAGE").unwrap_or_else(|_| "tandem-sandbox:latest".into());
    let image = Command::new("docker")
        .args(["image", "inspect", &tag])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    let ready = ls.status.success() && image;
    if !ready {
        let why = format!(
            "no Docker daemon or no tandem-sandbox:latest image (run `bash scripts/docker.sh` and `tandem sandbox build`): {}",
            text(&ls)
        );
        if std::env::var("TANDEM_REQUIRE_DOCKER").as_deref() == Ok("1") {
            panic!("{why}");
        }
        eprintln!("skipped: {why}");
    }
    ready
}

/// The uid and gid owning a test's workspace.
pub(crate) const PERSON: u32 = 1000;

/// A test's folders: `home` (TANDEM_HOME) and `work` (the workspace, created, owned by
/// [`PERSON`]).
pub(crate) struct Place {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) home: PathBuf,
    pub(crate) work: PathBuf,
}

impl Place {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let (home, work) = (dir.path().join("home"), dir.path().join("work"));
        std::fs::create_dir_all(&work).unwrap();
        // A person's folder: the sandbox refuses a root-owned one (tests run as root).
        std::os::unix::fs::chown(&work, Some(PERSON), Some(PERSON)).unwrap();
        Self { dir, home, work }
    }

    /// A place for a test that needs Docker; None (after saying why) when it must skip.
    pub(crate) fn with_docker() -> Option<Self> {
        let p = Self::new();
        docker_ready(&p.home).then_some(p)
    }
}

/// A sandbox `tandem sandbox start` started, removed when the test ends, however it ends (a
/// failed assertion must not leave it running).
pub(crate) struct Detached {
    pub(crate) home: PathBuf,
    pub(crate) id: String,
}

impl Drop for Detached {
    fn drop(&mut self) {
        let _ = tandem(&self.home, &["sandbox", "stop", &self.id]);
    }
}

/// The sandboxes whose workspace is `dir`.
pub(crate) fn sandboxes_of(home: &Path, dir: &Path) -> Vec<Value> {
    let ls = tandem(home, &["sandbox", "ls"]);
    assert!(ls.status.success(), "{}", text(&ls));
    let dir = dir.canonicalize().unwrap();
    String::from_utf8_lossy(&ls.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|s| s["workspace"] == dir.to_string_lossy().as_ref())
        .collect()
}

fn run_in_sandbox(home: &Path, work: &Path, llm: &ScriptedLlmServer, extra: &[&str]) -> Output {
    let w = work.to_string_lossy().into_owned();
    let url = llm.base_url();
    let mut args = vec![
        "run",
        "do the task",
        "--sandbox",
        "docker",
        "--workspace",
        &w,
        "--model",
        "openai/fake",
        "--base-url",
        &url,
        "--api-key",
        "x",
    ];
    args.extend_from_slice(extra);
    tandem(home, &args)
}

/// The tool results the model was sent, in order.
pub(crate) fn tool_results(llm: &ScriptedLlmServer) -> Vec<String> {
    let last = llm.last_request().expect("the model was asked");
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].to_string())
        .collect()
}

#[test]
fn a_task_runs_in_the_sandbox_its_files_land_in_the_workspace_and_the_rest_stays_inside() {
    let Some(p) = Place::with_docker() else {
        return;
    };
    let (home, work) = (p.home.clone(), p.work.clone());
    let marker = format!("/tmp/tandem-outside-{}", std::process::id());
    let llm = ScriptedLlmServer::start(Script::new([
        Step::tool_call(
            "terminal",
            json!({"command": format!(
                "pwd > made.txt && hostname > host.txt && id -u > uid.txt && touch {marker} && ls {marker}"
            ), "security_risk": "LOW"}),
        ),
        Step::tool_call("finish", json!({"message": "done in the sandbox"})),
    ])
    .with_no_tools_text("Sandbox run"));
    let out = run_in_sandbox(&home, &work, &llm, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("done in the sandbox"), "{}", text(&out));

    let read = |name: &str| {
        std::fs::read_to_string(work.join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}\n{}\n{:?}", text(&out), tool_results(&llm)))
    };
    assert_eq!(read("made.txt").trim(), "/workspace");
    let host = String::from_utf8(Command::new("hostname").output().unwrap().stdout).unwrap();
    assert_ne!(
        read("host.txt").trim(),
        host.trim(),
        "the sandbox has its own hostname"
    );
    assert_ne!(
        read("uid.txt").trim(),
        "0",
        "the agent's commands do not run as root"
    );
    assert!(
        !Path::new(&marker).exists(),
        "a file written outside the workspace stays in the container"
    );
    assert!(
        tool_results(&llm)[0].contains(&marker),
        "{:?}",
        tool_results(&llm)
    );
    assert!(
        sandboxes_of(&home, &work).is_empty(),
        "the sandbox was removed"
    );
}

#[test]
fn a_memory_hog_is_killed_the_agent_is_told_and_the_conversation_goes_on() {
    let Some(p) = Place::with_docker() else {
        return;
    };
    let (home, work) = (p.home.clone(), p.work.clone());
    let llm = ScriptedLlmServer::start(Script::new([
        Step::tool_call(
            "terminal",
            json!({"command": "python3 -c \"x = b'a' * (700 << 20); print('survived')\"", "security_risk": "LOW"}),
        ),
        Step::tool_call(
            "terminal",
            json!({"command": "echo still-here", "security_risk": "LOW"}),
        ),
        Step::tool_call("finish", json!({"message": "the hog was stopped"})),
    ])
    .with_no_tools_text("Memory hog"));
    let out = run_in_sandbox(&home, &work, &llm, &["--memory", "256m", "--pids", "256"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let results = tool_results(&llm);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(
        !results[0].contains("survived")
            && (results[0].contains("137") || results[0].contains("Killed")),
        "the agent sees the hog killed: {}",
        results[0]
    );
    assert!(results[1].contains("still-here"), "{}", results[1]);
    assert!(sandboxes_of(&home, &work).is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_desktop_socket_greets_with_rfb_after_auth_and_refuses_a_wrong_key() {
    let Some(p) = Place::with_docker() else {
        return;
    };
    let (home, work) = (p.home.clone(), p.work.clone());
    let (h, w) = (home.clone(), work.to_string_lossy().into_owned());
    let out = tokio::task::spawn_blocking(move || {
        tandem(
            &h,
            &["sandbox", "start", "--workspace", &w, "--memory", "1g"],
        )
    })
    .await
    .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let sb: Value = serde_json::from_slice(&out.stdout).unwrap();
    let (url, key, id) = (
        sb["url"].as_str().unwrap().to_owned(),
        sb["session_key"].as_str().unwrap().to_owned(),
        sb["id"].as_str().unwrap().to_owned(),
    );
    let _removed = Detached {
        home: home.clone(),
        id: id.clone(),
    };
    assert_eq!(sb["workspace"], "/workspace");

    let http = reqwest::Client::new();
    let info: Value = http
        .get(format!("{url}/server_info"))
        .header("X-Session-API-Key", &key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(info["desktop"], true, "{info}");
    let unauthorised = http
        .get(format!("{url}/api/conversations/search"))
        .send()
        .await
        .unwrap();
    assert_eq!(unauthorised.status().as_u16(), 401);
    let conv: Value = http
        .post(format!("{url}/api/conversations"))
        .header("X-Session-API-Key", &key)
        .json(&json!({
            "agent": {"llm": {"model": "openai/fake", "base_url": "http://127.0.0.1:9", "api_key": "x"}, "tools": []},
            "workspace": {"working_dir": "/workspace"}
        }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let cid = conv["id"].as_str().unwrap_or_else(|| panic!("{conv}"));
    let ws_url = format!("{}/sockets/vnc/{cid}", url.replacen("http://", "ws://", 1));

    let (mut ws, _) = tokio_tungstenite::connect_async(&ws_url).await.unwrap();
    ws.send(Ws::text(
        json!({"type": "auth", "session_api_key": key}).to_string(),
    ))
    .await
    .unwrap();
    let greeting = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            match ws.next().await {
                Some(Ok(Ws::Binary(b))) => break b,
                Some(Ok(_)) => {}
                other => panic!("no RFB greeting: {other:?}"),
            }
        }
    })
    .await
    .expect("an RFB greeting");
    assert!(greeting.starts_with(b"RFB 003."), "{greeting:?}");
    ws.send(Ws::binary(greeting.to_vec())).await.unwrap();
    let security = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(Ok(Ws::Binary(b))) = ws.next().await {
                break b;
            }
        }
    })
    .await
    .expect("the security types");
    assert!(!security.is_empty() && security[0] > 0, "{security:?}");

    let (mut wrong, _) = tokio_tungstenite::connect_async(&ws_url).await.unwrap();
    wrong
        .send(Ws::text(
            json!({"type": "auth", "session_api_key": "wrong"}).to_string(),
        ))
        .await
        .unwrap();
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match wrong.next().await {
                Some(Ok(Ws::Close(Some(f)))) => break u16::from(f.code),
                Some(Ok(Ws::Binary(_))) => panic!("RFB bytes reached a client with a wrong key"),
                Some(Ok(_)) => {}
                other => panic!("not closed with a code: {other:?}"),
            }
        }
    })
    .await
    .expect("closed");
    assert_eq!(closed, 4001);

    let h = home.clone();
    let stopped = tokio::task::spawn_blocking(move || tandem(&h, &["sandbox", "stop", &id]))
        .await
        .unwrap();
    assert_eq!(stopped.status.code(), Some(0), "{}", text(&stopped));
    let (h, w) = (home.clone(), work.clone());
    let left = tokio::task::spawn_blocking(move || sandboxes_of(&h, &w))
        .await
        .unwrap();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn no_daemon_a_missing_image_and_a_taken_port_are_named_with_the_fix() {
    let Place { dir, home, work } = Place::new();
    let w = work.to_string_lossy().into_owned();

    // No socket at all, and a socket nobody listens on (a daemon that died).
    let dead = dir.path().join("dead.sock");
    drop(std::os::unix::net::UnixListener::bind(&dead).unwrap());
    for host in [
        format!("unix://{}/no-docker.sock", dir.path().display()),
        format!("unix://{}", dead.display()),
    ] {
        let started = Instant::now();
        let out = Command::new(tandem_bin().unwrap())
            .args(["sandbox", "start", "--workspace", &w])
            .env("TANDEM_HOME", &home)
            .env("DOCKER_HOST", &host)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no Docker daemon answers") && err.contains("DOCKER_HOST"),
            "{err}"
        );
        // It fails, not hangs: a generous bound for a loaded machine.
        assert!(started.elapsed() < Duration::from_secs(60));
    }

    if !docker_ready(&home) {
        return;
    }
    let out = tandem(
        &home,
        &[
            "sandbox",
            "start",
            "--workspace",
            &w,
            "--image",
            "tandem-sandbox:no-such-tag",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("tandem sandbox build"),
        "{}",
        text(&out)
    );

    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let out = tandem(
        &home,
        &["sandbox", "start", "--workspace", &w, "--port", &port],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("already in use"),
        "{}",
        text(&out)
    );
    let out = tandem(
        &home,
        &["sandbox", "start", "--workspace", &w, "--memory", "lots"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("invalid memory limit"),
        "{}",
        text(&out)
    );
    assert!(sandboxes_of(&home, &work).is_empty());
}

/// `tandem run --sandbox docker` running `sleep 60` in the sandbox, its output collected.
struct LongRun {
    child: std::process::Child,
    out: std::sync::Arc<std::sync::Mutex<String>>,
    _llm: ScriptedLlmServer,
}

impl LongRun {
    fn start(home: &Path, work: &Path) -> Self {
        use std::io::Read;
        let llm = ScriptedLlmServer::start(
            Script::new([
                Step::tool_call(
                    "terminal",
                    json!({"command": "sleep 60", "timeout": 120, "security_risk": "LOW"}),
                ),
                Step::tool_call("finish", json!({"message": "slept"})),
            ])
            .with_no_tools_text("Long run"),
        );
        let mut child = Command::new(tandem_bin().unwrap())
            .args([
                "run",
                "sleep",
                "--sandbox",
                "docker",
                "--workspace",
                &work.to_string_lossy(),
                "--model",
                "openai/fake",
                "--base-url",
                &llm.base_url(),
                "--api-key",
                "x",
            ])
            .env("TANDEM_HOME", home)
            .env_remove("LLM_MODEL")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        for mut pipe in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let out = out.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                while let Ok(n) = pipe.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    out.lock()
                        .unwrap()
                        .push_str(&String::from_utf8_lossy(&buf[..n]));
                }
            });
        }
        let run = Self {
            child,
            out,
            _llm: llm,
        };
        // Running once the agent's command is under way (the CLI then handles Ctrl-C).
        run.wait_for("▶ terminal: $ sleep 60");
        run
    }

    fn output(&self) -> String {
        self.out.lock().unwrap().clone()
    }

    fn wait_for(&self, text: &str) {
        let started = Instant::now();
        while !self.output().contains(text) {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "no {text:?} in:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn wait_exit(&mut self) -> Option<i32> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                // Let the reader threads take the last lines.
                std::thread::sleep(Duration::from_millis(100));
                return status.code();
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "still running:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn signal(&self, sig: nix::sys::signal::Signal) {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(i32::try_from(self.child.id()).unwrap()),
            sig,
        )
        .unwrap();
    }
}

impl Drop for LongRun {
    /// A run a failed assertion left going is interrupted, so it removes its sandbox.
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.signal(nix::sys::signal::Signal::SIGINT);
            let started = Instant::now();
            while matches!(self.child.try_wait(), Ok(None))
                && started.elapsed() < Duration::from_secs(30)
            {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }
}

#[test]
fn a_sandbox_dying_mid_run_ends_the_run_with_the_reason_and_leaves_nothing() {
    let Some(p) = Place::with_docker() else {
        return;
    };
    let (home, work) = (p.home.clone(), p.work.clone());
    let mut run = LongRun::start(&home, &work);
    let running = sandboxes_of(&home, &work);
    assert_eq!(running.len(), 1, "{running:?}");
    let killed = Command::new("docker")
        .args(["kill", running[0]["id"].as_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        killed.status.success(),
        "{}",
        String::from_utf8_lossy(&killed.stderr)
    );
    assert_eq!(run.wait_exit(), Some(1), "{}", run.output());
    assert!(
        run.output().contains("the sandbox stopped during the run"),
        "{}",
        run.output()
    );
    assert!(sandboxes_of(&home, &work).is_empty());
}

#[test]
fn ctrl_c_removes_the_sandbox_and_one_left_by_a_killed_run_goes_at_the_next_start() {
    let Some(p) = Place::with_docker() else {
        return;
    };
    let (dir, home, work) = (&p.dir, p.home.clone(), p.work.clone());

    let mut run = LongRun::start(&home, &work);
    run.signal(nix::sys::signal::Signal::SIGINT);
    let code = run.wait_exit();
    assert!(code.is_some(), "{}", run.output());
    assert!(run.output().contains("interrupting"), "{}", run.output());
    assert!(run.output().contains("sandbox removed"), "{}", run.output());
    assert!(sandboxes_of(&home, &work).is_empty(), "{}", run.output());

    // A run killed outright cannot clean up: its sandbox goes at the next start.
    let mut run = LongRun::start(&home, &work);
    run.signal(nix::sys::signal::Signal::SIGKILL);
    run.wait_exit();
    assert_eq!(sandboxes_of(&home, &work).len(), 1);
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::os::unix::fs::chown(&other, Some(PERSON), Some(PERSON)).unwrap();
    let out = tandem(
        &home,
        &["sandbox", "start", "--workspace", &other.to_string_lossy()],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let sb: Value = serde_json::from_slice(&out.stdout).unwrap();
    let _removed = Detached {
        home: home.clone(),
        id: sb["id"].as_str().unwrap().to_owned(),
    };
    assert!(
        sandboxes_of(&home, &work).is_empty(),
        "the leftover was removed"
    );
    let stopped = tandem(&home, &["sandbox", "stop", sb["id"].as_str().unwrap()]);
    assert_eq!(stopped.status.code(), Some(0), "{}", text(&stopped));
}

#[test]
fn the_agents_chromium_shows_on_the_sandboxs_desktop() {
    let Some(p) = Place::with_docker() else {
        return;
    };
    let (home, work) = (p.home.clone(), p.work.clone());
    // The test site runs on this runtime while the run below blocks the test's thread.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let site = rt.block_on(tandem_testkit::site::serve());
    let llm = ScriptedLlmServer::start(
        Script::new([
            Step::tool_call("browser_navigate", json!({"url": site.url("/")})),
            Step::tool_call(
                "terminal",
                json!({"command": "xwininfo -root -tree | grep -i chromium", "security_risk": "LOW"}),
            ),
            Step::tool_call("finish", json!({"message": "looked"})),
        ])
        .with_no_tools_text("Browser in the sandbox"),
    );
    let out = run_in_sandbox(&home, &work, &llm, &["--browser"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let results = tool_results(&llm);
    assert_eq!(results.len(), 2, "{results:?}");
    // A window of the agent's Chromium on the sandbox's X display, titled by the page.
    assert!(
        results[1].contains("Tandem Shop") && results[1].contains("Chromium"),
        "{}",
        results[1]
    );
}
