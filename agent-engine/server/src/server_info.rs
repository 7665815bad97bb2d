//! Health, readiness, server info and the tool list.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
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

/// The tools this server can give an agent: the names its catalog knows.
pub fn tool_names(state: &AppState) -> Vec<String> {
    state
        .config
        .tools
        .names()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

/// The home folder of the user the server runs as (`HOME`, else `USERPROFILE` on Windows).
fn home_dir() -> Option<String> {
    ["HOME", "USERPROFILE"]
        .iter()
        .filter_map(std::env::var_os)
        .map(|h| h.to_string_lossy().into_owned())
        .find(|h| std::path::Path::new(h).is_absolute())
}

/// `GET /server_info` and `/`. Open to all; the home folder only to a caller whose session
/// key is valid (or when the server has none), since it names the user the server runs as.
pub async fn info(State(state): State<AppState>, headers: HeaderMap) -> Json<ServerInfo> {
    let keyed = crate::auth::key_ok(
        &state.config.session_keys,
        crate::auth::header_key(&headers).as_deref(),
    );
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
        usable_tools: tool_names(&state),
        runtime_idle_timeout_seconds: Some(state.config.idle_ttl.as_secs()),
        conversation_runtime: "local".into(),
        available_conversation_runtimes: Vec::new(),
        capabilities: vec![
            "tandem_pty_socket_v1".into(),
            "tandem_workspace_files_v1".into(),
            "tandem_events_sse_v1".into(),
            "tandem_approve_edited_v1".into(),
            "tandem_browser_socket_v1".into(),
            "tandem_replay_v1".into(),
            "tandem_move_v1".into(),
            "tandem_budget_v1".into(),
            "tandem_run_queue_v1".into(),
            "openai_gateway_v1".into(),
        ],
        app_backend_ingress_url: None,
        max_foreground_terminal_timeout_seconds: None,
        docs: "/openapi.json".into(),
        redoc: "/openapi.json".into(),
        llm_model: default.map(|p| p.model.clone()),
        demo: default.is_some_and(tandem_host::demo::is_demo),
        home_dir: keyed.then(home_dir).flatten(),
        desktop: state.config.vnc_addr.is_some(),
    })
}

/// `GET /api/tools/`.
pub async fn tools(State(state): State<AppState>) -> Json<Vec<String>> {
    Json(tool_names(&state))
}
