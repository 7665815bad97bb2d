//! `tandem run --server` against `tandem serve`: the same lines as a local run, clear errors
//! for a wrong URL or key, and `RemoteConversation` losing and doubling nothing when its socket
//! drops mid-run.

use std::process::{Command, Output};
use std::time::Duration;

use serde_json::json;
use tandem_e2e::{KEY, TandemServer, free_port, tandem_bin};
use tandem_protocol::{AgentSpec, ExecutionStatus, LlmConfig, Message};
use tandem_sdk::ConversationClient;
use tandem_sdk::remote::{RemoteConversationOptions, RemoteWorkspace};
use tandem_testkit::{Script, ScriptedLlmServer, Step, run_on_terminal};

use crate::tandem;

fn script() -> Script {
    Script::new([
        Step::tool_call(
            "terminal",
            json!({"command": "echo remote-cli-ok", "security_risk": "LOW"}),
        ),
        Step::tool_call("finish", json!({"message": "all done"})),
    ])
    .with_no_tools_text("Remote CLI")
}

#[test]
fn run_on_a_server_prints_the_same_lines_as_a_local_run() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let w = work.to_string_lossy().into_owned();
    let server = TandemServer::start(&dir.path().join("server-home"), &[])
        .unwrap_or_else(|e| panic!("{e:#}"));

    let local_llm = ScriptedLlmServer::start(script());
    let local = tandem(
        &dir.path().join("cli-home"),
        &[
            "run",
            "say hi",
            "--workspace",
            &w,
            "--model",
            "openai/fake",
            "--base-url",
            &local_llm.base_url(),
            "--api-key",
            "x",
        ],
    );
    let remote_llm = ScriptedLlmServer::start(script());
    let remote = tandem(
        &dir.path().join("cli-home"),
        &[
            "run",
            "say hi",
            "--workspace",
            &w,
            "--model",
            "openai/fake",
            "--base-url",
            &remote_llm.base_url(),
            "--api-key",
            "x",
            "--server",
            &server.url,
            "--session-key",
            KEY,
        ],
    );
    let text = |o: &Output| String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(
        remote.status.code(),
        Some(0),
        "stdout:\n{}\nstderr:\n{}",
        text(&remote),
        String::from_utf8_lossy(&remote.stderr)
    );
    assert_eq!(
        local.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&local.stderr)
    );
    assert!(
        text(&remote).contains("▶ terminal: $ echo remote-cli-ok"),
        "{}",
        text(&remote)
    );
    assert!(
        text(&remote).contains("↳ exit 0: remote-cli-ok"),
        "{}",
        text(&remote)
    );
    assert_eq!(
        text(&remote),
        text(&local),
        "remote and local runs print the same lines"
    );
}

#[test]
fn wrong_url_and_wrong_key_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let port = free_port().unwrap();
    let url = format!("http://127.0.0.1:{port}");
    let out = tandem(&home, &["run", "x", "--llm", "demo", "--server", &url]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot reach the agent server"), "{err}");

    let server = TandemServer::start(&dir.path().join("server-home"), &[])
        .unwrap_or_else(|e| panic!("{e:#}"));
    let out = tandem(
        &home,
        &[
            "run",
            "x",
            "--llm",
            "demo",
            "--server",
            &server.url,
            "--session-key",
            "nope",
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("unauthorized"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn socket_drops_against_tandem_serve_lose_and_double_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let server = tokio::task::spawn_blocking(move || TandemServer::start(&home, &[]))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{e:#}"));
    let mut steps: Vec<Step> = (0..40)
        .map(|i| Step::tool_call("think", json!({"thought": format!("step {i}")})))
        .collect();
    steps.push(Step::tool_call("finish", json!({"message": "done"})));
    let llm = ScriptedLlmServer::start(Script::new(steps).with_no_tools_text("Drops"));
    let mut config = LlmConfig::new("openai/fake");
    config.base_url = Some(llm.base_url());
    config.api_key = Some("x".into());
    config.num_retries = 0;
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let ws = RemoteWorkspace::connect(&server.url, Some(KEY.into()), work.to_string_lossy())
        .await
        .unwrap();
    let conv = ws
        .create_conversation(&RemoteConversationOptions::new(AgentSpec::default_for(
            config,
        )))
        .await
        .unwrap();
    conv.send_message(Message::user("think a lot"), false)
        .await
        .unwrap();
    let runner = {
        let conv = conv.clone();
        tokio::spawn(async move { conv.run_to_end().await })
    };
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(15)).await;
        conv.reconnect();
    }
    let status = tokio::time::timeout(Duration::from_secs(60), runner)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(status, ExecutionStatus::Finished);
    // The server's log, fetched fresh through REST by a second attachment.
    let fresh = ws.attach(conv.id()).await.unwrap();
    let want: Vec<String> = fresh.events().iter().map(|e| e.id().to_owned()).collect();
    let got: Vec<String> = conv.events().iter().map(|e| e.id().to_owned()).collect();
    assert_eq!(got, want, "same events, same order, no duplicate");
    assert!(conv.live().borrow().connections >= 2, "it reconnected");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resuming_a_conversation_with_nothing_to_run_on_a_server_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("server-home");
    let server = tokio::task::spawn_blocking(move || TandemServer::start(&home, &[]))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{e:#}"));
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let ws = RemoteWorkspace::connect(&server.url, Some(KEY.into()), work.to_string_lossy())
        .await
        .unwrap();
    // A conversation nobody has said anything in: the server answers its run with a 409.
    let conv = ws
        .create_conversation(&RemoteConversationOptions::new(AgentSpec::default_for(
            LlmConfig::new("openai/fake"),
        )))
        .await
        .unwrap();
    let mut cmd = tokio::process::Command::new(tandem_bin().unwrap());
    cmd.args([
        "resume",
        "--server",
        &server.url,
        "--session-key",
        KEY,
        conv.id(),
    ])
    .env("TANDEM_HOME", dir.path().join("cli-home"))
    .env_remove("TANDEM_SERVER_URL")
    .env_remove("TANDEM_SESSION_KEY")
    .stdin(std::process::Stdio::null())
    .kill_on_drop(true);
    // As on this machine: the run does not start and the CLI says why, instead of waiting
    // for it.
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("tandem resume returns")
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("error: nothing to run: send a message first"),
        "{err}"
    );
}

#[test]
fn on_a_terminal_an_edited_command_runs_on_the_server_instead_of_the_agent_s() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let server = TandemServer::start(&dir.path().join("server-home"), &[])
        .unwrap_or_else(|e| panic!("{e:#}"));
    let llm = ScriptedLlmServer::start(
        Script::new([
            Step::tool_call(
                "terminal",
                json!({"command": "touch original-marker", "security_risk": "LOW"}),
            ),
            Step::tool_call("finish", json!({"message": "done"})),
        ])
        .with_no_tools_text("Remote edit"),
    );
    // On a real terminal the answers wait until asked: "e" (edit), then the command instead.
    let out = run_on_a_terminal(
        &dir,
        "make a file",
        &work,
        &llm,
        Some(&server),
        b"e\ntouch edited-marker && echo edited-$((3+4))\n",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("· running your edited action (medium risk)")
            && stdout.contains("(edited): edited-7"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(work.join("edited-marker").exists());
    assert!(
        !work.join("original-marker").exists(),
        "the agent's command ran"
    );
}

/// `tandem run <task> --confirm always` in `work` on a terminal (on `server` when given), with
/// `answers` typed at its prompts; the CLI's home is `dir/cli-home`.
fn run_on_a_terminal(
    dir: &tempfile::TempDir,
    task: &str,
    work: &std::path::Path,
    llm: &ScriptedLlmServer,
    server: Option<&TandemServer>,
    answers: &[u8],
) -> Output {
    let mut env = Command::new("tandem");
    env.env("TANDEM_HOME", dir.path().join("cli-home"))
        .env_remove("LLM_MODEL")
        .env_remove("TANDEM_SERVER_URL")
        .env_remove("TANDEM_SESSION_KEY");
    let mut line = format!(
        "'{}' run '{task}' --confirm always --workspace '{}' --model openai/fake --base-url '{}' --api-key x",
        tandem_bin().unwrap().display(),
        work.display(),
        llm.base_url(),
    );
    if let Some(server) = server {
        line.push_str(&format!(" --server '{}' --session-key '{KEY}'", server.url));
    }
    run_on_terminal(&env, &line, answers, Duration::from_secs(60))
}

#[test]
fn on_a_terminal_reject_then_quit_reads_the_same_locally_and_on_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = TandemServer::start(&dir.path().join("server-home"), &[])
        .unwrap_or_else(|e| panic!("{e:#}"));
    let script = || {
        Script::new([
            Step::tool_call(
                "terminal",
                json!({"command": "touch first-marker", "security_risk": "LOW"}),
            ),
            Step::tool_call(
                "terminal",
                json!({"command": "touch second-marker", "security_risk": "LOW"}),
            ),
        ])
        .with_no_tools_text("Reject then quit")
    };
    // "n" with a reason the agent reads, then "q" at the next action's prompt.
    let answers = b"n\nnot that one\nq\n";
    for on_server in [false, true] {
        let work = dir.path().join(if on_server { "remote" } else { "local" });
        std::fs::create_dir_all(&work).unwrap();
        let llm = ScriptedLlmServer::start(script());
        let out = run_on_a_terminal(
            &dir,
            "make files",
            &work,
            &llm,
            on_server.then_some(&server),
            answers,
        );
        // On a terminal, stderr (prompts, hints) and stdout (events) share the output.
        let shown = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(3), "on_server={on_server}\n{shown}");
        assert!(shown.contains("[y]es / [n]o / [e]dit"), "{shown}");
        assert!(shown.contains("⊘ rejected: not that one"), "{shown}");
        assert!(
            shown.contains("▶ terminal: $ touch second-marker"),
            "{shown}"
        );
        let resume = if on_server {
            format!(
                "· stopped; continue with: tandem resume --server {} ",
                server.url
            )
        } else {
            "· stopped; continue with: tandem resume ".to_owned()
        };
        assert!(shown.contains(&resume), "{resume:?} in\n{shown}");
        assert!(
            !work.join("first-marker").exists(),
            "the rejected action ran"
        );
        assert!(
            !work.join("second-marker").exists(),
            "an unanswered action ran"
        );
    }
}

#[test]
fn on_a_terminal_a_refused_edit_reads_the_same_locally_and_on_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = TandemServer::start(&dir.path().join("server-home"), &[])
        .unwrap_or_else(|e| panic!("{e:#}"));
    // "e", arguments the file editor refuses (no such command), then "q" at the prompt again.
    let answers = b"e\n{\"command\": \"bogus\"}\nq\n";
    for on_server in [false, true] {
        let work = dir.path().join(if on_server { "remote" } else { "local" });
        std::fs::create_dir_all(&work).unwrap();
        let llm = ScriptedLlmServer::start(
            Script::new([Step::tool_call(
                "file_editor",
                json!({"command": "view", "path": work, "security_risk": "LOW"}),
            )])
            .with_no_tools_text("Refused edit"),
        );
        let out = run_on_a_terminal(
            &dir,
            "look around",
            &work,
            &llm,
            on_server.then_some(&server),
            answers,
        );
        let shown = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(3), "on_server={on_server}\n{shown}");
        assert!(
            shown.contains("✗ the edited action was refused, nothing ran: ")
                && shown.contains("bogus"),
            "on_server={on_server}\n{shown}"
        );
        assert!(!shown.contains("running your edited action"), "{shown}");
    }
}

#[test]
fn sub_agents_on_a_server_run_there_as_children() {
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let w = work.to_string_lossy().into_owned();
    let server = TandemServer::start(&dir.path().join("server-home"), &[])
        .unwrap_or_else(|e| panic!("{e:#}"));
    let llm = ScriptedLlmServer::start(
        Script::new([
            Step::tool_call(
                "task",
                json!({"description": "look around", "prompt": "say child-ok"}),
            ),
            Step::tool_call("finish", json!({"message": "child-ok"})),
            Step::tool_call("finish", json!({"message": "all done"})),
        ])
        .with_no_tools_text("Remote sub-agents"),
    );
    let out = tandem(
        &dir.path().join("cli-home"),
        &[
            "run",
            "ask a sub-agent",
            "--sub-agents",
            "--workspace",
            &w,
            "--model",
            "openai/fake",
            "--base-url",
            &llm.base_url(),
            "--api-key",
            "x",
            "--server",
            &server.url,
            "--session-key",
            KEY,
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout:\n{text}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("▶ task: general-purpose sub-agent: look around"),
        "{text}"
    );
    assert!(text.contains("↳ Task ID: "), "{text}");
    let requests = llm.requests();
    let answered = requests.iter().any(|r| {
        r["tools"].as_array().is_some_and(|t| !t.is_empty())
            && r["messages"].to_string().contains("child-ok")
    });
    assert!(answered, "the child's answer reached the parent's model");
    let offered = requests.iter().any(|r| {
        r["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "task"))
    });
    assert!(offered, "the server's agent was given the task tool");
}
