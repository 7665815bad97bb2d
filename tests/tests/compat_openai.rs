//! The official `openai` Python client uses Tandem's `/v1` gateway against `tandem serve`
//! (`tests/compat/openai_client.py`): a profile saved over `/api/profiles` as upstream clients
//! save one (its key never answered), `/v1/models` listing `openhands_<profile>`, chat
//! completions (plain, continued by the returned `X-OpenHands-ServerConversation-ID`, streamed
//! with a final usage chunk), `client.responses.create` (plain, continued by
//! `previous_response_id`, streamed), and OpenAI-shaped errors.

use std::time::Duration;

use tandem_e2e::{KEY, TandemServer, run_python};
use tandem_testkit::{Script, ScriptedLlmServer, Step};

#[test]
fn openai_client_uses_the_gateway() {
    let dir = tempfile::tempdir().unwrap();
    let llm = ScriptedLlmServer::start(
        Script::new(
            ["one", "two", "three", "four", "five", "six"]
                .map(|n| Step::text(format!("gateway reply {n}"))),
        )
        .with_no_tools_text("Gateway"),
    );
    let env = [
        ("LLM_MODEL", "openai/fake".to_owned()),
        ("LLM_BASE_URL", llm.base_url()),
        ("LLM_API_KEY", "x".to_owned()),
    ];
    let home = dir.path().join("home");
    let server = TandemServer::start(&home, &env).unwrap_or_else(|e| panic!("{e:#}"));
    let out = run_python(
        "openai_client.py",
        &[&server.url, KEY, &llm.base_url()],
        &[],
        Duration::from_secs(180),
    )
    .unwrap_or_else(|e| panic!("the openai client failed against the gateway:\n{e:#}"));
    assert!(out.contains("ALL OK"), "{out}");
    // The profile's key reached the LLM, and is not on disk in the clear.
    let keyed = llm.captured().iter().any(|r| {
        r.headers.get("authorization").map(String::as_str)
            == Some("Bearer sk-profile-never-returned")
    });
    assert!(keyed, "the work profile's requests carry its key");
    let on_disk = std::fs::read_to_string(home.join("profiles/work.json")).unwrap();
    assert!(!on_disk.contains("sk-profile-never-returned"), "{on_disk}");
}
