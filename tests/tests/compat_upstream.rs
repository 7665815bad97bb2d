//! Our `RemoteWorkspace` / `RemoteConversation` drive the upstream `openhands-agent-server`
//! 1.58.2 (from PyPI, in the venv `scripts/setup.sh` prepares) through a run with a terminal
//! command and finish, with the scripted LLM as the model.

use std::time::Duration;

use serde_json::json;
use tandem_e2e::{KEY, UpstreamServer};
use tandem_protocol::{AgentSpec, Event, ExecutionStatus, LlmConfig, Message, Observation};
use tandem_sdk::ConversationClient;
use tandem_sdk::remote::{RemoteConversationOptions, RemoteWorkspace};
use tandem_testkit::{Script, ScriptedLlmServer, Step};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_workspace_drives_the_upstream_server() {
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir.path().to_owned();
    let server = tokio::task::spawn_blocking(move || UpstreamServer::start(&run_dir))
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("{e:#}"));
    let project = dir.path().join("project");

    let llm = ScriptedLlmServer::start(
        Script::new([
            // Upstream's terminal tool now and then answers a fresh session's first command
            // with an empty observation, under load; the second command sees the same shell
            // once it is settled. What is under test is how we read upstream's events.
            Step::tool_call(
                "terminal",
                json!({"command": "echo hello-from-upstream", "security_risk": "LOW"}),
            ),
            Step::tool_call(
                "terminal",
                json!({"command": "echo hello-from-upstream-again", "security_risk": "LOW"}),
            ),
            Step::tool_call("finish", json!({"message": "all done"})),
        ])
        .with_no_tools_text("Upstream compat"),
    );
    let mut config = LlmConfig::new("openai/fake");
    config.base_url = Some(llm.base_url());
    config.api_key = Some("x".into());
    config.num_retries = 0;

    let ws = RemoteWorkspace::connect(&server.url, Some(KEY.into()), project.to_string_lossy())
        .await
        .unwrap();
    assert!(
        ws.server_info().get("version").is_some(),
        "{}",
        ws.server_info()
    );

    // Workspace helpers: a command, and a file round trip.
    let out = ws
        .execute_command("echo ws-$((40+2)) && pwd", None, Duration::from_secs(30))
        .await
        .unwrap();
    assert_eq!(out.exit_code, 0, "{out:?}");
    assert!(out.stdout.contains("ws-42"), "{out:?}");
    let remote_file = project.join("up.txt").to_string_lossy().into_owned();
    assert_eq!(
        ws.upload_bytes(b"uploaded by tandem\n".to_vec(), &remote_file)
            .await
            .unwrap(),
        19
    );
    assert_eq!(
        ws.download_bytes(&remote_file).await.unwrap(),
        b"uploaded by tandem\n"
    );

    // A conversation: message, run to finish with a terminal step.
    let conv = ws
        .create_conversation(&RemoteConversationOptions::new(AgentSpec::default_for(
            config,
        )))
        .await
        .unwrap();
    conv.send_message(
        Message::user("say hello from the terminal, then finish"),
        false,
    )
    .await
    .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(90), conv.run_to_end())
        .await
        .expect("run within 90 s")
        .unwrap();
    assert_eq!(status, ExecutionStatus::Finished);
    let events = conv.events();
    let outputs: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Observation(o) => match &o.observation {
                Observation::Terminal(t) => {
                    Some(t.content.iter().filter_map(|c| c.as_text()).collect())
                }
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(outputs.len(), 2, "two terminal observations in {events:?}");
    assert!(
        outputs.iter().any(|t| t.contains("hello-from-upstream")),
        "{outputs:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Action(a) if a.tool_name == "finish"))
    );

    // The local copy equals the server's log: same ids, same order, no duplicate.
    let before = conv.events().len();
    assert_eq!(conv.sync_events().await.unwrap(), 0, "nothing was missing");
    assert_eq!(conv.events().len(), before);
    let ids: std::collections::HashSet<_> = events.iter().map(|e| e.id().to_owned()).collect();
    assert_eq!(ids.len(), events.len(), "no duplicate event");
    assert_eq!(
        conv.fetch_status().await.unwrap(),
        ExecutionStatus::Finished
    );
    assert_eq!(conv.agent_final_response().await.unwrap(), "all done");

    conv.delete().await.unwrap();
    let err = ws.attach(conv.id()).await.unwrap_err();
    assert_eq!(err.code(), "not_found", "{err}");
    drop(server);
}
