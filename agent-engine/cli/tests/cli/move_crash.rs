//! `kill -9` of either side of a `tandem move` at each of its steps, 50 times: afterwards
//! exactly one side runs the conversation, with every event it had, and the secret canary is
//! nowhere on the target.

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const KEY: &str = "move-crash-key";
const CANARY: &str = "canary-0b7e5d1f9a";
const PHASES: [&str; 4] = ["export", "import", "fence", "arrival"];
const RUNS: usize = 50;

/// A `tandem serve --llm demo` that can be killed and started again on the same port and home.
struct Server {
    home: PathBuf,
    child: Option<std::process::Child>,
    port: u16,
    disk: Option<String>,
}

impl Server {
    fn start(home: &Path) -> Self {
        Self::start_with(home, None)
    }

    /// Started with its home on a tmpfs of `disk` (e.g. "6m") of its own mount namespace,
    /// when given: a disk that fills up.
    fn start_with(home: &Path, disk: Option<&str>) -> Self {
        let mut s = Self {
            home: home.to_path_buf(),
            child: None,
            port: 0,
            disk: disk.map(str::to_owned),
        };
        s.restart();
        s
    }

    fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Starts it (on the port it had, once it had one) and waits for its address line.
    fn restart(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.home.join("server.log"))
            .unwrap();
        let port = self.port.to_string();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let mut command = match &self.disk {
                None => Command::new(env!("CARGO_BIN_EXE_tandem")),
                Some(size) => {
                    let mut c = Command::new("unshare");
                    c.args(["--mount", "--propagation", "private", "sh", "-c"])
                        .arg(r#"mount -t tmpfs -o size="$1" tmpfs "$2" && shift 2 && exec "$@""#)
                        .arg("sh")
                        .arg(size)
                        .arg(&self.home)
                        .arg(env!("CARGO_BIN_EXE_tandem"));
                    c
                }
            };
            let log_file = if self.disk.is_some() {
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(self.home.with_extension("log"))
                    .unwrap()
            } else {
                log.try_clone().unwrap()
            };
            let mut child = command
                .args(["serve", "--host", "127.0.0.1", "--port", &port])
                .args(["--session-key", KEY, "--llm", "demo"])
                .env("TANDEM_HOME", &self.home)
                .env("TANDEM_UI_DIR", self.home.join("no-ui"))
                .env("RUST_LOG", "info")
                .env_remove("LLM_MODEL")
                .env_remove("LLM_BASE_URL")
                .env_remove("LLM_API_KEY")
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(log_file)
                .spawn()
                .unwrap();
            let (tx, rx) = std::sync::mpsc::channel();
            let stdout = child.stdout.take().unwrap();
            std::thread::spawn(move || {
                for line in std::io::BufReader::new(stdout)
                    .lines()
                    .map_while(Result::ok)
                {
                    if let Some(rest) = line.strip_prefix("Tandem agent server on ") {
                        let _ = tx.send(rest.trim().to_owned());
                    }
                }
            });
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(base) => {
                    self.port = base.rsplit(':').next().unwrap().parse().unwrap();
                    self.child = Some(child);
                    return;
                }
                // The port may still be held a moment after a kill: try again.
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    assert!(
                        Instant::now() < deadline,
                        "tandem serve did not start again on port {port}"
                    );
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }

    fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

async fn call(
    http: &reqwest::Client,
    method: reqwest::Method,
    url: String,
    body: Option<Value>,
) -> (u16, Value) {
    let mut r = http.request(method, url).header("X-Session-API-Key", KEY);
    if let Some(b) = body {
        r = r.json(&b);
    }
    let resp = r.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// The model of `server`'s demo LLM.
async fn demo_model(http: &reqwest::Client, server: &Server) -> String {
    let (_, info) = call(
        http,
        reqwest::Method::GET,
        format!("{}/server_info", server.base()),
        None,
    )
    .await;
    info["llm_model"].as_str().unwrap().to_owned()
}

async fn event_ids(http: &reqwest::Client, base: &str, id: &str) -> Vec<String> {
    let (status, page) = call(
        http,
        reqwest::Method::GET,
        format!("{base}/api/conversations/{id}/events/search?limit=100"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{page}");
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap().to_owned())
        .collect()
}

/// Whether `base` runs conversation `id`: a message is taken (not 409 moved or arriving, not
/// 404).
async fn owns(http: &reqwest::Client, base: &str, id: &str) -> (bool, Value) {
    let (status, body) = call(
        http,
        reqwest::Method::POST,
        format!("{base}/api/conversations/{id}/events"),
        Some(json!({"role": "user", "content": [{"type": "text", "text": "who owns this?"}], "run": false})),
    )
    .await;
    assert!(matches!(status, 200 | 404 | 409), "{base}: {status} {body}");
    (status == 200, body)
}

fn files_containing(root: &Path, needle: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && std::fs::read(&path)
                    .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                found.push(path);
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_move_killed_at_any_step_leaves_exactly_one_owner_and_every_event() {
    let (home_a, home_b, cli_home) = (
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
        tempfile::tempdir().unwrap(),
    );
    let mut a = Server::start(home_a.path());
    let mut b = Server::start(home_b.path());
    let http = reqwest::Client::new();
    let model = demo_model(&http, &a).await;
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();

    for run in 0..RUNS {
        let phase = PHASES[run % PHASES.len()];
        let kill_source = (run / PHASES.len()).is_multiple_of(2);
        let delay = Duration::from_millis(((run * 7) % 40) as u64);

        // A conversation on A with a few events, a secret, and an untracked file.
        let ws = home_a.path().join(format!("ws-{run}"));
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::write(ws.join("notes.txt"), format!("run {run}")).unwrap();
        let body = json!({
            "agent": {
                "kind": "Agent",
                "llm": {"model": model, "usage_id": "agent"},
                "tools": [{"name": "terminal", "params": {}}],
            },
            "workspace": {"kind": "LocalWorkspace", "working_dir": ws.to_str().unwrap()},
            "secrets": {"MOVE_CANARY": CANARY},
            "initial_message": {"role": "user", "content": [{"type": "text", "text": format!("run {run}")}], "run": false},
        });
        let (status, created) = call(
            &http,
            reqwest::Method::POST,
            format!("{}/api/conversations", a.base()),
            Some(body),
        )
        .await;
        assert!(status < 300, "{created}");
        let id = created["id"].as_str().unwrap().to_owned();
        let before = event_ids(&http, &a.base(), &id).await;
        assert!(!before.is_empty());

        // The move, killed at `phase`.
        let mut mover = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["move", &id, "--server", &a.base(), "--session-key", KEY])
            .args(["--to", &b.base(), "--to-key", KEY])
            .env("TANDEM_HOME", cli_home.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let stderr = mover.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut all = String::new();
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                let _ = tx.send(line.clone());
                all.push_str(&line);
                all.push('\n');
            }
            all
        });
        let wanted = format!("· phase {phase}");
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut seen = Vec::new();
        loop {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(line) if line.starts_with(&wanted) => break,
                Ok(line) => seen.push(line),
                Err(_) => panic!("run {run}: the move never reached {phase}: {seen:#?}"),
            }
        }
        tokio::time::sleep(delay).await;
        let side = if kill_source { &mut a } else { &mut b };
        side.kill9();
        side.restart();
        let deadline = Instant::now() + Duration::from_secs(180);
        let status = loop {
            if let Some(s) = mover.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "run {run}: the move did not end");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let said = reader.join().unwrap();

        // Exactly one owner, with every event; the move's exit says which.
        let (on_a, why_a) = owns(&http, &a.base(), &id).await;
        let (on_b, why_b) = owns(&http, &b.base(), &id).await;
        let context = format!(
            "run {run} (kill -9 of the {} during {phase}, exit {status}):\n{said}\nA: {why_a}\nB: {why_b}",
            if kill_source { "source" } else { "target" }
        );
        assert!(on_a ^ on_b, "exactly one owner: {context}");
        assert_eq!(
            status.success(),
            on_b,
            "the move's exit names the owner: {context}"
        );
        let owner = if on_a { a.base() } else { b.base() };
        let after = event_ids(&http, &owner, &id).await;
        assert_eq!(
            &after[..before.len()],
            &before[..],
            "0 events lost: {context}"
        );
        let unique: std::collections::HashSet<&String> = after.iter().collect();
        assert_eq!(unique.len(), after.len(), "0 duplicated: {context}");
        if on_b {
            let (_, conv) = call(
                &http,
                reqwest::Method::GET,
                format!("{}/api/conversations/{id}", b.base()),
                None,
            )
            .await;
            let moved_ws = PathBuf::from(conv["workspace"]["working_dir"].as_str().unwrap());
            assert_eq!(
                std::fs::read_to_string(moved_ws.join("notes.txt")).unwrap(),
                format!("run {run}"),
                "{context}"
            );
        }
        *outcomes
            .entry(format!(
                "{} killed in {phase}: owner {}",
                if kill_source { "source" } else { "target" },
                if on_a { "source" } else { "target" }
            ))
            .or_default() += 1;
    }
    eprintln!("outcomes: {outcomes:#?}");
    a.kill9();
    b.kill9();
    let leaked = files_containing(home_b.path(), CANARY);
    assert!(
        leaked.is_empty(),
        "the secret canary is on the target: {leaked:?}"
    );
}

/// A target whose disk is full refuses the conversation with that cause; the source keeps it
/// and runs it, and the target keeps nothing of it (a smaller one moves there afterwards).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_with_a_full_disk_refuses_and_the_source_keeps_the_conversation() {
    let (home_a, cli_home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let cramped = tempfile::tempdir().unwrap();
    let home_b = cramped.path().join("home");
    std::fs::create_dir_all(&home_b).unwrap();
    let a = Server::start(home_a.path());
    let b = Server::start_with(&home_b, Some("6m"));
    let http = reqwest::Client::new();
    let model = demo_model(&http, &a).await;
    let create = async |name: &str, bytes: usize| -> String {
        let ws = home_a.path().join(name);
        std::fs::create_dir_all(&ws).unwrap();
        // Incompressible: random bytes.
        let mut data = vec![0u8; bytes];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for b in &mut data {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        std::fs::write(ws.join("data.bin"), data).unwrap();
        let body = json!({
            "agent": {"kind": "Agent", "llm": {"model": model, "usage_id": "agent"}, "tools": [{"name": "terminal", "params": {}}]},
            "workspace": {"kind": "LocalWorkspace", "working_dir": ws.to_str().unwrap()},
            "initial_message": {"role": "user", "content": [{"type": "text", "text": name}], "run": false},
        });
        let (status, created) = call(
            &http,
            reqwest::Method::POST,
            format!("{}/api/conversations", a.base()),
            Some(body),
        )
        .await;
        assert!(status < 300, "{created}");
        created["id"].as_str().unwrap().to_owned()
    };
    let mover = |id: &str| {
        Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["move", id, "--server", &a.base(), "--session-key", KEY])
            .args(["--to", &b.base(), "--to-key", KEY])
            .env("TANDEM_HOME", cli_home.path())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };

    let big = create("big", 12 << 20).await;
    let before = event_ids(&http, &a.base(), &big).await;
    let out = mover(&big);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("disk is full"),
        "the cause is named: {stderr}"
    );
    assert!(
        owns(&http, &a.base(), &big).await.0,
        "the source still runs it: {stderr}"
    );
    assert_eq!(
        &event_ids(&http, &a.base(), &big).await[..before.len()],
        &before[..]
    );
    let (status, _) = call(
        &http,
        reqwest::Method::GET,
        format!("{}/api/conversations/{big}", b.base()),
        None,
    )
    .await;
    assert_eq!(status, 404, "nothing of it on the target");

    // The target kept nothing of it: a small conversation fits.
    let small = create("small", 64 << 10).await;
    let out = mover(&small);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(owns(&http, &b.base(), &small).await.0);
}
