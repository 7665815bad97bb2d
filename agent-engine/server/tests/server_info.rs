//! `GET /server_info`: open to all, the home folder only to a caller with the session key; the
//! demo LLM as the default profile shows as `demo`.

use crate::harness;

use harness::{KEY, TestServer};
use serde_json::Value;
use tandem_host::DemoLlm;

async fn info(t: &TestServer, key: Option<&str>) -> Value {
    let mut r = t.http.get(t.url("/server_info"));
    if let Some(k) = key {
        r = r.header("X-Session-API-Key", k);
    }
    let resp = r.send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    resp.json().await.unwrap()
}

#[tokio::test]
async fn the_home_folder_is_only_for_a_caller_with_the_key() {
    let t = TestServer::start().await;
    let home = std::env::var("HOME").unwrap();
    assert_eq!(info(&t, Some(KEY)).await["home_dir"], home.as_str());
    let open = info(&t, None).await;
    assert!(open.get("home_dir").is_none(), "{open}");
    assert!(open["usable_tools"].is_array(), "{open}");
    let wrong = info(&t, Some("not-the-key")).await;
    assert!(wrong.get("home_dir").is_none(), "{wrong}");
    assert_eq!(open["demo"], false);
    t.stop().await;
}

#[tokio::test]
async fn the_demo_llm_as_default_profile_is_demo_mode() {
    let demo = DemoLlm::start().unwrap();
    assert!(demo.base_url().starts_with("http://127.0.0.1:"));
    let config = demo.config().clone();
    let t = TestServer::start_with(|c| {
        c.profiles.insert("default".into(), config);
    })
    .await;
    let info = info(&t, Some(KEY)).await;
    assert_eq!(info["demo"], true, "{info}");
    assert_eq!(info["llm_model"], tandem_host::DEMO_MODEL);
    t.stop().await;
}

#[tokio::test]
async fn the_browser_tools_and_socket_are_advertised() {
    // The UI offers "Browser tools" and its Browser pane only where the server lists them.
    let t = TestServer::start().await;
    let open = info(&t, None).await;
    let listed = |field: &str, name: &str| {
        open[field]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == name))
    };
    assert!(listed("usable_tools", "browser_tool_set"), "{open}");
    assert!(listed("usable_tools", "browser_request_handoff"), "{open}");
    assert!(listed("capabilities", "tandem_browser_socket_v1"), "{open}");
    assert!(listed("capabilities", "tandem_replay_v1"), "{open}");
    t.stop().await;
}
