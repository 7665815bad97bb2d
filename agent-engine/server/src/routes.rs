//! The route table: every endpoint once, with its method, path, authentication and summary.
//! The axum router and the OpenAPI document (`/openapi.json`, built with utoipa) both come
//! from it, so a route cannot exist undocumented, and tests enumerate it to check that every
//! protected route refuses a missing key.

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{MethodRouter, delete, get, patch, post, put};
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{
    ComponentsBuilder, InfoBuilder, OpenApi, OpenApiBuilder, Paths, Required, ResponseBuilder,
};

use crate::{
    AppState, bash, conversations, events, files, gateway, secrets, server_info, sockets, workspace,
};

/// How a route authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// Open (health, info, docs).
    None,
    /// `X-Session-API-Key` header; 401 without it.
    Key,
    /// WebSocket: header, query or first-frame auth; close 4001 without it.
    Socket,
    /// Bearer token or `X-Session-API-Key` (the OpenAI gateway); 401 without it.
    Bearer,
}

/// One documented route.
#[derive(Debug, Clone)]
pub struct RouteDoc {
    /// `GET`, `POST`, `PUT`, `PATCH`, `DELETE`.
    pub method: &'static str,
    /// Path with `{param}` placeholders.
    pub path: &'static str,
    /// How it authenticates.
    pub auth: Auth,
    /// OpenAPI tag.
    pub tag: &'static str,
    /// What it does, with its body and reply types.
    pub summary: &'static str,
    /// Beyond upstream's API (a Tandem addition).
    pub tandem: bool,
}

type Entry = (RouteDoc, MethodRouter<AppState>);

fn r(
    method: &'static str,
    path: &'static str,
    auth: Auth,
    tag: &'static str,
    summary: &'static str,
    tandem: bool,
    h: MethodRouter<AppState>,
) -> Entry {
    (
        RouteDoc {
            method,
            path,
            auth,
            tag,
            summary,
            tandem,
        },
        h,
    )
}

const C: &str = "/api/conversations/{conversation_id}";

fn table(upload_limit: usize) -> Vec<Entry> {
    use Auth::{Bearer, Key, None as Open, Socket};
    let upload = |h: MethodRouter<AppState>| h.layer(DefaultBodyLimit::max(upload_limit));
    vec![
        r(
            "GET",
            "/",
            Open,
            "server",
            "Server info (same as /server_info).",
            false,
            get(server_info::info),
        ),
        r(
            "GET",
            "/alive",
            Open,
            "server",
            "Liveness: {\"status\":\"ok\"}.",
            false,
            get(server_info::alive),
        ),
        r(
            "GET",
            "/health",
            Open,
            "server",
            "Health: {\"status\":\"ok\"}.",
            false,
            get(server_info::alive),
        ),
        r(
            "GET",
            "/ready",
            Open,
            "server",
            "Readiness: {\"status\":\"ready\"}.",
            false,
            get(server_info::ready),
        ),
        r(
            "GET",
            "/server_info",
            Open,
            "server",
            "ServerInfo: versions, tools, capabilities.",
            false,
            get(server_info::info),
        ),
        r(
            "GET",
            "/openapi.json",
            Open,
            "server",
            "This OpenAPI document.",
            false,
            get(crate::openapi_json),
        ),
        r(
            "GET",
            "/api/tools/",
            Key,
            "server",
            "Tool names this server can give an agent.",
            false,
            get(server_info::tools),
        ),
        r(
            "POST",
            "/api/conversations",
            Key,
            "conversations",
            "Body StartConversationRequest; 201 ConversationInfo when created, 200 when conversation_id exists; 422 naming the field; 429 at capacity with a running initial message.",
            false,
            post(conversations::create),
        ),
        r(
            "GET",
            "/api/conversations",
            Key,
            "conversations",
            "Batch get: ?ids=a&ids=b (≤100) → [ConversationInfo|null].",
            false,
            get(conversations::batch),
        ),
        r(
            "GET",
            "/api/conversations/search",
            Key,
            "conversations",
            "ConversationPage; ?page_id, limit (1..100), status, sort_order=CREATED_AT|CREATED_AT_DESC|UPDATED_AT|UPDATED_AT_DESC.",
            false,
            get(conversations::search),
        ),
        r(
            "GET",
            "/api/conversations/count",
            Key,
            "conversations",
            "Number of conversations; ?status.",
            false,
            get(conversations::count),
        ),
        r(
            "GET",
            C,
            Key,
            "conversations",
            "ConversationInfo, 404 when unknown.",
            false,
            get(conversations::get_one),
        ),
        r(
            "PATCH",
            C,
            Key,
            "conversations",
            "Body UpdateConversationRequest {title?, tags?} → SuccessResponse.",
            false,
            patch(conversations::update),
        ),
        r(
            "DELETE",
            C,
            Key,
            "conversations",
            "Closes and deletes the conversation's directory → SuccessResponse.",
            false,
            delete(conversations::delete),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/run",
            Key,
            "conversations",
            "Starts the loop (approves pending actions); 409 while running, 429 at capacity.",
            false,
            post(conversations::run),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/pause",
            Key,
            "conversations",
            "Stops after the in-flight step.",
            false,
            post(conversations::pause),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/interrupt",
            Key,
            "conversations",
            "Cancels the in-flight LLM call or tool now.",
            false,
            post(conversations::interrupt),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/confirmation_policy",
            Key,
            "conversations",
            "Body SetConfirmationPolicyRequest {policy}.",
            false,
            post(conversations::confirmation_policy),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/security_analyzer",
            Key,
            "conversations",
            "Body SetSecurityAnalyzerRequest {security_analyzer|null}.",
            false,
            post(conversations::security_analyzer),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/secrets",
            Key,
            "conversations",
            "Body UpdateSecretsRequest {secrets: {NAME: value|StaticSecret|LookupSecret}}.",
            false,
            post(conversations::secrets),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/ask_agent",
            Key,
            "conversations",
            "Body AskAgentRequest {question} → AgentResponse {response}; a side LLM call, the conversation is unchanged; 502 when the model answers with a tool call only.",
            false,
            post(conversations::ask_agent),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/condense",
            Key,
            "conversations",
            "Requests condensation of the history.",
            false,
            post(conversations::condense),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/agent_final_response",
            Key,
            "conversations",
            "AgentResponse: the last finish message or agent text.",
            false,
            get(conversations::agent_final_response),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/events/search",
            Key,
            "events",
            "EventPage; ?page_id (id of the page's first event), limit (1..100), kind, source, body, timestamp__gte, timestamp__lt, sort_order=TIMESTAMP|TIMESTAMP_DESC.",
            false,
            get(events::search),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/events/count",
            Key,
            "events",
            "Number of events matching the search filters.",
            false,
            get(events::count),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/events/stream",
            Key,
            "events",
            "Server-Sent Events: the event socket's frames (full_state, ?resend_mode=all|since&after_timestamp replay, live events, full_state after each run).",
            true,
            get(events::stream),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/events/{event_id}",
            Key,
            "events",
            "One event, 404 when unknown.",
            false,
            get(events::get_one),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/events",
            Key,
            "events",
            "Batch get: a JSON list of event ids in the GET body → [Event|null].",
            false,
            get(events::batch),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/events",
            Key,
            "events",
            "Body SendMessageRequest {role:user, content, run} → SuccessResponse.",
            false,
            post(events::post),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/events/respond_to_confirmation",
            Key,
            "events",
            "Body ConfirmationResponseRequest {accept, reason}.",
            false,
            post(events::respond),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/bash/start_bash_command",
            Key,
            "bash",
            "Body ExecuteBashRequest → BashCommand at once (in the conversation's workspace).",
            false,
            post(bash::conv_start),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/bash/execute_bash_command",
            Key,
            "bash",
            "Body ExecuteBashRequest → BashOutput when done.",
            false,
            post(bash::conv_execute),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/bash/bash_events/search",
            Key,
            "bash",
            "BashEventPage; ?kind__eq, command_id__eq, sort_order, limit, page_id.",
            false,
            get(bash::conv_search),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/bash/bash_events/{event_id}",
            Key,
            "bash",
            "One bash event.",
            false,
            get(bash::conv_get_event),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/bash/bash_commands/{command_id}/stop",
            Key,
            "bash",
            "Kills a running command.",
            false,
            post(bash::conv_stop),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/file/upload",
            Key,
            "files",
            "Multipart field `file`, ?path= inside the workspace → FileUploadResponse; 403 outside.",
            false,
            upload(post(files::conv_upload)),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/file/download",
            Key,
            "files",
            "Raw bytes of ?path= inside the workspace; 403 outside.",
            false,
            get(files::conv_download),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/workspace/tree",
            Key,
            "workspace",
            "WorkspaceTree of the workspace (or ?path= below it).",
            true,
            get(workspace::tree),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/workspace/file",
            Key,
            "workspace",
            "WorkspaceFile for ?path= (text, size, mtime_ms, binary); 422 over 10 MB; 403 outside.",
            true,
            get(workspace::read_file),
        ),
        r(
            "PUT",
            "/api/conversations/{conversation_id}/workspace/file",
            Key,
            "workspace",
            "Body WriteWorkspaceFileRequest {path, content, expected_mtime_ms?}; 409 when the file changed since.",
            true,
            put(workspace::write_file),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/workspace/diff",
            Key,
            "workspace",
            "WorkspaceDiff: unified diffs of everything changed since the conversation started.",
            true,
            get(workspace::workspace_diff),
        ),
        r(
            "POST",
            "/api/bash/start_bash_command",
            Key,
            "bash",
            "Body ExecuteBashRequest → BashCommand at once.",
            false,
            post(bash::start),
        ),
        r(
            "POST",
            "/api/bash/execute_bash_command",
            Key,
            "bash",
            "Body ExecuteBashRequest → BashOutput when done.",
            false,
            post(bash::execute),
        ),
        r(
            "GET",
            "/api/bash/bash_events/search",
            Key,
            "bash",
            "BashEventPage; ?kind__eq, command_id__eq, sort_order, limit, page_id.",
            false,
            get(bash::search),
        ),
        r(
            "GET",
            "/api/bash/bash_events/",
            Key,
            "bash",
            "Batch get: ?ids= → [BashEvent|null].",
            false,
            get(bash::batch),
        ),
        r(
            "GET",
            "/api/bash/bash_events/{event_id}",
            Key,
            "bash",
            "One bash event.",
            false,
            get(bash::get_event),
        ),
        r(
            "DELETE",
            "/api/bash/bash_events",
            Key,
            "bash",
            "Forgets every bash event.",
            false,
            delete(bash::clear),
        ),
        r(
            "POST",
            "/api/bash/bash_commands/{command_id}/stop",
            Key,
            "bash",
            "Kills a running command.",
            false,
            post(bash::stop),
        ),
        r(
            "POST",
            "/api/file/upload",
            Key,
            "files",
            "Multipart field `file`, ?path= absolute → FileUploadResponse.",
            false,
            upload(post(files::upload)),
        ),
        r(
            "GET",
            "/api/file/download",
            Key,
            "files",
            "Raw bytes of ?path= (absolute).",
            false,
            get(files::download),
        ),
        r(
            "PUT",
            "/api/settings/secrets",
            Key,
            "secrets",
            "Body CreateSecretRequest {name, value, description?} → SecretInfo.",
            false,
            put(secrets::put),
        ),
        r(
            "GET",
            "/api/settings/secrets",
            Key,
            "secrets",
            "SecretList: names and descriptions, never values.",
            false,
            get(secrets::list),
        ),
        r(
            "GET",
            "/api/settings/secrets/{name}",
            Key,
            "secrets",
            "The secret's value as text/plain.",
            false,
            get(secrets::get_value),
        ),
        r(
            "DELETE",
            "/api/settings/secrets/{name}",
            Key,
            "secrets",
            "DeletedResponse.",
            false,
            delete(secrets::delete),
        ),
        r(
            "GET",
            "/sockets/events/{conversation_id}",
            Socket,
            "sockets",
            "WebSocket: first-frame auth {type:auth, session_api_key}; full_state, ?resend_mode=all|since replay, live events, full_state after each run; client Message frames run the agent; close 4001/4004.",
            false,
            get(sockets::events::handler),
        ),
        r(
            "GET",
            "/sockets/bash-events",
            Socket,
            "sockets",
            "WebSocket: BashCommand/BashOutput frames; client ExecuteBashRequest frames start commands.",
            false,
            get(sockets::bash::handler),
        ),
        r(
            "GET",
            "/sockets/pty/{conversation_id}",
            Socket,
            "sockets",
            "WebSocket: the agent's terminal (or ?mode=shell a new shell in the workspace); binary output frames; client {type:input,data} and {type:resize,rows,cols}.",
            true,
            get(sockets::pty::handler),
        ),
        r(
            "GET",
            "/v1/models",
            Bearer,
            "gateway",
            "ModelList: LLM profiles as tandem_{profile}.",
            true,
            get(gateway::models),
        ),
        r(
            "POST",
            "/v1/chat/completions",
            Bearer,
            "gateway",
            "ChatCompletionRequest → ChatCompletionResponse (or chat.completion.chunk SSE with stream:true); header X-OpenHands-ServerConversation-ID appends to a conversation.",
            true,
            post(gateway::chat),
        ),
    ]
}

/// Every route, documented.
pub fn route_docs() -> Vec<RouteDoc> {
    table(0).into_iter().map(|(d, _)| d).collect()
}

/// The router of every route (without state and middleware).
pub fn router(upload_limit: usize) -> Router<AppState> {
    table(upload_limit)
        .into_iter()
        .fold(Router::new(), |router, (doc, h)| router.route(doc.path, h))
}

fn method(m: &str) -> HttpMethod {
    match m {
        "POST" => HttpMethod::Post,
        "PUT" => HttpMethod::Put,
        "PATCH" => HttpMethod::Patch,
        "DELETE" => HttpMethod::Delete,
        _ => HttpMethod::Get,
    }
}

/// The OpenAPI document of [`route_docs`].
pub fn openapi() -> OpenApi {
    let mut paths = Paths::new();
    for d in route_docs() {
        let mut op = OperationBuilder::new()
            .summary(Some(
                d.summary
                    .split(';')
                    .next()
                    .unwrap_or(d.summary)
                    .trim_end_matches('.'),
            ))
            .description(Some(if d.tandem {
                format!("{} (Tandem addition.)", d.summary)
            } else {
                d.summary.to_owned()
            }))
            .operation_id(Some(format!(
                "{}_{}",
                d.method.to_lowercase(),
                d.path
                    .trim_matches('/')
                    .replace(['/', '{', '}', '-', '.'], "_")
            )))
            .tag(d.tag)
            .response("200", ResponseBuilder::new().description("Success"));
        for seg in d.path.split('/').filter(|s| s.starts_with('{')) {
            let name = seg.trim_matches(|c| c == '{' || c == '}');
            op = op.parameter(
                ParameterBuilder::new()
                    .name(name)
                    .parameter_in(ParameterIn::Path)
                    .required(Required::True),
            );
        }
        match d.auth {
            Auth::Key => {
                op = op
                    .security(SecurityRequirement::new(
                        "session_key",
                        Vec::<String>::new(),
                    ))
                    .response(
                        "401",
                        ResponseBuilder::new().description("{\"detail\":\"Unauthorized\"}"),
                    )
            }
            Auth::Bearer => {
                op = op
                    .security(SecurityRequirement::new("bearer", Vec::<String>::new()))
                    .response(
                        "401",
                        ResponseBuilder::new().description("OpenAI-shaped error"),
                    )
            }
            Auth::Socket => {
                op = op.response(
                    "101",
                    ResponseBuilder::new().description("WebSocket; close 4001 without a valid key"),
                )
            }
            Auth::None => {}
        }
        paths.add_path_operation(d.path, vec![method(d.method)], op);
    }
    let components = ComponentsBuilder::new()
        .security_scheme(
            "session_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::new("X-Session-API-Key"))),
        )
        .security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        )
        .build();
    OpenApiBuilder::new()
        .info(InfoBuilder::new().title("Tandem Agent Server").version(env!("CARGO_PKG_VERSION")).description(Some(
            "OpenHands agent-server 1.58 compatible REST and WebSocket API, plus Tandem's PTY socket, workspace endpoints, SSE event stream and OpenAI-compatible gateway.",
        )))
        .paths(paths)
        .components(Some(components))
        .build()
}
