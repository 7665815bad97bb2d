//! Completion logs: one masked JSON file per call, never the key or a secret.

use serde_json::Value;
use tandem_llm::completion_log::{log_completions, log_completions_folder};
use tandem_llm::{Llm, LlmRequest, LoggingLlm, OpenAiChat};
use tandem_protocol::{LlmConfig, Message};
use tandem_testkit::{ScriptedLlmServer, Step};
use tokio_util::sync::CancellationToken;

const KEY: &str = "sk-live-very-secret-key";
const SECRET: &str = "hunter2-\"quoted\"\\value";

fn logs(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn every_call_is_logged_masked() {
    let server = ScriptedLlmServer::start(vec![
        Step::text(format!("the key is {KEY} and the secret {SECRET}")),
        Step::error(400, format!("bad request mentioning {KEY}")),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("completions");
    let config = LlmConfig {
        api_key: Some(KEY.into()),
        ..server.llm_config("openai/gpt-4o")
    };
    let llm = LoggingLlm::new(OpenAiChat::new(config).unwrap(), &folder)
        .with_secrets([SECRET])
        .with_masker(|t| t.replace("project-x", "<masked>"));

    let request = LlmRequest {
        messages: vec![Message::user(format!(
            "use {SECRET} for project-x with {KEY}"
        ))],
        ..LlmRequest::default()
    };
    let reply = llm
        .completion(request.clone(), CancellationToken::new())
        .await
        .unwrap();
    assert!(
        reply.message.text().contains(KEY),
        "the caller still gets the real reply"
    );
    assert!(
        llm.completion(request, CancellationToken::new())
            .await
            .is_err()
    );

    let files = logs(&folder);
    assert_eq!(files.len(), 2, "{files:?}");
    for (name, text) in &files {
        assert!(name.ends_with(".json") && !name.starts_with('.'), "{name}");
        assert!(!text.contains(KEY), "{text}");
        assert!(!text.contains("hunter2"), "{text}");
        assert!(!text.contains("project-x"), "{text}");
    }
    let ok: Value = serde_json::from_str(&files[0].1).unwrap();
    assert_eq!(ok["model"], "openai/gpt-4o");
    assert_eq!(
        ok["request"]["messages"][0]["content"][0]["text"],
        "use ********** for <masked> with **********"
    );
    assert_eq!(
        ok["response"]["message"]["content"][0]["text"],
        "the key is ********** and the secret **********"
    );
    assert!(ok["response"]["usage"]["prompt_tokens"].as_u64().unwrap() > 0);
    assert!(ok["cost"].as_f64().unwrap() > 0.0);
    let failed: Value = serde_json::from_str(&files[1].1).unwrap();
    assert_eq!(failed["error"]["code"], "LLMBadRequestError");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("**********")
    );
}

#[test]
fn configuration_switch_and_folder() {
    let mut config = LlmConfig::new("openai/gpt-4o");
    assert!(!log_completions(&config));
    assert_eq!(
        log_completions_folder(&config),
        std::path::PathBuf::from("logs/completions")
    );
    let json = serde_json::json!({"model": "openai/gpt-4o", "log_completions": true, "log_completions_folder": "/tmp/x"});
    config = serde_json::from_value(json.clone()).unwrap();
    assert!(log_completions(&config));
    assert_eq!(
        log_completions_folder(&config),
        std::path::PathBuf::from("/tmp/x")
    );
    // The fields stay upstream's on the wire.
    let back = serde_json::to_value(&config).unwrap();
    assert_eq!(back["log_completions"], true);
    assert_eq!(back["log_completions_folder"], "/tmp/x");

    let client = OpenAiChat::new(config).unwrap();
    let wrapped = LoggingLlm::from_config(client).unwrap();
    assert_eq!(wrapped.folder(), std::path::Path::new("/tmp/x"));
    assert!(
        LoggingLlm::from_config(OpenAiChat::new(LlmConfig::new("openai/gpt-4o")).unwrap()).is_err()
    );
}
