//! Health, readiness, server info and the tool list.

use axum::Json;
use axum::extract::State;
use tandem_protocol::{ServerInfo, StatusResponse};

use crate::AppState;

/// `GET /alive`, `/health`.
pub async fn alive() -> Json<StatusResponse> {
    Json(StatusResponse {
        status: "ok".into(),
    })
}

/// `GET /ready`.
pub async fn ready() -> Json<StatusResponse> {
    Json(StatusResponse {
        status: "ready".into(),
    })
}

/// The tools this server can give an agent.
pub fn tool_names() -> Vec<String> {
    tandem_tools::tool_names()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// The model name the scripted demo LLM answers to.
pub const DEMO_MODEL: &str = "openai/tandem-demo";

/// `GET /server_info` and `/`.
pub async fn info(State(state): State<AppState>) -> Json<ServerInfo> {
    let version = env!("CARGO_PKG_VERSION").to_owned();
    let default = state.config.profiles.get("default");
    Json(ServerInfo {
        uptime: state.started.elapsed().as_secs_f64().floor(),
        idle_time: state.idle_secs(),
        title: "Tandem Agent Server".into(),
        version: version.clone(),
        sdk_version: version.clone(),
        tools_version: version.clone(),
        workspace_version: version,
        build_git_sha: option_env!("TANDEM_GIT_SHA").unwrap_or("unknown").into(),
        build_git_ref: option_env!("TANDEM_GIT_REF").unwrap_or("unknown").into(),
        python_version: format!("n/a (Rust, tandem-server {})", env!("CARGO_PKG_VERSION")),
        usable_tools: tool_names(),
        runtime_idle_timeout_seconds: Some(state.config.idle_ttl.as_secs()),
        conversation_runtime: "local".into(),
        available_conversation_runtimes: Vec::new(),
        capabilities: vec![
            "tandem_pty_socket_v1".into(),
            "tandem_workspace_files_v1".into(),
            "tandem_events_sse_v1".into(),
            "tandem_approve_edited_v1".into(),
            "openai_gateway_v1".into(),
        ],
        app_backend_ingress_url: None,
        max_foreground_terminal_timeout_seconds: None,
        docs: "/openapi.json".into(),
        redoc: "/openapi.json".into(),
        llm_model: default.map(|p| p.model.clone()),
        demo: default.is_some_and(|p| p.model == DEMO_MODEL),
    })
}

/// `GET /api/tools/`.
pub async fn tools() -> Json<Vec<String>> {
    Json(tool_names())
}
