//! The terminal tool against a real bash on a real PTY.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_protocol::{Observation, TerminalObservation};
use tandem_sdk::{Masker, Tool, ToolContext};
use tandem_tools::terminal::TerminalTool;
use tokio_util::sync::CancellationToken;

fn ctx(dir: &Path) -> ToolContext {
    ToolContext {
        cancel: CancellationToken::new(),
        working_dir: dir.to_path_buf(),
        conversation_dir: None,
        env: HashMap::new(),
        masker: Masker::default(),
    }
}

async fn call(tool: &TerminalTool, ctx: &ToolContext, args: Value) -> TerminalObservation {
    let action = match tool.parse_action(args) {
        Ok(action) => action,
        Err(e) => panic!("invalid arguments: {e}"),
    };
    match tool.execute(&action, ctx.clone()).await {
        Observation::Terminal(o) => o,
        other => panic!("not a terminal observation: {other:?}"),
    }
}

fn text(o: &TerminalObservation) -> String {
    o.content
        .iter()
        .filter_map(|c| c.as_text())
        .collect::<Vec<_>>()
        .join("")
}

/// Whether `pid` is gone (or a zombie waiting to be reaped).
fn is_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Whether terminal text ends with a shown prompt (`$ ` or `# `), its invisible OSC markers
/// (`ESC ] … BEL`) left out.
fn shows_prompt(text: &str) -> bool {
    let mut visible = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\x1b]") {
        visible.push_str(&rest[..at]);
        rest = rest[at..].split_once('\x07').map_or("", |(_, after)| after);
    }
    visible.push_str(rest);
    visible.ends_with("$ ") || visible.ends_with("# ")
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Reads a viewer's output onto `seen` until `done` holds for the text so far (a hang guard
/// fails the test after 20 s); `what` names the awaited output in that failure.
async fn viewer_until(
    viewer: &mut tokio::sync::broadcast::Receiver<bytes::Bytes>,
    mut seen: Vec<u8>,
    what: &str,
    done: impl Fn(&str) -> bool,
) -> Vec<u8> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done(&String::from_utf8_lossy(&seen)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, viewer.recv()).await {
            Ok(Ok(chunk)) => seen.extend_from_slice(&chunk),
            Ok(Err(e)) => panic!("{what}: {e}"),
            Err(_) => panic!("timed out waiting for {what}"),
        }
    }
    seen
}

#[tokio::test]
async fn echo_reports_output_exit_code_and_shell_facts() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    let o = call(&tool, &ctx, json!({"command": "echo hello"})).await;
    let t = text(&o);
    assert!(
        t.starts_with(
            "hello\n[The command completed with exit code 0.]\n[Current working directory: "
        ),
        "{t}"
    );
    assert!(t.ends_with("[Command finished with exit code 0]"), "{t}");
    assert!(!o.is_error && !o.timeout);
    assert_eq!(o.exit_code, Some(0));
    assert_eq!(o.command.as_deref(), Some("echo hello"));
    let cwd = dir.path().canonicalize().unwrap();
    assert_eq!(o.metadata.exit_code, 0);
    assert_eq!(o.metadata.working_dir.as_deref(), cwd.to_str());
    assert!(
        o.metadata
            .username
            .as_deref()
            .is_some_and(|u| !u.is_empty())
    );
    assert!(o.metadata.hostname.is_some());
    assert_eq!(
        o.metadata.suffix,
        "\n[The command completed with exit code 0.]"
    );
    tool.close();
}

#[tokio::test]
async fn nonzero_exit_multiline_and_syntax_errors() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    let o = call(
        &tool,
        &ctx,
        json!({"command": "echo out; bash -c 'exit 3'"}),
    )
    .await;
    assert_eq!(o.exit_code, Some(3));
    assert!(text(&o).starts_with("out\n[The command completed with exit code 3.]"));

    let o = call(
        &tool,
        &ctx,
        json!({"command": "echo a\necho b\nprintf 'x\\ty\\n'"}),
    )
    .await;
    assert!(
        text(&o).starts_with("a\nb\nx\ty\n[The command completed"),
        "{}",
        text(&o)
    );

    let o = call(&tool, &ctx, json!({"command": "echo ("})).await;
    assert_eq!(o.exit_code, Some(2));
    assert!(text(&o).contains("syntax error"), "{}", text(&o));
    assert!(!text(&o).contains("echo ("), "{}", text(&o));
    tool.close();
}

#[tokio::test]
async fn working_directory_and_environment_persist() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    call(&tool, &ctx, json!({"command": "cd /tmp"})).await;
    let o = call(&tool, &ctx, json!({"command": "pwd"})).await;
    assert!(text(&o).starts_with("/tmp\n"), "{}", text(&o));
    assert_eq!(o.metadata.working_dir.as_deref(), Some("/tmp"));

    call(
        &tool,
        &ctx,
        json!({"command": "export TANDEM_TEST_VAR=persisted"}),
    )
    .await;
    let o = call(&tool, &ctx, json!({"command": "echo $TANDEM_TEST_VAR"})).await;
    assert!(text(&o).starts_with("persisted\n"), "{}", text(&o));
    tool.close();
}

#[tokio::test]
async fn soft_timeout_returns_early_and_an_empty_command_waits_for_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new().with_soft_timeout(Duration::from_secs(1));
    let ctx = ctx(dir.path());
    let o = call(
        &tool,
        &ctx,
        json!({"command": "echo begin; sleep 5; echo done"}),
    )
    .await;
    let t = text(&o);
    assert_eq!(o.exit_code, Some(-1), "{t}");
    assert!(o.timeout);
    assert!(
        t.contains("still running") && t.contains("empty command"),
        "{t}"
    );
    assert!(o.metadata.pid > 0, "the running command's pid");

    // A new command cannot start while this one runs.
    let busy = call(&tool, &ctx, json!({"command": "echo other"})).await;
    assert!(busy.is_error);
    assert!(text(&busy).contains("still running"), "{}", text(&busy));

    // Under heavy load `begin` may only come with a later call.
    let mut seen = t;
    for _ in 0..60 {
        let o = call(&tool, &ctx, json!({"command": ""})).await;
        assert!(!o.is_error, "{}", text(&o));
        seen.push_str(&text(&o));
        if o.exit_code == Some(0) {
            assert!(seen.contains("begin\n") && seen.contains("done"), "{seen}");
            let after = call(&tool, &ctx, json!({"command": "echo next"})).await;
            assert!(text(&after).starts_with("next\n"));
            tool.close();
            return;
        }
    }
    panic!("the command never finished: {seen}");
}

#[tokio::test]
async fn hard_timeout_stops_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    let o = call(
        &tool,
        &ctx,
        json!({"command": "echo started; sleep 60", "timeout": 1}),
    )
    .await;
    let t = text(&o);
    assert!(o.timeout, "{t}");
    assert!(t.starts_with("started\n"), "{t}");
    assert!(t.contains("stopped with C-c"), "{t}");
    let o = call(&tool, &ctx, json!({"command": "echo ok"})).await;
    assert!(text(&o).starts_with("ok\n"), "{}", text(&o));
    tool.close();
}

#[tokio::test]
async fn input_keys_reach_the_running_process() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new().with_soft_timeout(Duration::from_secs(1));
    let ctx = ctx(dir.path());

    let o = call(&tool, &ctx, json!({"command": "sleep 100"})).await;
    assert_eq!(o.exit_code, Some(-1));
    let o = call(&tool, &ctx, json!({"command": "C-c", "is_input": true})).await;
    assert_eq!(o.exit_code, Some(130), "{}", text(&o));

    let o = call(
        &tool,
        &ctx,
        json!({"command": "read -r line; echo got:$line"}),
    )
    .await;
    assert_eq!(o.exit_code, Some(-1));
    let o = call(
        &tool,
        &ctx,
        json!({"command": "hello there", "is_input": true}),
    )
    .await;
    assert_eq!(o.exit_code, Some(0), "{}", text(&o));
    assert!(text(&o).contains("got:hello there"), "{}", text(&o));

    let idle = call(&tool, &ctx, json!({"command": "C-c", "is_input": true})).await;
    assert!(idle.is_error, "no command runs: {}", text(&idle));
    tool.close();
}

#[tokio::test]
async fn reset_starts_a_fresh_shell() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    call(&tool, &ctx, json!({"command": "export GONE=1; cd /"})).await;
    let old_pid = tool.session().unwrap().shell_pid();
    let o = call(
        &tool,
        &ctx,
        json!({"command": "echo ${GONE:-unset}; pwd", "reset": true}),
    )
    .await;
    let t = text(&o);
    assert!(t.contains("reset"), "{t}");
    assert!(t.contains("unset\n"), "{t}");
    assert!(
        t.contains(dir.path().canonicalize().unwrap().to_str().unwrap()),
        "{t}"
    );
    let new_pid = tool.session().unwrap().shell_pid();
    assert_ne!(old_pid, new_pid);
    eventually("the old shell to die", || is_gone(old_pid)).await;

    let bad = call(
        &tool,
        &ctx,
        json!({"command": "x", "reset": true, "is_input": true}),
    )
    .await;
    assert!(bad.is_error);
    tool.close();
}

#[tokio::test]
async fn long_output_is_truncated_and_saved_whole() {
    let dir = tempfile::tempdir().unwrap();
    let conversation = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new().with_max_output_chars(1000);
    let mut ctx = ctx(dir.path());
    ctx.conversation_dir = Some(conversation.path().to_path_buf());
    let o = call(&tool, &ctx, json!({"command": "seq 1 20000"})).await;
    let t = text(&o);
    assert!(t.starts_with("1\n2\n3\n"), "{}", &t[..100]);
    assert!(t.contains("characters of output omitted"), "{t}");
    assert!(
        t.contains("20000\n[The command completed with exit code 0.]"),
        "{t}"
    );
    assert!(t.len() < 2000, "{}", t.len());
    let save_dir = conversation.path().join("observations");
    assert_eq!(o.full_output_save_dir.as_deref(), save_dir.to_str());
    let files: Vec<_> = std::fs::read_dir(&save_dir).unwrap().collect();
    assert_eq!(files.len(), 1);
    let saved = std::fs::read_to_string(files[0].as_ref().unwrap().path()).unwrap();
    let expected: Vec<String> = (1..=20000).map(|i| i.to_string()).collect();
    assert_eq!(saved, expected.join("\n"));
    tool.close();
}

#[tokio::test]
async fn secrets_are_exported_but_never_shown() {
    const SECRET: &str = "s3cr3t-Value_xyz";
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let mut ctx = ctx(dir.path());
    ctx.env.insert("MY_TOKEN".into(), SECRET.into());
    ctx.masker = Masker::new([SECRET]);
    let session = tool.start_session(dir.path()).unwrap();
    let (_, mut viewer) = session.attach();

    let o = call(
        &tool,
        &ctx,
        json!({"command": "echo token=$MY_TOKEN; echo len=${#MY_TOKEN}"}),
    )
    .await;
    let t = text(&o);
    assert!(t.starts_with("token=<secret-hidden>\nlen=16\n"), "{t}");
    assert!(!serde_json::to_string(&o).unwrap().contains(SECRET));

    let seen = viewer_until(&mut viewer, Vec::new(), "viewer output", |s| {
        s.contains("len=16")
    })
    .await;
    let seen = String::from_utf8_lossy(&seen).into_owned();
    assert!(seen.contains("token=<secret-hidden>"), "{seen}");
    assert!(!seen.contains(SECRET), "{seen}");
    // The exported value reached the shell without being typed on the terminal.
    assert!(!String::from_utf8_lossy(&session.scrollback()).contains(SECRET));
    tool.close();
}

#[tokio::test]
async fn viewers_see_output_and_can_type() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    call(&tool, &ctx, json!({"command": "echo before-viewer"})).await;
    let session = tool.session().expect("started");
    let (scrollback, mut viewer) = session.attach();
    // The fan-out's pump thread may still be passing on the last output when the command's
    // result is back: it then arrives on the viewer, right after the scrollback.
    viewer_until(
        &mut viewer,
        scrollback,
        "earlier output in scrollback or viewer",
        |s| s.contains("before-viewer"),
    )
    .await;

    let o = call(&tool, &ctx, json!({"command": "echo from-agent"})).await;
    assert!(text(&o).starts_with("from-agent\n"));
    session.resize(30, 100).unwrap();
    session.write_input(b"echo typed-$((40+2))\r").unwrap();

    // Until the shell shows its prompt again after the typed command's output.
    let seen = viewer_until(&mut viewer, Vec::new(), "viewer output", |s| {
        s.rsplit_once("typed-42")
            .is_some_and(|(_, after)| shows_prompt(after))
    })
    .await;
    assert!(String::from_utf8_lossy(&seen).contains("from-agent"));

    // The agent's next command is not confused by what the person ran.
    let o = call(&tool, &ctx, json!({"command": "echo after; tput cols"})).await;
    assert!(text(&o).starts_with("after\n100\n"), "{}", text(&o));
    tool.close();
}

#[tokio::test]
async fn cancellation_kills_the_command_and_its_children() {
    let dir = tempfile::tempdir().unwrap();
    let tool = Arc::new(TerminalTool::new());
    let ctx = ctx(dir.path());
    let pid_file = dir.path().join("child.pid");
    let command = format!(
        "sh -c 'sleep 300 & echo $! > {}; sleep 301'",
        pid_file.display()
    );
    let running = {
        let (tool, ctx) = (Arc::clone(&tool), ctx.clone());
        tokio::spawn(async move { call(&tool, &ctx, json!({"command": command})).await })
    };
    eventually("the child's pid", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|s| s.trim().parse::<i32>().is_ok())
    })
    .await;
    let child: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(!is_gone(child));
    ctx.cancel.cancel();
    let o = running.await.unwrap();
    assert!(text(&o).contains("interrupted"), "{}", text(&o));
    eventually("the child to be killed", || is_gone(child)).await;

    let fresh = ToolContext {
        cancel: CancellationToken::new(),
        ..ctx
    };
    let o = call(&tool, &fresh, json!({"command": "echo alive"})).await;
    assert!(text(&o).starts_with("alive\n"), "{}", text(&o));
    tool.close();
}

#[tokio::test]
async fn close_kills_the_shell() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    call(&tool, &ctx, json!({"command": "true"})).await;
    let pid = tool.session().unwrap().shell_pid();
    tool.close();
    assert!(tool.session().is_none());
    eventually("the shell to die", || is_gone(pid)).await;
}

#[test]
fn malformed_arguments_name_the_field() {
    let tool = TerminalTool::new();
    let err = tool
        .parse_action(json!({"is_input": true}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("`command`"), "{err}");
    let err = tool
        .parse_action(json!({"command": "ls", "timeout": "later"}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("`timeout`"), "{err}");
    let err = tool
        .parse_action(json!({"command": "ls", "is_input": "maybe"}))
        .unwrap_err()
        .to_string();
    assert!(err.contains("`is_input`"), "{err}");
    assert!(tool.parse_action(json!("ls")).is_err());
    assert_eq!(tool.definition().name, "terminal");
}

#[tokio::test]
async fn echo_round_trips_are_fast() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    call(&tool, &ctx, json!({"command": "true"})).await;
    let start = Instant::now();
    for i in 0..100 {
        let o = call(&tool, &ctx, json!({"command": format!("echo {i}")})).await;
        assert!(text(&o).starts_with(&format!("{i}\n[The command completed")));
    }
    // Reported, not asserted: timing depends on the machine's load.
    eprintln!("echo round trip: {:?} on average", start.elapsed() / 100);
    tool.close();
}

#[tokio::test]
async fn long_heredoc_commands_arrive_intact() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    let body: String = (0..2000)
        .map(|i| format!("line {i}\twith tab and $dollar `tick` 'q' \"dq\"\n"))
        .collect();
    let command = format!("cat > big.txt <<'EOF'\n{body}EOF\nwc -l < big.txt");
    let start = Instant::now();
    let o = call(&tool, &ctx, json!({"command": command})).await;
    eprintln!("{} byte heredoc: {:?}", command.len(), start.elapsed());
    assert!(text(&o).starts_with("2000\n"), "{}", text(&o));
    let written = std::fs::read_to_string(dir.path().join("big.txt")).unwrap();
    assert_eq!(written, body);
    tool.close();
}

#[tokio::test]
async fn input_for_a_command_that_already_finished_is_not_run() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new().with_soft_timeout(Duration::from_secs(1));
    let ctx = ctx(dir.path());
    let session = tool.start_session(dir.path()).unwrap();
    let (_, mut viewer) = session.attach();
    let o = call(
        &tool,
        &ctx,
        json!({"command": "sleep 2; echo fin-$((1+1))"}),
    )
    .await;
    assert_eq!(o.exit_code, Some(-1));
    // Wait (through a viewer, which gets output after the tool does) for the prompt.
    viewer_until(&mut viewer, Vec::new(), "viewer output", |s| {
        s.rsplit_once("fin-2")
            .is_some_and(|(_, after)| shows_prompt(after))
    })
    .await;
    let o = call(
        &tool,
        &ctx,
        json!({"command": "touch should-not-exist", "is_input": true}),
    )
    .await;
    assert!(text(&o).contains("fin-2"), "{}", text(&o));
    assert!(text(&o).contains("not sent"), "{}", text(&o));
    assert_eq!(o.exit_code, Some(0));
    call(&tool, &ctx, json!({"command": "true"})).await;
    assert!(!dir.path().join("should-not-exist").exists());
    tool.close();
}

/// What a viewer of the agent's shell gets for one command: the command once, as plain typed
/// text. Readline used to show the typed (bracketed-paste) command in reverse video and then
/// redraw it, so the terminal pane showed each command twice, one copy in selection colours.
#[tokio::test]
async fn viewers_see_each_command_once_in_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    let session = tool.start_session(dir.path()).unwrap();
    let (_, mut viewer) = session.attach();
    let o = call(&tool, &ctx, json!({"command": "echo once-$((20+1))"})).await;
    assert!(text(&o).starts_with("once-21\n"), "{}", text(&o));
    let o = call(&tool, &ctx, json!({"command": "echo two-\\\n$((1+1))"})).await;
    assert!(text(&o).starts_with("two-2\n"), "{}", text(&o));

    // Until the prompt after the second command's output.
    let seen = viewer_until(&mut viewer, Vec::new(), "viewer output", |s| {
        s.rsplit_once("two-2")
            .is_some_and(|(_, after)| shows_prompt(after))
    })
    .await;
    let seen = String::from_utf8_lossy(&seen).into_owned();
    assert_eq!(seen.matches("echo once-$((20+1))").count(), 1, "{seen:?}");
    assert_eq!(seen.matches("echo two-\\").count(), 1, "{seen:?}");
    assert_eq!(seen.matches("$((1+1))").count(), 1, "{seen:?}");
    // No standout / reverse video (SGR 7) anywhere: nothing looks selected.
    assert!(!seen.contains("\x1b[7m"), "{seen:?}");
    tool.close();
}

/// A prompt the agent (or a person) sets by hand keeps the invisible reading marker at its end,
/// so the tool still types each command only once readline reads it, instead of waiting out
/// its time limit before every command.
#[tokio::test]
async fn a_prompt_set_by_hand_keeps_the_reading_marker() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    let session = tool.start_session(dir.path()).unwrap();
    let (_, mut viewer) = session.attach();
    let o = call(&tool, &ctx, json!({"command": "export PS1='>> '"})).await;
    assert_eq!(o.exit_code, Some(0), "{}", text(&o));
    let o = call(&tool, &ctx, json!({"command": "echo mark-$((3+4))"})).await;
    assert!(text(&o).starts_with("mark-7\n"), "{}", text(&o));
    let o = call(
        &tool,
        &ctx,
        json!({"command": "echo \"$PS1\" | tr -c '[:print:]' '?'"}),
    )
    .await;
    assert!(text(&o).starts_with(">> \\[\\e]6973;"), "{}", text(&o));

    // The viewer sees the prompt as set, then the marker (invisible in a terminal).
    let reading = |s: &str| {
        s.rsplit_once("mark-7")
            .is_some_and(|(_, after)| after.contains(">> \x1b]6973;") && after.ends_with(";R\x07"))
    };
    viewer_until(&mut viewer, Vec::new(), "viewer output", reading).await;
    tool.close();
}

/// `set -u` (as in `set -euo pipefail`) typed into the agent's shell does not stop the prompt
/// from reporting that a command finished: the tool does not take every later command for one
/// that still runs.
#[tokio::test]
async fn nounset_in_the_shell_still_reports_each_command() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    let o = call(&tool, &ctx, json!({"command": "set -u; unset PATH"})).await;
    assert_eq!(o.exit_code, Some(0), "{}", text(&o));
    let o = call(&tool, &ctx, json!({"command": "echo still-$((2*3))"})).await;
    assert_eq!(o.exit_code, Some(0), "{}", text(&o));
    assert!(text(&o).starts_with("still-6\n"), "{}", text(&o));
    tool.close();
}

/// A call whose interrupt came before the command was typed does not run it (it used to be
/// typed and then sent C-c, by which time a short command had done its work).
#[tokio::test]
async fn a_call_interrupted_before_typing_runs_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let live = ctx(dir.path());
    call(&tool, &live, json!({"command": "true"})).await;
    let stopped = ctx(dir.path());
    stopped.cancel.cancel();
    let o = call(&tool, &stopped, json!({"command": "touch made-anyway"})).await;
    assert!(o.is_error, "{}", text(&o));
    assert!(text(&o).contains("did not run"), "{}", text(&o));
    let o = call(&tool, &live, json!({"command": "echo next"})).await;
    assert!(text(&o).starts_with("next\n"), "{}", text(&o));
    assert!(!dir.path().join("made-anyway").exists());
    tool.close();
}

/// A person types (or pastes) into the agent's shell while the program in it does not read its
/// input: what waits is bounded, a viewer waits for room instead of queueing more, and once
/// the program ends the shell takes it all and the viewer may type again.
#[tokio::test]
async fn input_a_program_does_not_read_is_bounded_and_a_viewer_waits_for_room() {
    use tandem_tools::terminal::INPUT_CAP;
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new().with_soft_timeout(Duration::from_secs(1));
    let ctx = ctx(dir.path());
    let session = tool.start_session(dir.path()).unwrap();
    let (_, mut viewer) = session.attach();
    // Through the tool, so it is typed once the shell is ready; `sleep` never reads stdin, and
    // `cat` takes what waited once it is gone.
    let o = call(
        &tool,
        &ctx,
        json!({"command": "echo sleeping-$((3*3)); sleep 6173; cat > /dev/null"}),
    )
    .await;
    assert_eq!(o.exit_code, Some(-1), "{}", text(&o));
    viewer_until(&mut viewer, Vec::new(), "the sleep", |s| {
        s.contains("sleeping-9")
    })
    .await;
    // Whole lines: the terminal holds complete lines until they are read (a line with no end
    // would be cut at the terminal's own buffer instead).
    let mut line = vec![b'x'; 1023];
    line.push(b'\n');
    let chunk = line.repeat(64);
    let mut typed = 0;
    // A viewer types until it has to wait for room.
    loop {
        let room = tokio::time::timeout(Duration::from_secs(2), session.input_room()).await;
        if room.is_err() {
            break;
        }
        session.write_input(&chunk).unwrap();
        typed += chunk.len();
        assert!(
            typed <= INPUT_CAP + 64 * 1024 + 64 * 1024,
            "{typed} bytes typed and the viewer never had to wait"
        );
    }
    assert!(session.queued_input() >= INPUT_CAP);
    assert!(session.queued_input() <= INPUT_CAP + chunk.len());
    // The program ends: the shell reads what waited, and there is room again.
    let sleeper = std::process::Command::new("pkill")
        .args(["-f", "sleep 6173"])
        .status()
        .unwrap();
    assert!(sleeper.success());
    tokio::time::timeout(Duration::from_secs(120), session.input_room())
        .await
        .expect("the shell never took the typed input after the program ended");
    tool.close();
}

/// Closing the agent's shell ends what it started as a closed terminal does: a job that
/// cleans up on SIGTERM or SIGHUP gets to, and one that ignores both is killed after the grace.
#[tokio::test]
async fn closing_the_shell_lets_jobs_clean_up_and_kills_the_ones_that_ignore_it() {
    let dir = tempfile::tempdir().unwrap();
    let tool = TerminalTool::new();
    let ctx = ctx(dir.path());
    let bye = dir.path().join("bye");
    let o = call(
        &tool,
        &ctx,
        json!({"command": format!(
            "bash -c 'trap \"echo graceful > {}; exit 0\" TERM HUP; sleep 6271 & wait' & \
             bash -c 'trap \"\" TERM HUP; exec sleep 6272' & echo started-$((2+2))",
            bye.display()
        )}),
    )
    .await;
    assert!(text(&o).contains("started-4"), "{}", text(&o));
    let running = |pattern: &str| {
        std::process::Command::new("pgrep")
            .args(["-f", pattern])
            .status()
            .unwrap()
            .success()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !(running("sleep 6271") && running("sleep 6272")) {
        assert!(
            std::time::Instant::now() < deadline,
            "the jobs never started"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tool.close();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while running("sleep 6272") || !bye.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "after the close: the stubborn job {} running, the clean-up {}",
            if running("sleep 6272") {
                "still"
            } else {
                "no longer"
            },
            if bye.exists() { "ran" } else { "never ran" }
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(std::fs::read_to_string(&bye).unwrap().trim(), "graceful");
    // The trapping job's own sleep is in the session too.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while running("sleep 6271") {
        assert!(
            std::time::Instant::now() < deadline,
            "a job's child outlived the close"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
