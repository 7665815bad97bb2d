//! Black-box tests of the `tandem` binary: real bash on a PTY, the scripted LLM server on
//! loopback, conversations persisted under a temporary `TANDEM_HOME`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_testkit::{Script, ScriptedLlmServer, Step, ToolCallSpec, run_on_terminal};

/// A scripted server whose title requests (no tools) get a canned title.
fn scripted(steps: Vec<Step>) -> ScriptedLlmServer {
    ScriptedLlmServer::start(Script::new(steps).with_no_tools_text("Scripted title"))
}

struct Env {
    home: tempfile::TempDir,
    workspace: tempfile::TempDir,
}

impl Env {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            workspace: tempfile::tempdir().unwrap(),
        }
    }

    fn cmd(&self, server: Option<&ScriptedLlmServer>) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tandem"));
        c.env("TANDEM_HOME", self.home.path())
            .env_remove("LLM_MODEL")
            .env_remove("LLM_BASE_URL")
            .env_remove("LLM_API_KEY")
            .env("LLM_NUM_RETRIES", "0")
            .stdin(Stdio::null());
        if let Some(s) = server {
            c.env("LLM_MODEL", "openai/scripted")
                .env("LLM_BASE_URL", s.base_url())
                .env("LLM_API_KEY", "sk-test");
        }
        c
    }

    fn run(&self, server: Option<&ScriptedLlmServer>, args: &[&str]) -> Output {
        let ws = self.workspace.path().to_str().unwrap().to_owned();
        let mut c = self.cmd(server);
        c.arg("run").args(args).args(["--workspace", &ws]);
        c.output().unwrap()
    }

    fn conversation_dirs(&self) -> Vec<PathBuf> {
        let root = self.home.path().join("conversations");
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
            .map(|r| r.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        dirs.sort();
        dirs
    }

    /// The one conversation that is not a sub-agent's (the demo's tour hands a task to one).
    fn top_conversation_dir(&self) -> PathBuf {
        let mut top: Vec<PathBuf> = self
            .conversation_dirs()
            .into_iter()
            .filter(|d| {
                let meta: Value = std::fs::read(d.join("meta.json"))
                    .ok()
                    .and_then(|b| serde_json::from_slice(&b).ok())
                    .unwrap_or_default();
                meta.get("parent_conversation_id")
                    .is_none_or(Value::is_null)
            })
            .collect();
        assert_eq!(top.len(), 1, "{top:?}");
        top.remove(0)
    }

    fn events(&self, dir: &Path) -> Vec<Value> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("events"))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with("event-")
            })
            .collect();
        files.sort();
        files
            .iter()
            .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
            .collect()
    }
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn run_prints_a_line_per_event_and_persists_the_conversation() {
    let server = scripted(vec![
        Step::tool_call(
            "terminal",
            json!({"command": "echo hello-from-bash && pwd"}),
        ),
        Step::tool_call("finish", json!({"message": "Said hello."})),
    ]);
    let env = Env::new();
    let out = env.run(Some(&server), &["say hello"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("warning: local mode"), "{stderr}");
    assert!(stdout.contains("» user: say hello"), "{stdout}");
    assert!(
        stdout.contains("▶ terminal: $ echo hello-from-bash && pwd"),
        "{stdout}"
    );
    assert!(stdout.contains("↳ exit 0: hello-from-bash"), "{stdout}");
    assert!(stdout.contains("· status: finished"), "{stdout}");

    let dirs = env.conversation_dirs();
    assert_eq!(dirs.len(), 1);
    let events = env.events(&dirs[0]);
    let obs = events
        .iter()
        .find(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "terminal")
        .unwrap();
    let out_text = obs["observation"]["content"][0]["text"].as_str().unwrap();
    let ws = env.workspace.path().canonicalize().unwrap();
    assert!(
        out_text.contains(&format!("hello-from-bash\n{}", ws.display())),
        "{out_text}"
    );
    assert!(dirs[0].join("base_state.json").exists() && dirs[0].join("meta.json").exists());
    // The API key is never written.
    let state = std::fs::read_to_string(dirs[0].join("base_state.json")).unwrap();
    assert!(!state.contains("sk-test"));

    let list = env.cmd(None).arg("conversations").output().unwrap();
    let (listing, _) = text(&list);
    assert!(
        // The LLM's title when it came back before the run ended, else the message cut short.
        listing.contains("finished")
            && (listing.contains("Scripted title") || listing.contains("say hello")),
        "{listing}"
    );
}

#[test]
fn without_a_terminal_confirmation_never_blocks_and_nothing_runs() {
    let server = scripted(vec![
        Step::tool_call("terminal", json!({"command": "touch approved-marker"})),
        Step::tool_call("finish", json!({"message": "ok"})),
    ]);
    let env = Env::new();
    let started = Instant::now();
    let out = env.run(Some(&server), &["make a file", "--confirm", "always"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{stdout}\n{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(stderr.contains("waiting for approval"), "{stderr}");
    assert!(
        !env.workspace.path().join("approved-marker").exists(),
        "the command ran before approval"
    );

    // `resume` is the approval: the action runs, then the agent finishes.
    let out = env
        .cmd(Some(&server))
        .args(["resume", "--last"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(env.workspace.path().join("approved-marker").exists());
}

#[test]
fn on_a_terminal_an_edited_command_runs_instead_of_the_agent_s() {
    let server = scripted(vec![
        Step::tool_call("terminal", json!({"command": "touch original-marker"})),
        Step::tool_call("finish", json!({"message": "ok"})),
    ]);
    let env = Env::new();
    let ws = env.workspace.path().to_str().unwrap().to_owned();
    let tandem = env!("CARGO_BIN_EXE_tandem");
    // On a real terminal the answers wait until asked: "e" (edit), then the command instead.
    let out = run_on_terminal(
        &env.cmd(Some(&server)),
        &format!("'{tandem}' run 'make a file' --confirm always --workspace '{ws}'"),
        b"e\ntouch edited-marker && echo edited-$((2+3))\n",
        Duration::from_secs(60),
    );
    let (stdout, stderr) = text(&out);
    assert!(stdout.contains("[e]dit"), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("· running your edited action (medium risk)")
            && stdout.contains("(edited): edited-5"),
        "{stdout}\n{stderr}"
    );
    assert!(env.workspace.path().join("edited-marker").exists());
    assert!(
        !env.workspace.path().join("original-marker").exists(),
        "the agent's command ran"
    );
    // The model's next request answers its own call with what actually ran.
    let requests = server.requests();
    let last = serde_json::to_string(requests.last().unwrap()).unwrap();
    assert!(
        last.contains("The person edited this action before it ran") && last.contains("edited-5"),
        "{last}"
    );
}

#[test]
fn bad_flags_and_settings_get_one_clear_line_and_exit_2() {
    let env = Env::new();
    let out = env.run(None, &["task", "--confirm", "sometimes"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("invalid confirmation policy `sometimes`"),
        "{stderr}"
    );

    let out = env.run(None, &["task"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("no LLM configured") && stderr.contains("--llm demo"),
        "{stderr}"
    );

    std::fs::write(
        env.home.path().join("settings.json"),
        "{\"llm\": {\"modle\": \"x\"}}",
    )
    .unwrap();
    let out = env.run(None, &["task"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains("settings.json") && stderr.contains("modle"),
        "{stderr}"
    );

    let out = env.cmd(None).args(["run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn an_auth_failure_is_one_clear_line_and_a_nonzero_exit() {
    let server = scripted(vec![Step::error(401, "Incorrect API key provided")]);
    let env = Env::new();
    let out = env.run(Some(&server), &["hi"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.contains("LLMAuthenticationError"))
        .expect("an auth error line");
    assert!(line.contains("Incorrect API key provided"), "{line}");
    // Nothing lost: the user message is on disk.
    let events = env.events(&env.conversation_dirs()[0]);
    assert!(events.iter().any(|e| e["kind"] == "MessageEvent"));
}

#[test]
fn malformed_tool_calls_are_errors_the_model_sees_and_the_run_goes_on() {
    let server = scripted(vec![
        Step::tool_calls(vec![ToolCallSpec::new(
            "terminal",
            json!("{\"command\": \"ls"),
        )]),
        Step::tool_call("terminal", json!({"command": "echo recovered"})),
        Step::tool_call("finish", json!({"message": "ok"})),
    ]);
    let env = Env::new();
    let out = env.run(Some(&server), &["go"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("unparseable JSON"), "{stdout}");
    assert!(stdout.contains("exit 0: recovered"), "{stdout}");
}

/// The demo's events carry no error: no AgentErrorEvent or ConversationErrorEvent, no failed
/// observation, nothing "outside the workspace" (beyond the tools' descriptions in the system
/// prompt); its file edits name paths inside `workspace`,
/// and the notes file is there.
fn assert_clean_demo(events: &[Value], workspace: &Path) {
    let all = serde_json::to_string(events).unwrap();
    for e in events.iter().filter(|e| e["kind"] != "SystemPromptEvent") {
        // The file editor's refusal ("The path is outside the workspace …").
        let text = e.to_string();
        assert!(!text.contains("outside the workspace"), "{text}");
    }
    for e in events {
        let kind = e["kind"].as_str().unwrap_or_default();
        assert!(
            !matches!(kind, "AgentErrorEvent" | "ConversationErrorEvent"),
            "{e}"
        );
        assert_ne!(e["observation"]["is_error"], json!(true), "{e}");
    }
    let edits: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "ActionEvent" && e["tool_name"] == "file_editor")
        .collect();
    assert_eq!(edits.len(), 2, "{all}");
    let notes = workspace.join("tandem-demo-notes.md");
    for e in edits {
        assert_eq!(e["action"]["path"], json!(notes.to_str().unwrap()), "{e}");
    }
    let text = std::fs::read_to_string(&notes).unwrap();
    assert!(text.starts_with("# Tandem demo"), "{text}");
}

#[test]
fn the_demo_runs_without_any_provider() {
    let env = Env::new();
    let out = env.run(None, &["show me around", "--llm", "demo"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stderr.contains("demo mode"), "{stderr}");
    assert!(stdout.contains("▶ terminal:"), "{stdout}");
    assert!(stdout.contains("▶ finish:"), "{stdout}");
    // Headless, the tour browses the demo's own page and hands a task to a sub-agent, but asks
    // no one to take over the browser.
    assert!(stdout.contains("▶ browser_navigate:"), "{stdout}");
    assert!(stdout.contains("▶ task:"), "{stdout}");
    assert!(!stdout.contains("browser_request_handoff"), "{stdout}");
    let dirs = env.conversation_dirs();
    assert_eq!(dirs.len(), 2, "the conversation and its sub-agent's");
    let top = env.top_conversation_dir();
    let events = env.events(&top);
    assert_clean_demo(&events, env.workspace.path());
    let page = events
        .iter()
        .find(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "browser_get_content")
        .map(ToString::to_string)
        .unwrap_or_default();
    assert!(
        page.contains("Tandem demo shop"),
        "the page was read: {page}"
    );
    let child = dirs.into_iter().find(|d| *d != top).unwrap();
    assert!(
        env.events(&child)
            .iter()
            .any(|e| e["kind"] == "ActionEvent" && e["tool_name"] == "finish"),
        "the sub-agent finished its task"
    );
}

/// What `child` prints after `prefix` on a line of its stdout (read on, so it never blocks on a
/// full pipe), within a minute.
fn printed(child: &mut std::process::Child, prefix: &str) -> String {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let wanted = prefix.to_owned();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
        {
            if let Some(rest) = line.strip_prefix(&wanted) {
                let _ = tx.send(rest.trim().to_owned());
            }
        }
    });
    rx.recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| panic!("the command printed no line starting {prefix:?}"))
}

/// `tandem serve` on a free loopback port; killed when dropped.
struct Served {
    child: std::process::Child,
    base: String,
}

impl Served {
    fn start(home: &Path, args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["serve", "--host", "127.0.0.1", "--port", "0"])
            .args(args)
            .env("TANDEM_HOME", home)
            .env("TANDEM_UI_DIR", home.join("no-ui"))
            .env_remove("LLM_MODEL")
            .env_remove("LLM_BASE_URL")
            .env_remove("LLM_API_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let base = printed(&mut child, "Tandem agent server on ");
        Self { child, base }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One `tandem serve --llm demo` has one demo LLM for all its conversations: two conversations
/// in two fresh folders (neither the server's default workspace) each run the tour in their own
/// folder and finish with no error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_demo_server_works_in_each_conversation_s_own_workspace() {
    const KEY: &str = "demo-test-key";
    let home = tempfile::tempdir().unwrap();
    let served = Served::start(home.path(), &["--session-key", KEY, "--llm", "demo"]);
    let http = reqwest::Client::new();
    let call = |method: reqwest::Method, path: String, body: Option<Value>| {
        let mut r = http
            .request(method, format!("{}{path}", served.base))
            .header("X-Session-API-Key", KEY);
        if let Some(b) = body {
            r = r.json(&b);
        }
        async move {
            let resp = r.send().await.unwrap();
            let status = resp.status().as_u16();
            let body: Value = resp.json().await.unwrap();
            assert!(status < 300, "{path}: {status} {body}");
            body
        }
    };
    let info = call(reqwest::Method::GET, "/server_info".into(), None).await;
    assert_eq!(info["demo"], json!(true), "{info}");
    let model = info["llm_model"].as_str().unwrap().to_owned();

    let workspaces = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut ids = Vec::new();
    for ws in &workspaces {
        // As the UI starts one: the server's model, no URL or key of its own.
        let body = json!({
            "agent": {
                "kind": "Agent",
                "llm": {"model": model, "usage_id": "agent"},
                "tools": [{"name": "terminal", "params": {}}, {"name": "file_editor", "params": {}},
                          {"name": "task_tracker", "params": {}}],
                "include_default_tools": ["FinishTool", "ThinkTool"],
            },
            "workspace": {"kind": "LocalWorkspace", "working_dir": ws.path().to_str().unwrap()},
            "initial_message": {"role": "user", "content": [{"type": "text", "text": "show me around"}], "run": true},
        });
        let created = call(
            reqwest::Method::POST,
            "/api/conversations".into(),
            Some(body),
        )
        .await;
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    for (id, ws) in ids.iter().zip(&workspaces) {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let conv = call(
                reqwest::Method::GET,
                format!("/api/conversations/{id}"),
                None,
            )
            .await;
            let status = conv["execution_status"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            if matches!(status.as_str(), "finished" | "error" | "stuck") {
                assert_eq!(status, "finished", "{conv}");
                break;
            }
            assert!(Instant::now() < deadline, "still {status}: {conv}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let page = call(
            reqwest::Method::GET,
            format!("/api/conversations/{id}/events/search?limit=100"),
            None,
        )
        .await;
        assert_clean_demo(page["items"].as_array().unwrap(), ws.path());
    }
}

#[test]
fn a_killed_run_recovers_on_resume() {
    let server = scripted(vec![
        Step::tool_call("terminal", json!({"command": "sleep 30"})),
        Step::text("Recovered and done."),
    ]);
    let env = Env::new();
    let ws = env.workspace.path().to_str().unwrap().to_owned();
    let mut child = env
        .cmd(Some(&server))
        .args(["run", "wait a while", "--workspace", &ws])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait for the tool to be in progress (its action is on disk), then kill -9.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let dirs = env.conversation_dirs();
        if dirs
            .first()
            .is_some_and(|d| env.events(d).iter().any(|e| e["kind"] == "ActionEvent"))
        {
            break;
        }
        assert!(Instant::now() < deadline, "the action never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    child.kill().unwrap();
    child.wait().unwrap();

    let out = env
        .cmd(Some(&server))
        .args(["resume", "--last"])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("A restart occurred while this tool was in progress"),
        "{stdout}"
    );
    assert!(stdout.contains("Recovered and done."), "{stdout}");
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) {
                found.push(cmd);
            }
        }
    }
    found
}

#[test]
fn run_with_browser_gives_the_agent_chromium_and_closes_it_at_the_end() {
    let page =
        "data:text/html,<title>Data page</title><h1>Hello from a page</h1><a href='/x'>Go</a>";
    let server = scripted(vec![
        Step::tool_call("browser_navigate", json!({"url": page})),
        Step::tool_call("browser_get_state", json!({})),
        Step::tool_call("finish", json!({"message": "Read the page."})),
    ]);
    let env = Env::new();
    let out = env.run(Some(&server), &["--browser", "read the page"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("browser_navigate"), "{stdout}");
    let dirs = env.conversation_dirs();
    let events = env.events(&dirs[0]);
    let state = events
        .iter()
        .find(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "browser_get_state")
        .unwrap();
    assert_eq!(state["observation"]["kind"], "BrowserObservation");
    let text = state["observation"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("\"title\": \"Data page\""), "{text}");
    let base = std::fs::read_to_string(dirs[0].join("base_state.json")).unwrap();
    assert!(
        base.contains("browser_tool_set"),
        "the spec names the browser tools"
    );
    let profile = dirs[0].join("browser-profile");
    assert!(profile.is_dir());
    // Chromium went with the run.
    let left = processes_mentioning(profile.to_str().unwrap());
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn run_with_sub_agents_runs_a_task_as_a_child_conversation() {
    let server = scripted(vec![
        Step::tool_call(
            "task",
            json!({"description": "look around", "prompt": "list the files"}),
        ),
        // The child's turn: it answers at once.
        Step::text("two files"),
        Step::tool_call("finish", json!({"message": "The child saw two files."})),
    ]);
    let env = Env::new();
    let out = env.run(Some(&server), &["--sub-agents", "delegate the look"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let dirs = env.conversation_dirs();
    assert_eq!(dirs.len(), 2, "the parent and its child");
    let meta = |d: &PathBuf| -> Value {
        serde_json::from_str(&std::fs::read_to_string(d.join("meta.json")).unwrap()).unwrap()
    };
    let (child, parent): (Vec<&PathBuf>, Vec<&PathBuf>) = dirs
        .iter()
        .partition(|d| meta(d)["parent_conversation_id"].is_string());
    assert_eq!(meta(child[0])["title"], "look around");
    let observation = env
        .events(parent[0])
        .into_iter()
        .find(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "task")
        .unwrap();
    assert_eq!(observation["observation"]["status"], "completed");
    assert_eq!(
        observation["observation"]["content"][0]["text"],
        "two files"
    );
    let parent_id = meta(parent[0])["id"].as_str().unwrap().to_owned();
    assert_eq!(
        meta(child[0])["parent_conversation_id"]
            .as_str()
            .unwrap()
            .replace('-', ""),
        parent_id
    );
}

/// `tandem serve` with no key given makes one: the API refuses a client without it, and piped
/// output (a log) never shows it; `--no-auth` opens the API (and refuses keys alongside).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_makes_a_key_unless_told_no_auth() {
    let home = tempfile::tempdir().unwrap();
    let http = reqwest::Client::new();
    let served = Served::start(home.path(), &[]);
    let resp = http
        .get(format!("{}/api/conversations/search", served.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401, "a key was made and is needed");
    drop(served);

    let open = Served::start(home.path(), &["--no-auth"]);
    let resp = http
        .get(format!("{}/api/conversations/search", open.base))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200, "--no-auth opens the API");
    drop(open);

    let env = Env::new();
    let out = env
        .cmd(None)
        .args([
            "serve",
            "--port",
            "0",
            "--no-auth",
            "--session-key",
            "k-123456789",
        ])
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--no-auth"), "{stderr}");
}

/// On a terminal the made key is shown (and only there): 64 hex digits.
#[test]
fn serve_shows_the_key_it_made_on_a_terminal() {
    let env = Env::new();
    let tandem = env!("CARGO_BIN_EXE_tandem");
    let mut cmd = env.cmd(None);
    cmd.env("TANDEM_UI_DIR", env.home.path().join("no-ui"));
    let out = run_on_terminal(
        &cmd,
        &format!("timeout -s INT 8 '{tandem}' serve --host 127.0.0.1 --port 0"),
        b"",
        Duration::from_secs(60),
    );
    let (stdout, stderr) = text(&out);
    // `Open the UI: …/ui/#key=K` with a UI (the embedded page counts), else the key alone.
    let key = stdout
        .lines()
        .find_map(|l| {
            let l = l.trim();
            l.strip_prefix("Session key (send it as X-Session-API-Key): ")
                .or_else(|| l.split_once("/ui/#key=").map(|(_, k)| k))
        })
        .unwrap_or_else(|| panic!("no key shown:\n{stdout}\n{stderr}"));
    assert_eq!(key.len(), 64, "{key}");
    assert!(key.chars().all(|c| c.is_ascii_hexdigit()), "{key}");
}

/// The server's environment and memory are out of reach of other processes of its user (the
/// agent's commands run as the person locally): `/proc/<pid>/environ` and `mem` refuse them,
/// while a plain process of that user can be read (so the check can fail). As root, both run
/// as another user, since root reads everything.
#[test]
fn another_process_of_the_same_user_cannot_read_the_servers_environment_or_memory() {
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::process::CommandExt;
    let me = std::fs::metadata("/proc/self").unwrap().uid();
    let (uid, gid) = if me == 0 { (2345, 2345) } else { (me, me) };
    let home = tempfile::tempdir().unwrap();
    std::os::unix::fs::chown(home.path(), Some(uid), Some(gid)).unwrap();
    let as_user = |cmd: &mut Command| {
        if me == 0 {
            cmd.uid(uid).gid(gid);
        }
    };
    // The build's folder may be closed to that user: the binary is linked (or copied) in.
    let bin = home.path().join("tandem");
    if std::fs::hard_link(env!("CARGO_BIN_EXE_tandem"), &bin).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_tandem"), &bin).unwrap();
    }
    let mut serve = Command::new(&bin);
    serve
        .args(["serve", "--host", "127.0.0.1", "--port", "0"])
        .env("TANDEM_HOME", home.path())
        .env("HOME", home.path())
        .env("TANDEM_UI_DIR", home.path().join("no-ui"))
        .env("LLM_API_KEY", "sk-held-by-the-server")
        .current_dir(home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    as_user(&mut serve);
    let mut child = serve.spawn().unwrap();
    let pid = child.id();
    let stdout = child.stdout.take().unwrap();
    let up = std::io::BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|l| l.starts_with("Tandem agent server on "));
    assert!(up, "tandem serve did not start");
    let read = |path: String| {
        let mut cat = Command::new("cat");
        cat.arg(&path).stdout(Stdio::null()).stderr(Stdio::piped());
        as_user(&mut cat);
        let out = cat.output().unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    for what in ["environ", "mem"] {
        let (ok, stderr) = read(format!("/proc/{pid}/{what}"));
        assert!(!ok, "/proc/<server>/{what} was readable");
        assert!(stderr.contains("Permission denied"), "{what}: {stderr}");
    }
    // A plain process of the same user is readable: the refusal above is the server's own.
    let mut sleeper = Command::new("sleep");
    sleeper.arg("30");
    as_user(&mut sleeper);
    let mut sleeper = sleeper.spawn().unwrap();
    let (ok, stderr) = read(format!("/proc/{}/environ", sleeper.id()));
    assert!(ok, "a same-user process's environ: {stderr}");
    let _ = sleeper.kill();
    let _ = sleeper.wait();
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn checkpoints_list_what_each_command_changed_and_rewind_takes_it_back() {
    let server = scripted(vec![
        Step::tool_call("terminal", json!({"command": "printf v1 > notes.txt"})),
        Step::tool_call(
            "terminal",
            json!({"command": "printf v2 > notes.txt && rm -f old.txt"}),
        ),
        Step::tool_call("finish", json!({"message": "Edited."})),
    ]);
    let env = Env::new();
    std::fs::write(env.workspace.path().join("old.txt"), "old").unwrap();
    let out = env.run(Some(&server), &["edit the notes"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let dir = env.conversation_dirs().remove(0);
    let id = dir.file_name().unwrap().to_string_lossy().into_owned();

    let out = env.cmd(None).args(["checkpoints", &id]).output().unwrap();
    let (listing, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        listing.contains("terminal: 1 added, 0 modified, 0 deleted"),
        "{listing}"
    );
    assert!(
        listing.contains("terminal: 0 added, 1 modified, 1 deleted"),
        "{listing}"
    );
    assert!(
        listing.contains("+ notes.txt") && listing.contains("- old.txt"),
        "{listing}"
    );

    // Rewind to the first command's observation: v1 back, old.txt still gone (the agent
    // deleted it after that event, so it comes back too).
    let events = env.events(&dir);
    let first = events
        .iter()
        .find(|e| e["kind"] == "ObservationEvent")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let preview = env
        .cmd(None)
        .args(["rewind", &id, "--to", &first, "--dry-run"])
        .output()
        .unwrap();
    let (diff, said) = text(&preview);
    assert!(
        diff.contains("-v2") && diff.contains("+v1"),
        "{diff}\n{said}"
    );
    assert_eq!(
        std::fs::read_to_string(env.workspace.path().join("notes.txt")).unwrap(),
        "v2"
    );

    let out = env
        .cmd(None)
        .args(["rewind", &id, "--to", &first])
        .output()
        .unwrap();
    let (_, said) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{said}");
    assert_eq!(
        std::fs::read_to_string(env.workspace.path().join("notes.txt")).unwrap(),
        "v1"
    );
    assert_eq!(
        std::fs::read_to_string(env.workspace.path().join("old.txt")).unwrap(),
        "old"
    );
    let undo = said
        .split("undo: tandem rewind ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().nth(2))
        .unwrap_or_else(|| panic!("no undo line: {said}"))
        .to_owned();
    let out = env
        .cmd(None)
        .args(["rewind", &id, "--to", &undo])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    assert_eq!(
        std::fs::read_to_string(env.workspace.path().join("notes.txt")).unwrap(),
        "v2"
    );
    assert!(!env.workspace.path().join("old.txt").exists());

    let out = env
        .cmd(None)
        .args(["rewind", &id, "--to", "no-such-event"])
        .output()
        .unwrap();
    let (_, said) = text(&out);
    assert_ne!(out.status.code(), Some(0));
    assert!(said.contains("no event no-such-event"), "{said}");

    // --chat moves the conversation's head only; --both the files and the head.
    let head = |dir: &std::path::Path| -> Value {
        serde_json::from_slice::<Value>(&std::fs::read(dir.join("base_state.json")).unwrap())
            .unwrap()["leaf_event_id"]
            .clone()
    };
    let out = env
        .cmd(None)
        .args(["rewind", &id, "--to", &first, "--chat"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    assert_eq!(head(&dir), first.as_str());
    assert_eq!(
        std::fs::read_to_string(env.workspace.path().join("notes.txt")).unwrap(),
        "v2",
        "--chat writes no file"
    );
    let out = env
        .cmd(None)
        .args(["rewind", &id, "--to", &first, "--both"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    assert_eq!(head(&dir), first.as_str());
    assert_eq!(
        std::fs::read_to_string(env.workspace.path().join("notes.txt")).unwrap(),
        "v1"
    );
    let out = env
        .cmd(None)
        .args(["rewind", &id, "--to", "no-such-event", "--chat"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out).1.contains("no event no-such-event"),
        "{:?}",
        text(&out)
    );
}

/// A child that is killed when dropped, so a failed assertion never leaves it running.
struct Reaped(std::process::Child);

impl std::ops::Deref for Reaped {
    type Target = std::process::Child;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Reaped {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs the demo in `env` and exports its conversation as a trace: the trace and the events.
fn demo_trace(env: &Env) -> (PathBuf, Vec<Value>) {
    let out = env.run(None, &["show me around", "--llm", "demo"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let dir = env.top_conversation_dir();
    let events = env.events(&dir);
    let id = dir.file_name().unwrap().to_string_lossy().into_owned();
    let trace = env.home.path().join("demo.tandem-trace");
    let out = env
        .cmd(None)
        .args(["replay", "export", &id, "-o"])
        .arg(&trace)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    assert!(trace.is_file());
    (trace, events)
}

/// A trace opens where there is no network at all: `tandem replay open` in a network namespace
/// of its own, with only the loopback interface up, serves the replay to a client in that
/// namespace.
#[test]
fn a_trace_opens_with_no_network_but_loopback() {
    let env = Env::new();
    let (trace, events) = demo_trace(&env);
    let mut child = Reaped(
        Command::new("unshare")
            .args([
                "--net",
                "--",
                "sh",
                "-c",
                r#"ip link set lo up && exec "$0" replay open "$1""#,
            ])
            .arg(env!("CARGO_BIN_EXE_tandem"))
            .arg(&trace)
            .env("TANDEM_HOME", env.home.path().join("isolated"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("unshare (util-linux) runs; the tests run as root"),
    );
    let url = printed(&mut child, "Open: ");
    let (base, fragment) = url.split_once("/ui/#").unwrap();
    let key = fragment
        .split('&')
        .find_map(|kv| kv.strip_prefix("key="))
        .unwrap();
    let conversation = fragment
        .split('&')
        .find_map(|kv| kv.strip_prefix("conversation="))
        .unwrap();
    let namespace = format!("--net=/proc/{}/ns/net", child.id());
    let inside = |args: &[&str]| {
        let out = Command::new("nsenter")
            .arg(&namespace)
            .arg("--")
            .args(args)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (_, links) = inside(&["ip", "-o", "link", "show", "up"]);
    let up: Vec<&str> = links.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(up.len(), 1, "only loopback is up: {links}");
    assert!(up[0].contains(" lo:"), "{links}");
    let last = events.last().unwrap()["id"].as_str().unwrap();
    let (ok, body) = inside(&[
        "curl",
        "-sf",
        "-H",
        &format!("X-Session-API-Key: {key}"),
        &format!("{base}/api/conversations/{conversation}/replay?event_id={last}"),
    ]);
    assert!(ok, "the replay answers inside the namespace: {body}");
    let state: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(state["event_id"], last);
    assert!(state["workspace"]["tree"].is_string(), "{state}");
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(child.wait().unwrap().success(), "SIGTERM ends it cleanly");
}

/// `tandem run` records the replay lanes; `tandem replay export` writes a conversation as one
/// trace; `tandem replay open` serves it read-only on loopback in a scratch home: the replay
/// route answers (the terminal's screen, the checkpoints' diffs), anything that would run
/// or write is refused, SIGTERM ends it cleanly. Bad input: an unknown
/// conversation, a file that is not a trace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trace_exports_and_opens_read_only_anywhere() {
    let env = Env::new();
    let (trace, events) = demo_trace(&env);

    let mut child = Reaped(
        env.cmd(None)
            .args(["replay", "open"])
            .arg(&trace)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let url = printed(&mut child, "Open: ");
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let (base, fragment) = url.split_once("/ui/#").unwrap();
    let param = |name: &str| {
        fragment
            .split('&')
            .find_map(|kv| kv.strip_prefix(&format!("{name}=")))
            .unwrap()
            .to_owned()
    };
    let (key, conversation) = (param("key"), param("conversation"));
    let http = reqwest::Client::new();
    // The replay as of `event` (the answer must be 200).
    let replay_at = async |event: &str| -> Value {
        let resp = http
            .get(format!(
                "{base}/api/conversations/{conversation}/replay?event_id={event}"
            ))
            .header("X-Session-API-Key", &key)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{event}");
        resp.json().await.unwrap()
    };
    let last = events.last().unwrap()["id"].as_str().unwrap();
    let state = replay_at(last).await;
    assert!(state["workspace"]["tree"].is_string(), "{state}");
    // The checkpoints came along in the trace's bundle: what the demo's edits changed shows.
    let mut diffs = String::new();
    for e in &events {
        let state = replay_at(e["id"].as_str().unwrap()).await;
        assert!(
            !state["notes"].to_string().contains("cannot be shown"),
            "{state}"
        );
        diffs.push_str(state["workspace"]["diff"].as_str().unwrap_or_default());
    }
    assert!(
        diffs.contains("\n+"),
        "the demo's edits are in the diffs:\n{diffs}"
    );
    // `tandem run` recorded the agent's terminal: its screen at each command's answer.
    let answers: Vec<&Value> = events
        .iter()
        .filter(|e| e["kind"] == "ObservationEvent" && e["tool_name"] == "terminal")
        .collect();
    assert!(!answers.is_empty(), "the demo runs a command");
    for answer in answers {
        let event = answer["id"].as_str().unwrap();
        let state = replay_at(event).await;
        assert_eq!(state["terminal"]["at_event_id"], event, "{state}");
        assert!(
            !state["terminal"]["screen"]
                .as_str()
                .unwrap()
                .trim()
                .is_empty(),
            "{state}"
        );
    }
    let resp = http
        .post(format!("{base}/api/conversations/{conversation}/run"))
        .header("X-Session-API-Key", &key)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 409, "a replay runs nothing");
    let resp = http
        .get(format!(
            "{base}/api/conversations/{conversation}/replay?event_id={last}"
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 401, "the key is still needed");

    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    assert!(child.wait().unwrap().success(), "SIGTERM ends it cleanly");

    // Bad input.
    let out = env
        .cmd(None)
        .args(["replay", "export", "0123456789abcdef0123456789abcdef", "-o"])
        .arg(env.home.path().join("x"))
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr.contains("no such conversation"), "{stderr}");
    let junk = env.home.path().join("junk.tandem-trace");
    std::fs::write(&junk, "not a trace").unwrap();
    let out = env
        .cmd(None)
        .args(["replay", "open"])
        .arg(&junk)
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr.contains("not a Tandem trace"), "{stderr}");
}

/// `tandem move` sends a conversation of this machine to a `tandem serve` with its events and
/// its workspace (untracked files too); here it becomes a record `tandem resume` refuses. A
/// move to a server that does not answer, or of an unknown conversation, names the cause and
/// leaves the conversation as it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_conversation_moves_to_a_server_and_a_record_stays_behind() {
    const KEY: &str = "move-test-key";
    let env = Env::new();
    std::fs::write(env.workspace.path().join("mine.txt"), "the person's file").unwrap();
    let out = env.run(None, &["show me around", "--llm", "demo"]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    let dir = env.top_conversation_dir();
    let events = env.events(&dir);
    let id = dir.file_name().unwrap().to_string_lossy().into_owned();

    // Bad input first: nothing changes.
    let out = env
        .cmd(None)
        .args(["move", &id, "--to", "http://127.0.0.1:9"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out).1.contains("cannot reach"), "{:?}", text(&out));
    let out = env
        .cmd(None)
        .args([
            "move",
            "0123456789abcdef0123456789abcdef",
            "--to",
            "http://127.0.0.1:9",
        ])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out).1.contains("0123456789abcdef"),
        "{:?}",
        text(&out)
    );
    assert!(!dir.join("tandem_moved.json").exists());

    let target = tempfile::tempdir().unwrap();
    let served = Served::start(target.path(), &["--session-key", KEY]);
    let out = env
        .cmd(None)
        .args(["move", &id, "--to", &served.base, "--to-key", KEY])
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("Moved"), "{stdout}");

    let http = reqwest::Client::new();
    let get = async |path: &str| -> Value {
        let resp = http
            .get(format!("{}{path}", served.base))
            .header("X-Session-API-Key", KEY)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{path}");
        resp.json().await.unwrap()
    };
    let info = get(&format!("/api/conversations/{id}")).await;
    let page = get(&format!("/api/conversations/{id}/events/search?limit=100")).await;
    let moved_ids: Vec<&Value> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["id"])
        .collect();
    let local_ids: Vec<&Value> = events.iter().map(|e| &e["id"]).collect();
    assert_eq!(moved_ids, local_ids, "every event, in order");
    let working_dir = PathBuf::from(info["workspace"]["working_dir"].as_str().unwrap());
    assert!(
        working_dir.starts_with(target.path()),
        "{}",
        working_dir.display()
    );
    assert_eq!(
        std::fs::read_to_string(working_dir.join("mine.txt")).unwrap(),
        "the person's file"
    );

    // Here: a record of the move.
    let record = std::fs::read_to_string(dir.join("tandem_moved.json")).unwrap();
    assert!(record.contains(&served.base), "{record}");
    let out = env.cmd(None).args(["resume", &id]).output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out).1.contains("moved to"), "{:?}", text(&out));
}

#[path = "cli/move_crash.rs"]
mod move_crash;
