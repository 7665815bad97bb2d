//! The real-wire check: the official `openai` and `anthropic` Python packages (from the venv
//! `scripts/setup.sh` makes) parse every reply of the scripted server — Chat, Responses and
//! Anthropic Messages, JSON and SSE, thinking, reasoning, tool calls and errors — through the
//! SDKs and strictly against their pydantic models. Fails (never skips) when the venv is
//! missing.

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;
use tandem_testkit::{
    ErrorReply, Reply, ScriptedLlmServer, Step, ThinkingSpec, ToolCallSpec, UsageSpec,
};

/// The venv's python: `$TANDEM_PY_VENV` or `~/.cache/tandem/py-venv`.
fn venv_python() -> PathBuf {
    let venv = std::env::var_os("TANDEM_PY_VENV")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/tandem/py-venv"))
        })
        .expect("neither TANDEM_PY_VENV nor HOME is set");
    let python = venv.join("bin/python");
    assert!(
        python.exists(),
        "the Python venv with the openai and anthropic packages is missing at {}: run \
         scripts/setup.sh (or set TANDEM_PY_VENV to a venv that has them)",
        venv.display()
    );
    python
}

fn call(id: &str, arguments: serde_json::Value) -> ToolCallSpec {
    ToolCallSpec {
        id: Some(id.into()),
        ..ToolCallSpec::new("terminal", arguments)
    }
}

fn script() -> Vec<Step> {
    vec![
        // 1. chat json
        Step::Reply(Reply {
            text: Some("Let me look.".into()),
            reasoning: Some("checking".into()),
            tool_calls: vec![call("call_c1", json!({"command": "ls"}))],
            usage: Some(UsageSpec {
                prompt_tokens: 11,
                completion_tokens: 4,
                cached_tokens: 2,
                reasoning_tokens: 1,
            }),
            ..Reply::default()
        }),
        // 2. chat stream
        Step::Reply(Reply {
            text: Some("Streaming chat text that is long enough to be split.".into()),
            tool_calls: vec![call("call_c2", json!({"command": "pwd"}))],
            ..Reply::default()
        }),
        // 3. responses json
        Step::Reply(Reply {
            text: Some("Responses text.".into()),
            reasoning: Some("Plan: list files.".into()),
            tool_calls: vec![call("call_r1", json!({"command": "ls"}))],
            usage: Some(UsageSpec {
                prompt_tokens: 30,
                completion_tokens: 9,
                cached_tokens: 7,
                reasoning_tokens: 3,
            }),
            ..Reply::default()
        }),
        // 4. responses stream (SDK helper)
        Step::Reply(Reply {
            text: Some("Streamed responses text, in pieces.".into()),
            reasoning: Some("A longer reasoning summary to split.".into()),
            tool_calls: vec![call("call_r2", json!({"command": "ls -la"}))],
            ..Reply::default()
        }),
        // 5. responses stream (strict)
        Step::Reply(Reply {
            text: Some("Strict.".into()),
            reasoning: Some("why".into()),
            tool_calls: vec![call("call_r3", json!({}))],
            ..Reply::default()
        }),
        // 6. messages json
        Step::Reply(Reply {
            text: Some("I will list the files.".into()),
            thinking: vec![ThinkingSpec::signed("The user wants files.", "sig-json")],
            tool_calls: vec![call("toolu_a1", json!({"command": "ls"}))],
            usage: Some(UsageSpec {
                prompt_tokens: 20,
                completion_tokens: 8,
                cached_tokens: 5,
                reasoning_tokens: 0,
            }),
            cache_write_tokens: 9,
            ..Reply::default()
        }),
        // 7. messages stream (SDK helper)
        Step::Reply(Reply {
            text: Some("Streamed Claude text, in several pieces.".into()),
            thinking: vec![
                ThinkingSpec::signed("Thinking it over step by step.", "sig-stream"),
                ThinkingSpec::redacted("EnCrYpTeD=="),
            ],
            tool_calls: vec![call("toolu_a2", json!({"command": "cat README.md"}))],
            ..Reply::default()
        }),
        // 8. messages stream (strict)
        Step::Reply(Reply {
            text: Some("Strict Claude.".into()),
            reasoning: Some("brief".into()),
            tool_calls: vec![call("toolu_a3", json!({"command": "true"}))],
            ..Reply::default()
        }),
        // 9. errors
        Step::rate_limited("3"),
        Step::Error(ErrorReply {
            status: 529,
            body: Some(json!("Overloaded")),
            ..ErrorReply::default()
        }),
        Step::rate_limited("1"),
    ]
}

#[test]
fn official_python_sdks_parse_every_reply() {
    let python = venv_python();
    let server = ScriptedLlmServer::start(script());
    let checker = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/python/sdk_wire_check.py");
    let output = Command::new(&python)
        .arg(&checker)
        .env("BASE", server.anthropic_base_url())
        .env("NO_PROXY", "127.0.0.1")
        .output()
        .expect("cannot run the venv's python");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the Python SDK check failed\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    for check in [
        "chat json",
        "chat stream",
        "responses json",
        "responses stream",
        "responses stream strict",
        "messages json",
        "messages stream",
        "messages stream strict",
        "errors",
    ] {
        assert!(
            stdout.contains(&format!("ok {check}\n")),
            "missing `{check}`:\n{stdout}"
        );
    }
    assert_eq!(server.remaining_steps(), 0);
    assert!(!server.exhausted());
    assert_eq!(server.violations(), Vec::<String>::new());
}
