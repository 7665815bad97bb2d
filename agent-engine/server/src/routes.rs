//! The route table: every endpoint once, with its method, path, authentication, summary and
//! request and response bodies. The axum router and the OpenAPI document (`/openapi.json`,
//! built with utoipa, its body schemas derived from the `tandem-protocol` types) both come from
//! it, so a route cannot exist undocumented, and tests enumerate it to check that every
//! protected route refuses a missing key and that every body is documented.

use std::borrow::Cow;
use std::collections::BTreeMap;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{MethodRouter, delete, get, patch, post, put};
use tandem_protocol::{
    ActivateProfileResponse, ProfileDetailResponse, ProfileListResponse, ProfileMutationResponse,
    ResponseObject, ResponseRequest, SaveProfileRequest,
};
use tandem_protocol::{
    AgentResponse, ApproveEditedRequest, ApproveEditedResponse, AskAgentRequest, BashEvent,
    BashEventPage, ChatCompletionRequest, ChatCompletionResponse, ConfirmationResponseRequest,
    ConversationInfo, ConversationPage, CreateSecretRequest, DeletedResponse, ErrorResponse, Event,
    EventPage, ExecuteBashRequest, FileUploadResponse, ModelList, OpenAiErrorResponse,
    PtyClientFrame, PtyServerFrame, SecretInfo, SecretList, SendMessageRequest, ServerInfo,
    SetConfirmationPolicyRequest, SetSecurityAnalyzerRequest, SocketAuthFrame,
    StartConversationRequest, StatusResponse, SuccessResponse, UpdateConversationRequest,
    UpdateSecretsRequest, ValidationErrorResponse, WorkspaceDiff, WorkspaceFile, WorkspaceTree,
    WriteWorkspaceFileRequest,
};
use utoipa::ToSchema;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::security::{
    ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::{
    ComponentsBuilder, Content, InfoBuilder, OpenApi, OpenApiBuilder, Paths, Ref, RefOr, Required,
    ResponseBuilder,
};

use crate::{
    AppState, bash, conversations, events, files, gateway, profiles, secrets, server_info, sockets,
    workspace,
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

type Schemas = Vec<(String, RefOr<Schema>)>;

/// A named component schema: a type deriving (or implementing) utoipa's `ToSchema`.
#[derive(Clone, Copy)]
pub struct SchemaRef {
    /// Its name under `components/schemas`.
    pub name: fn() -> Cow<'static, str>,
    schema: fn() -> RefOr<Schema>,
    deps: fn(&mut Schemas),
}

impl std::fmt::Debug for SchemaRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SchemaRef({})", (self.name)())
    }
}

impl SchemaRef {
    fn reference(&self) -> RefOr<Schema> {
        RefOr::Ref(Ref::from_schema_name((self.name)()))
    }

    /// Adds this schema and every schema it refers to.
    fn collect(&self, into: &mut Schemas) {
        into.push(((self.name)().into_owned(), (self.schema)()));
        (self.deps)(into);
    }
}

/// The schema of `T`.
pub fn schema<T: ToSchema>() -> SchemaRef {
    SchemaRef {
        name: T::name,
        schema: T::schema,
        deps: T::schemas,
    }
}

/// The shape of a request or response body.
#[derive(Debug, Clone)]
pub enum Body {
    /// No body.
    None,
    /// A JSON value of a named schema.
    Json(SchemaRef),
    /// A JSON list whose items are a named schema or `null` (batch gets of unknown ids).
    NullableList(SchemaRef),
    /// Any JSON (this document).
    AnyJson,
    /// A JSON integer.
    Integer,
    /// A JSON list of strings.
    Strings,
    /// `text/plain`.
    Text,
    /// `application/octet-stream`.
    Bytes,
    /// `multipart/form-data` with a `file` field.
    Multipart,
    /// `text/event-stream` whose `data:` lines are JSON of a named schema.
    Sse(SchemaRef),
    /// WebSocket text frames, each one JSON object of one of these schemas.
    Frames(Vec<SchemaRef>),
    /// WebSocket: the terminal's output as binary frames, plus JSON text frames of these.
    Terminal(Vec<SchemaRef>),
}

impl Body {
    /// JSON of `T`.
    pub fn json<T: ToSchema>() -> Self {
        Self::Json(schema::<T>())
    }

    /// A JSON list of `T` or `null`.
    pub fn nullable_list<T: ToSchema>() -> Self {
        Self::NullableList(schema::<T>())
    }

    /// An SSE stream of `T`.
    pub fn sse<T: ToSchema>() -> Self {
        Self::Sse(schema::<T>())
    }

    /// WebSocket JSON frames.
    pub fn frames(of: Vec<SchemaRef>) -> Self {
        Self::Frames(of)
    }

    /// WebSocket terminal output and JSON frames.
    pub fn terminal(of: Vec<SchemaRef>) -> Self {
        Self::Terminal(of)
    }

    /// The named schemas it uses.
    pub fn schemas(&self) -> Vec<SchemaRef> {
        match self {
            Self::Json(s) | Self::NullableList(s) | Self::Sse(s) => vec![*s],
            Self::Frames(v) | Self::Terminal(v) => v.clone(),
            _ => Vec::new(),
        }
    }

    /// Media type and schema, `None` without a body.
    fn content(&self) -> Option<(&'static str, RefOr<Schema>)> {
        let one_of = |v: &[SchemaRef]| -> RefOr<Schema> {
            match v {
                [one] => one.reference(),
                many => many
                    .iter()
                    .fold(OneOfBuilder::new(), |b, s| b.item(s.reference()))
                    .into(),
            }
        };
        let object = |t: Type| -> RefOr<Schema> { ObjectBuilder::new().schema_type(t).into() };
        Some(match self {
            Self::None => return None,
            Self::Json(s) => ("application/json", s.reference()),
            Self::NullableList(s) => (
                "application/json",
                ArrayBuilder::new()
                    .items(
                        OneOfBuilder::new()
                            .item(s.reference())
                            .item(object(Type::Null)),
                    )
                    .into(),
            ),
            Self::AnyJson => ("application/json", object(Type::Object)),
            Self::Integer => ("application/json", object(Type::Integer)),
            Self::Strings => (
                "application/json",
                ArrayBuilder::new().items(object(Type::String)).into(),
            ),
            Self::Text => ("text/plain", object(Type::String)),
            Self::Bytes => (
                "application/octet-stream",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                        utoipa::openapi::KnownFormat::Binary,
                    )))
                    .into(),
            ),
            Self::Multipart => (
                "multipart/form-data",
                ObjectBuilder::new()
                    .schema_type(Type::Object)
                    .property(
                        "file",
                        ObjectBuilder::new().schema_type(Type::String).format(Some(
                            utoipa::openapi::SchemaFormat::KnownFormat(
                                utoipa::openapi::KnownFormat::Binary,
                            ),
                        )),
                    )
                    .required("file")
                    .into(),
            ),
            Self::Sse(s) => ("text/event-stream", s.reference()),
            Self::Frames(v) | Self::Terminal(v) => ("application/json", one_of(v)),
        })
    }
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
    /// What the client sends (for sockets: its frames).
    pub request: Body,
    /// What the server answers (for sockets: its frames).
    pub response: Body,
}

type Entry = (RouteDoc, MethodRouter<AppState>);

#[allow(clippy::too_many_arguments)]
fn r(
    method: &'static str,
    path: &'static str,
    auth: Auth,
    tag: &'static str,
    summary: &'static str,
    tandem: bool,
    request: Body,
    response: Body,
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
            request,
            response,
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
            Body::None,
            Body::json::<ServerInfo>(),
            get(server_info::info),
        ),
        r(
            "GET",
            "/alive",
            Open,
            "server",
            "Liveness: {\"status\":\"ok\"}.",
            false,
            Body::None,
            Body::json::<StatusResponse>(),
            get(server_info::alive),
        ),
        r(
            "GET",
            "/health",
            Open,
            "server",
            "Health: {\"status\":\"ok\"}.",
            false,
            Body::None,
            Body::json::<StatusResponse>(),
            get(server_info::alive),
        ),
        r(
            "GET",
            "/ready",
            Open,
            "server",
            "Readiness: {\"status\":\"ready\"}.",
            false,
            Body::None,
            Body::json::<StatusResponse>(),
            get(server_info::ready),
        ),
        r(
            "GET",
            "/server_info",
            Open,
            "server",
            "ServerInfo: versions, tools, capabilities.",
            false,
            Body::None,
            Body::json::<ServerInfo>(),
            get(server_info::info),
        ),
        r(
            "GET",
            "/openapi.json",
            Open,
            "server",
            "This OpenAPI document.",
            false,
            Body::None,
            Body::AnyJson,
            get(crate::openapi_json),
        ),
        r(
            "GET",
            "/api/tools/",
            Key,
            "server",
            "Tool names this server can give an agent.",
            false,
            Body::None,
            Body::Strings,
            get(server_info::tools),
        ),
        r(
            "POST",
            "/api/conversations",
            Key,
            "conversations",
            "Body StartConversationRequest; 201 ConversationInfo when created, 200 when conversation_id exists; 422 naming the field; 429 at capacity with a running initial message.",
            false,
            Body::json::<StartConversationRequest>(),
            Body::json::<ConversationInfo>(),
            post(conversations::create),
        ),
        r(
            "GET",
            "/api/conversations",
            Key,
            "conversations",
            "Batch get: ?ids=a&ids=b (≤100) → [ConversationInfo|null].",
            false,
            Body::None,
            Body::nullable_list::<ConversationInfo>(),
            get(conversations::batch),
        ),
        r(
            "GET",
            "/api/conversations/search",
            Key,
            "conversations",
            "ConversationPage; ?page_id, limit (1..100), status, sort_order=CREATED_AT|CREATED_AT_DESC|UPDATED_AT|UPDATED_AT_DESC.",
            false,
            Body::None,
            Body::json::<ConversationPage>(),
            get(conversations::search),
        ),
        r(
            "GET",
            "/api/conversations/count",
            Key,
            "conversations",
            "Number of conversations; ?status.",
            false,
            Body::None,
            Body::Integer,
            get(conversations::count),
        ),
        r(
            "GET",
            C,
            Key,
            "conversations",
            "ConversationInfo, 404 when unknown.",
            false,
            Body::None,
            Body::json::<ConversationInfo>(),
            get(conversations::get_one),
        ),
        r(
            "PATCH",
            C,
            Key,
            "conversations",
            "Body UpdateConversationRequest {title?, tags?} → SuccessResponse.",
            false,
            Body::json::<UpdateConversationRequest>(),
            Body::json::<SuccessResponse>(),
            patch(conversations::update),
        ),
        r(
            "DELETE",
            C,
            Key,
            "conversations",
            "Closes and deletes the conversation's directory → SuccessResponse.",
            false,
            Body::None,
            Body::json::<SuccessResponse>(),
            delete(conversations::delete),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/run",
            Key,
            "conversations",
            "Starts the loop (approves pending actions); 409 while running, 429 at capacity.",
            false,
            Body::None,
            Body::json::<SuccessResponse>(),
            post(conversations::run),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/pause",
            Key,
            "conversations",
            "Stops after the in-flight step.",
            false,
            Body::None,
            Body::json::<SuccessResponse>(),
            post(conversations::pause),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/interrupt",
            Key,
            "conversations",
            "Cancels the in-flight LLM call or tool now.",
            false,
            Body::None,
            Body::json::<SuccessResponse>(),
            post(conversations::interrupt),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/confirmation_policy",
            Key,
            "conversations",
            "Body SetConfirmationPolicyRequest {policy}.",
            false,
            Body::json::<SetConfirmationPolicyRequest>(),
            Body::json::<SuccessResponse>(),
            post(conversations::confirmation_policy),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/security_analyzer",
            Key,
            "conversations",
            "Body SetSecurityAnalyzerRequest {security_analyzer|null}.",
            false,
            Body::json::<SetSecurityAnalyzerRequest>(),
            Body::json::<SuccessResponse>(),
            post(conversations::security_analyzer),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/secrets",
            Key,
            "conversations",
            "Body UpdateSecretsRequest {secrets: {NAME: value|StaticSecret|LookupSecret}}.",
            false,
            Body::json::<UpdateSecretsRequest>(),
            Body::json::<SuccessResponse>(),
            post(conversations::secrets),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/ask_agent",
            Key,
            "conversations",
            "Body AskAgentRequest {question} → AgentResponse {response}; a side LLM call, the conversation is unchanged; 502 when the LLM fails (retried once at most) or answers with a tool call only, 504 when it does not answer within 60 s.",
            false,
            Body::json::<AskAgentRequest>(),
            Body::json::<AgentResponse>(),
            post(conversations::ask_agent),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/condense",
            Key,
            "conversations",
            "Requests condensation of the history.",
            false,
            Body::None,
            Body::json::<SuccessResponse>(),
            post(conversations::condense),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/agent_final_response",
            Key,
            "conversations",
            "AgentResponse: the last finish message or agent text.",
            false,
            Body::None,
            Body::json::<AgentResponse>(),
            get(conversations::agent_final_response),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/events/search",
            Key,
            "events",
            "EventPage; ?page_id (id of the page's first event), limit (1..100), kind, source, body, timestamp__gte, timestamp__lt, sort_order=TIMESTAMP|TIMESTAMP_DESC.",
            false,
            Body::None,
            Body::json::<EventPage>(),
            get(events::search),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/events/count",
            Key,
            "events",
            "Number of events matching the search filters.",
            false,
            Body::None,
            Body::Integer,
            get(events::count),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/events/stream",
            Key,
            "events",
            "Server-Sent Events: the event socket's frames (full_state, ?resend_mode=all|since&after_timestamp replay, live events, full_state after each run).",
            true,
            Body::None,
            Body::sse::<Event>(),
            get(events::stream),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/events/{event_id}",
            Key,
            "events",
            "One event, 404 when unknown.",
            false,
            Body::None,
            Body::json::<Event>(),
            get(events::get_one),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/events",
            Key,
            "events",
            "Batch get: a JSON list of event ids in the GET body → [Event|null].",
            false,
            Body::Strings,
            Body::nullable_list::<Event>(),
            get(events::batch),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/events",
            Key,
            "events",
            "Body SendMessageRequest {role:user, content, run} → SuccessResponse.",
            false,
            Body::json::<SendMessageRequest>(),
            Body::json::<SuccessResponse>(),
            post(events::post),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/events/respond_to_confirmation",
            Key,
            "events",
            "Body ConfirmationResponseRequest {accept, reason}.",
            false,
            Body::json::<ConfirmationResponseRequest>(),
            Body::json::<SuccessResponse>(),
            post(events::respond),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/events/approve_edited",
            Key,
            "events",
            "Body ApproveEditedRequest {action_id, arguments}: that pending action runs once with these arguments in place of the agent's, its observation answering the original; the other pending actions keep waiting. 409 when it is not pending, 422 naming the field the tool rejects.",
            true,
            Body::json::<ApproveEditedRequest>(),
            Body::json::<ApproveEditedResponse>(),
            post(events::approve_edited),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/bash/start_bash_command",
            Key,
            "bash",
            "Body ExecuteBashRequest → BashCommand at once (in the conversation's workspace; a relative cwd is below it); 422 when cwd is not an existing folder.",
            false,
            Body::json::<ExecuteBashRequest>(),
            Body::json::<BashEvent>(),
            post(bash::conv_start),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/bash/execute_bash_command",
            Key,
            "bash",
            "Body ExecuteBashRequest → BashOutput when done.",
            false,
            Body::json::<ExecuteBashRequest>(),
            Body::json::<BashEvent>(),
            post(bash::conv_execute),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/bash/bash_events/search",
            Key,
            "bash",
            "BashEventPage; ?kind__eq, command_id__eq, sort_order, limit, page_id.",
            false,
            Body::None,
            Body::json::<BashEventPage>(),
            get(bash::conv_search),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/bash/bash_events/{event_id}",
            Key,
            "bash",
            "One bash event.",
            false,
            Body::None,
            Body::json::<BashEvent>(),
            get(bash::conv_get_event),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/bash/bash_commands/{command_id}/stop",
            Key,
            "bash",
            "Kills a running command.",
            false,
            Body::None,
            Body::json::<SuccessResponse>(),
            post(bash::conv_stop),
        ),
        r(
            "POST",
            "/api/conversations/{conversation_id}/file/upload",
            Key,
            "files",
            "Multipart field `file`, ?path= inside the workspace (relative to its root) → FileUploadResponse; 403 outside; 422 for an empty or malformed path or a folder.",
            false,
            Body::Multipart,
            Body::json::<FileUploadResponse>(),
            upload(post(files::conv_upload)),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/file/download",
            Key,
            "files",
            "Raw bytes of ?path= inside the workspace; 403 outside; 422 for an empty or malformed path or a folder.",
            false,
            Body::None,
            Body::Bytes,
            get(files::conv_download),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/workspace/tree",
            Key,
            "workspace",
            "WorkspaceTree of the workspace (or ?path= below it); 422 when ?path= is a file.",
            true,
            Body::None,
            Body::json::<WorkspaceTree>(),
            get(workspace::tree),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/workspace/file",
            Key,
            "workspace",
            "WorkspaceFile for ?path= (text, size, mtime_ms, binary); 422 over 10 MB, for a folder or a malformed path; 403 outside.",
            true,
            Body::None,
            Body::json::<WorkspaceFile>(),
            get(workspace::read_file),
        ),
        r(
            "PUT",
            "/api/conversations/{conversation_id}/workspace/file",
            Key,
            "workspace",
            "Body WriteWorkspaceFileRequest {path, content, expected_mtime_ms?}; 409 when the file changed since; 422 naming `path` when it is empty, malformed or a folder.",
            true,
            Body::json::<WriteWorkspaceFileRequest>(),
            Body::json::<WorkspaceFile>(),
            put(workspace::write_file),
        ),
        r(
            "GET",
            "/api/conversations/{conversation_id}/workspace/diff",
            Key,
            "workspace",
            "WorkspaceDiff: unified diffs of everything changed since the conversation started.",
            true,
            Body::None,
            Body::json::<WorkspaceDiff>(),
            get(workspace::workspace_diff),
        ),
        r(
            "POST",
            "/api/bash/start_bash_command",
            Key,
            "bash",
            "Body ExecuteBashRequest → BashCommand at once; a relative cwd is below the server's workspace; 422 when cwd is not an existing folder.",
            false,
            Body::json::<ExecuteBashRequest>(),
            Body::json::<BashEvent>(),
            post(bash::start),
        ),
        r(
            "POST",
            "/api/bash/execute_bash_command",
            Key,
            "bash",
            "Body ExecuteBashRequest → BashOutput when done.",
            false,
            Body::json::<ExecuteBashRequest>(),
            Body::json::<BashEvent>(),
            post(bash::execute),
        ),
        r(
            "GET",
            "/api/bash/bash_events/search",
            Key,
            "bash",
            "BashEventPage; ?kind__eq, command_id__eq, sort_order, limit, page_id.",
            false,
            Body::None,
            Body::json::<BashEventPage>(),
            get(bash::search),
        ),
        r(
            "GET",
            "/api/bash/bash_events/",
            Key,
            "bash",
            "Batch get: ?ids= → [BashEvent|null].",
            false,
            Body::None,
            Body::nullable_list::<BashEvent>(),
            get(bash::batch),
        ),
        r(
            "GET",
            "/api/bash/bash_events/{event_id}",
            Key,
            "bash",
            "One bash event.",
            false,
            Body::None,
            Body::json::<BashEvent>(),
            get(bash::get_event),
        ),
        r(
            "DELETE",
            "/api/bash/bash_events",
            Key,
            "bash",
            "Forgets every bash event.",
            false,
            Body::None,
            Body::json::<SuccessResponse>(),
            delete(bash::clear),
        ),
        r(
            "POST",
            "/api/bash/bash_commands/{command_id}/stop",
            Key,
            "bash",
            "Kills a running command.",
            false,
            Body::None,
            Body::json::<SuccessResponse>(),
            post(bash::stop),
        ),
        r(
            "POST",
            "/api/file/upload",
            Key,
            "files",
            "Multipart field `file`, ?path= absolute → FileUploadResponse; 422 for a relative or malformed path or a folder.",
            false,
            Body::Multipart,
            Body::json::<FileUploadResponse>(),
            upload(post(files::upload)),
        ),
        r(
            "GET",
            "/api/file/download",
            Key,
            "files",
            "Raw bytes of ?path= (absolute); 422 for a relative or malformed path or a folder.",
            false,
            Body::None,
            Body::Bytes,
            get(files::download),
        ),
        r(
            "PUT",
            "/api/settings/secrets",
            Key,
            "secrets",
            "Body CreateSecretRequest {name, value, description?} → SecretInfo.",
            false,
            Body::json::<CreateSecretRequest>(),
            Body::json::<SecretInfo>(),
            put(secrets::put),
        ),
        r(
            "GET",
            "/api/settings/secrets",
            Key,
            "secrets",
            "SecretList: names and descriptions, never values.",
            false,
            Body::None,
            Body::json::<SecretList>(),
            get(secrets::list),
        ),
        r(
            "GET",
            "/api/settings/secrets/{name}",
            Key,
            "secrets",
            "The secret's value as text/plain.",
            false,
            Body::None,
            Body::Text,
            get(secrets::get_value),
        ),
        r(
            "DELETE",
            "/api/settings/secrets/{name}",
            Key,
            "secrets",
            "DeletedResponse.",
            false,
            Body::None,
            Body::json::<DeletedResponse>(),
            delete(secrets::delete),
        ),
        r(
            "GET",
            "/sockets/events/{conversation_id}",
            Socket,
            "sockets",
            "WebSocket: first-frame auth {type:auth, session_api_key}; full_state, ?resend_mode=all|since replay, live events, full_state after each run; client Message frames run the agent; close 4001/4004.",
            false,
            Body::frames(vec![
                schema::<SocketAuthFrame>(),
                schema::<SendMessageRequest>(),
            ]),
            Body::frames(vec![schema::<Event>()]),
            get(sockets::events::handler),
        ),
        r(
            "GET",
            "/sockets/bash-events",
            Socket,
            "sockets",
            "WebSocket: BashCommand/BashOutput frames; client ExecuteBashRequest frames start commands.",
            false,
            Body::frames(vec![
                schema::<SocketAuthFrame>(),
                schema::<ExecuteBashRequest>(),
            ]),
            Body::frames(vec![schema::<BashEvent>()]),
            get(sockets::bash::handler),
        ),
        r(
            "GET",
            "/sockets/pty/{conversation_id}",
            Socket,
            "sockets",
            "WebSocket: the agent's terminal (or ?mode=shell a new shell in the workspace); binary output frames; client {type:input,data} and {type:resize,rows,cols}.",
            true,
            Body::frames(vec![schema::<PtyClientFrame>()]),
            Body::terminal(vec![schema::<PtyServerFrame>()]),
            get(sockets::pty::handler),
        ),
        r(
            "GET",
            "/api/profiles",
            Key,
            "profiles",
            "ProfileListResponse: saved LLM profiles (never their keys) and the active one.",
            false,
            Body::None,
            Body::json::<ProfileListResponse>(),
            get(profiles::list),
        ),
        r(
            "GET",
            "/api/profiles/{name}",
            Key,
            "profiles",
            "ProfileDetailResponse: the profile's LLM config with its secrets masked (api_key null, api_key_set); 404 when unknown.",
            false,
            Body::None,
            Body::json::<ProfileDetailResponse>(),
            get(profiles::get_one),
        ),
        r(
            "POST",
            "/api/profiles/{name}",
            Key,
            "profiles",
            "Body SaveProfileRequest {llm, include_secrets?} → 201 ProfileMutationResponse; saves (or replaces) the profile, its key encrypted at rest; 409 past 50 profiles.",
            false,
            Body::json::<SaveProfileRequest>(),
            Body::json::<ProfileMutationResponse>(),
            post(profiles::save),
        ),
        r(
            "DELETE",
            "/api/profiles/{name}",
            Key,
            "profiles",
            "ProfileMutationResponse; deletes the profile (idempotent).",
            false,
            Body::None,
            Body::json::<ProfileMutationResponse>(),
            delete(profiles::delete),
        ),
        r(
            "POST",
            "/api/profiles/{name}/activate",
            Key,
            "profiles",
            "ActivateProfileResponse; records the active profile; 404 when unknown.",
            false,
            Body::None,
            Body::json::<ActivateProfileResponse>(),
            post(profiles::activate),
        ),
        r(
            "GET",
            "/v1/models",
            Bearer,
            "gateway",
            "ModelList: every LLM profile as openhands_{profile}.",
            false,
            Body::None,
            Body::json::<ModelList>(),
            get(gateway::models),
        ),
        r(
            "POST",
            "/v1/chat/completions",
            Bearer,
            "gateway",
            "ChatCompletionRequest → ChatCompletionResponse, or with stream:true chat.completion.chunk SSE (a last usage chunk with stream_options.include_usage); every answer names its conversation in X-OpenHands-ServerConversation-ID, which a request sends to continue it; errors in OpenAI's shape.",
            false,
            Body::json::<ChatCompletionRequest>(),
            Body::json::<ChatCompletionResponse>(),
            post(gateway::chat),
        ),
        r(
            "POST",
            "/v1/responses",
            Bearer,
            "gateway",
            "ResponseRequest → ResponseObject (output_text is the agent's final answer), or with stream:true the response.* SSE events ending in response.completed; previous_response_id continues its conversation; errors in OpenAI's shape.",
            false,
            Body::json::<ResponseRequest>(),
            Body::json::<ResponseObject>(),
            post(gateway::responses),
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

/// Routes that answer 201 when they create something (and 200 otherwise).
const CREATES: [(&str, &str); 2] = [
    ("POST", "/api/conversations"),
    ("POST", "/api/profiles/{name}"),
];

fn json_response(description: &str, schema: SchemaRef) -> ResponseBuilder {
    ResponseBuilder::new()
        .description(description)
        .content("application/json", Content::new(Some(schema.reference())))
}

/// The OpenAPI document of [`route_docs`]: paths, their parameters, request and response
/// bodies, and every schema those refer to under `components/schemas`.
pub fn openapi() -> OpenApi {
    let mut paths = Paths::new();
    let mut schemas: Schemas = Vec::new();
    for d in route_docs() {
        for body in [&d.request, &d.response] {
            for s in body.schemas() {
                s.collect(&mut schemas);
            }
        }
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
            .operation_id(Some(operation_id(&d)))
            .tag(d.tag);
        let socket = d.auth == Auth::Socket;
        if let Some((media, schema)) = d.request.content() {
            let description = if socket {
                "The client's WebSocket text frames, one JSON object each."
            } else {
                "The request body."
            };
            op = op.request_body(Some(
                RequestBodyBuilder::new()
                    .description(Some(description))
                    .required(Some(Required::True))
                    .content(media, Content::new(Some(schema)))
                    .build(),
            ));
        }
        let (status, description) = match &d.response {
            Body::Terminal(_) => (
                "101",
                "WebSocket: the terminal's output as binary frames; these JSON text frames for errors. Closes 4001 without a valid key.",
            ),
            _ if socket => (
                "101",
                "WebSocket: the server's text frames, one JSON object each. Closes 4001 without a valid key.",
            ),
            _ => ("200", "Success"),
        };
        let mut ok = ResponseBuilder::new().description(description);
        if let Some((media, schema)) = d.response.content() {
            ok = ok.content(media, Content::new(Some(schema.clone())));
            if CREATES.contains(&(d.method, d.path)) {
                op = op.response(
                    "201",
                    ResponseBuilder::new()
                        .description("Created")
                        .content(media, Content::new(Some(schema))),
                );
            }
        }
        op = op.response(status, ok);
        for seg in d.path.split('/').filter(|s| s.starts_with('{')) {
            let name = seg.trim_matches(|c| c == '{' || c == '}');
            op = op.parameter(
                ParameterBuilder::new()
                    .name(name)
                    .parameter_in(ParameterIn::Path)
                    .required(Required::True)
                    .schema(Some(ObjectBuilder::new().schema_type(Type::String))),
            );
        }
        if matches!(d.request, Body::Json(_)) {
            op = op.response(
                "422",
                json_response(
                    "The body is not valid: the list names each wrong field",
                    schema::<ValidationErrorResponse>(),
                ),
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
                        json_response(
                            "Missing or wrong session key: {\"detail\":\"Unauthorized\"}",
                            schema::<ErrorResponse>(),
                        ),
                    )
            }
            Auth::Bearer => {
                op = op
                    .security(SecurityRequirement::new("bearer", Vec::<String>::new()))
                    .response(
                        "401",
                        json_response("OpenAI-shaped error", schema::<OpenAiErrorResponse>()),
                    )
            }
            Auth::Socket | Auth::None => {}
        }
        if matches!(d.auth, Auth::Key | Auth::Bearer) {
            schema::<ErrorResponse>().collect(&mut schemas);
            schema::<OpenAiErrorResponse>().collect(&mut schemas);
            schema::<ValidationErrorResponse>().collect(&mut schemas);
        }
        paths.add_path_operation(d.path, vec![method(d.method)], op);
    }
    // Sorted and deduplicated, so the document is the same on every build.
    let schemas: BTreeMap<String, RefOr<Schema>> = schemas.into_iter().collect();
    let components = ComponentsBuilder::new()
        .schemas_from_iter(schemas)
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

/// [`openapi`] as pretty JSON with a final newline: what `tandem openapi` prints and what
/// `ui/openapi.tandem.json` holds.
pub fn openapi_document() -> String {
    let mut text = serde_json::to_string_pretty(&openapi()).unwrap_or_default();
    text.push('\n');
    text
}

/// `get_api_conversations_conversation_id`, ...: unique per method and path.
fn operation_id(d: &RouteDoc) -> String {
    format!(
        "{}_{}",
        d.method.to_lowercase(),
        d.path
            .trim_matches('/')
            .replace(['/', '{', '}', '-', '.'], "_")
    )
}
