//! The official `openai` Python client uses Tandem's `/v1` gateway: `/v1/models`, a chat
//! completion, a streamed one, and a refused wrong key (`tests/compat/openai_client.py`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use tandem_e2e::{KEY, TandemServer, run_python};
use tandem_testkit::{Script, ScriptedLlmServer, Step};

#[test]
fn openai_client_uses_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let llm = ScriptedLlmServer::start(
        Script::new([
            Step::text("gateway reply one"),
            Step::text("gateway reply two"),
        ])
        .with_no_tools_text("Gateway"),
    );
    let env = [
        ("LLM_MODEL", "openai/fake".to_owned()),
        ("LLM_BASE_URL", llm.base_url()),
        ("LLM_API_KEY", "x".to_owned()),
    ];
    let server =
        TandemServer::start(&dir.path().join("home"), &env).unwrap_or_else(|e| panic!("{e:#}"));
    let out = run_python(
        "openai_client.py",
        &[&server.url, KEY],
        &[],
        Duration::from_secs(90),
    )
    .unwrap_or_else(|e| panic!("the openai client failed against the gateway:\n{e:#}"));
    assert!(out.contains("ALL OK"), "{out}");
}
