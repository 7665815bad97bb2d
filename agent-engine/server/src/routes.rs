//! The route table: every endpoint once, with its method, path, authentication, summary and
//! request and response bodies. The axum router and the OpenAPI document (`/openapi.json`,
//! built with utoipa in [`openapi`](fn@openapi), its body schemas derived from the
//! `tandem-protocol` types) both come from it, so a route cannot exist undocumented, and tests
//! enumerate it to check that every protected route refuses a missing key and that every body
//! is documented.

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::handler::Handler;
use axum::routing::{self, MethodRouter};
use tandem_protocol::api::{
    ArrivalRequest, CheckpointList, ExportConversationRequest, ForkConversationRequest,
    ImportedConversation, MovedTo, NavigateConversationRequest, ReplayState, RewindRequest,
    RewindResponse,
};
use tandem_protocol::{
    ActivateProfileResponse, ProfileDetailResponse, ProfileListResponse, ProfileMutationResponse,
    ResponseObject, ResponseRequest, SaveProfileRequest,
};
use tandem_protocol::{
    AgentResponse, ApproveEditedRequest, ApproveEditedResponse, AskAgentRequest, BashEvent,
    BashEventPage, ChatCompletionRequest, ChatCompletionResponse, ConfirmationResponseRequest,
    ConversationInfo, ConversationPage, CreateSecretRequest, DeletedResponse, Event, EventPage,
    ExecuteBashRequest, FileUploadResponse, ModelList, PtyClientFrame, PtyServerFrame,
    RejectHunkRequest, RejectHunkResponse, SecretInfo, SecretList, SendMessageRequest, ServerInfo,
    SetConfirmationPolicyRequest, SetSecurityAnalyzerRequest, SocketAuthFrame,
    StartConversationRequest, StatusResponse, SuccessResponse, UpdateConversationRequest,
    UpdateSecretsRequest, VncServerFrame, WorkspaceDiff, WorkspaceFile, WorkspaceTree,
    WriteWorkspaceFileRequest,
};
use tandem_protocol::{BrowserClientFrame, BrowserServerFrame, BrowserState, HandBackRequest};
use utoipa::ToSchema;

use crate::{
    AppState, bash_commands, checkpoint_routes, conversations, event_routes, files, gateway,
    move_routes, profile_routes, replay_routes, secrets, server_info, sockets, workspace,
};

mod body;
mod mcp;
mod openapi;

pub use body::{Body, SchemaRef, schema};
pub use openapi::{openapi, openapi_document};

/// How a route authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    /// Open (health, info, docs).
    None,
    /// `X-Session-API-Key` header; 401 without it.
    Key,
    /// WebSocket: first-frame auth (upstream's two sockets also the header or query); close 4001
    /// without it.
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
    /// Answers 201 when it creates something (and 200 otherwise).
    pub creates: bool,
    /// What the client sends (for sockets: its frames).
    pub request: Body,
    /// What the server answers (for sockets: its frames).
    pub response: Body,
}

/// A row of the table: a route's documentation and its handler, built up call by call from
/// [`Route::get`] and the like. A route takes the session key unless told otherwise.
#[derive(Clone)]
struct Route {
    doc: RouteDoc,
    handler: MethodRouter<AppState>,
}

impl Route {
    fn new(method: &'static str, path: &'static str, handler: MethodRouter<AppState>) -> Self {
        Self {
            doc: RouteDoc {
                method,
                path,
                auth: Auth::Key,
                tag: "",
                summary: "",
                tandem: false,
                creates: false,
                request: Body::None,
                response: Body::None,
            },
            handler,
        }
    }

    fn get<H: Handler<T, AppState>, T: 'static>(path: &'static str, h: H) -> Self {
        Self::new("GET", path, routing::get(h))
    }

    fn post<H: Handler<T, AppState>, T: 'static>(path: &'static str, h: H) -> Self {
        Self::new("POST", path, routing::post(h))
    }

    fn put<H: Handler<T, AppState>, T: 'static>(path: &'static str, h: H) -> Self {
        Self::new("PUT", path, routing::put(h))
    }

    fn patch<H: Handler<T, AppState>, T: 'static>(path: &'static str, h: H) -> Self {
        Self::new("PATCH", path, routing::patch(h))
    }

    fn delete<H: Handler<T, AppState>, T: 'static>(path: &'static str, h: H) -> Self {
        Self::new("DELETE", path, routing::delete(h))
    }

    /// A WebSocket, which authenticates itself (see [`Auth::Socket`]).
    fn socket<H: Handler<T, AppState>, T: 'static>(path: &'static str, h: H) -> Self {
        let mut route = Self::get(path, h);
        route.doc.auth = Auth::Socket;
        route
    }

    /// Open to anyone: no key.
    fn open(mut self) -> Self {
        self.doc.auth = Auth::None;
        self
    }

    /// The OpenAI gateway's key check (see [`Auth::Bearer`]).
    fn bearer(mut self) -> Self {
        self.doc.auth = Auth::Bearer;
        self
    }

    /// Takes JSON of `T`.
    fn body<T: ToSchema>(self) -> Self {
        self.request(Body::json::<T>())
    }

    /// Takes `body`.
    fn request(mut self, body: Body) -> Self {
        self.doc.request = body;
        self
    }

    /// Answers JSON of `T`.
    fn ok<T: ToSchema>(self) -> Self {
        self.response(Body::json::<T>())
    }

    /// Answers `body`.
    fn response(mut self, body: Body) -> Self {
        self.doc.response = body;
        self
    }

    /// Answers 201 when it creates something.
    fn creates(mut self) -> Self {
        self.doc.creates = true;
        self
    }

    /// Takes bodies up to `bytes` (uploads) instead of the server's JSON limit.
    fn body_limit(mut self, bytes: usize) -> Self {
        self.handler = self.handler.layer(DefaultBodyLimit::max(bytes));
        self
    }

    /// Goes beyond upstream's API.
    fn tandem(mut self) -> Self {
        self.doc.tandem = true;
        self
    }

    /// What it does (the first sentence, up to a `;`, becomes the OpenAPI summary).
    fn doc(mut self, summary: &'static str) -> Self {
        self.doc.summary = summary;
        self
    }
}

/// `routes` under the OpenAPI tag `tag`.
fn tagged<const N: usize>(tag: &'static str, routes: [Route; N]) -> Vec<Route> {
    routes
        .into_iter()
        .map(|mut r| {
            r.doc.tag = tag;
            r
        })
        .collect()
}

/// Every route, grouped by OpenAPI tag; uploads take bodies up to `upload_limit` bytes.
fn table(upload_limit: usize) -> Vec<Route> {
    let server_routes = [
        Route::get("/", server_info::info)
            .open()
            .ok::<ServerInfo>()
            .doc("Server info (same as /server_info)."),
        Route::get("/alive", server_info::alive)
            .open()
            .ok::<StatusResponse>()
            .doc("Liveness: {\"status\":\"ok\"}."),
        Route::get("/health", server_info::alive)
            .open()
            .ok::<StatusResponse>()
            .doc("Health: {\"status\":\"ok\"}."),
        Route::get("/ready", server_info::ready)
            .open()
            .ok::<StatusResponse>()
            .doc("Readiness: {\"status\":\"ready\"}."),
        Route::get("/server_info", server_info::info)
            .open()
            .ok::<ServerInfo>()
            .doc("ServerInfo: versions, tools, capabilities."),
        Route::get("/openapi.json", crate::openapi_json)
            .open()
            .response(Body::AnyJson)
            .doc("This OpenAPI document."),
        Route::get("/api/tools/", server_info::tools)
            .response(Body::Strings)
            .doc("Tool names this server can give an agent."),
    ];
    let conversations_routes = [
        Route::post("/api/conversations", conversations::create)
            .body::<StartConversationRequest>()
            .ok::<ConversationInfo>()
            .creates()
            .doc("Body StartConversationRequest; 201 ConversationInfo when created, 200 when conversation_id exists; 422 naming the field. A run beyond max_concurrent_runs waits its turn (state.queued_ahead says how many runs are ahead)."),
        Route::get("/api/conversations", conversations::batch)
            .response(Body::nullable_list::<ConversationInfo>())
            .doc("Batch get: ?ids=a&ids=b (≤100) → [ConversationInfo|null]."),
        Route::get("/api/conversations/search", conversations::search)
            .ok::<ConversationPage>()
            .doc("ConversationPage; ?page_id, limit (1..100), status, sort_order=CREATED_AT|CREATED_AT_DESC|UPDATED_AT|UPDATED_AT_DESC."),
        Route::get("/api/conversations/count", conversations::count)
            .response(Body::Integer)
            .doc("Number of conversations; ?status."),
        Route::get("/api/conversations/{conversation_id}", conversations::get_one)
            .ok::<ConversationInfo>()
            .doc("ConversationInfo, 404 when unknown."),
        Route::patch("/api/conversations/{conversation_id}", conversations::update)
            .body::<UpdateConversationRequest>()
            .ok::<SuccessResponse>()
            .doc("Body UpdateConversationRequest {title?, tags?} → SuccessResponse."),
        Route::delete("/api/conversations/{conversation_id}", conversations::delete)
            .ok::<SuccessResponse>()
            .doc("Closes and deletes the conversation's directory → SuccessResponse."),
        Route::post("/api/conversations/{conversation_id}/children", crate::children::start_child)
            .body::<tandem_protocol::api::StartChildConversationRequest>()
            .ok::<tandem_protocol::api::StartChildConversationResponse>()
            .creates()
            .doc("Starts a child conversation (parent's LLM, tools less task, workspace) with `task` as its first message → 201 StartChildConversationResponse; 404 without the parent, 422 naming the field."),
        Route::post("/api/conversations/{conversation_id}/run", conversations::run)
            .ok::<SuccessResponse>()
            .doc("Starts the loop (approves pending actions); 409 while running or waiting its turn. Beyond max_concurrent_runs the run waits in a queue, first come first served (state.queued_ahead)."),
        Route::post("/api/conversations/{conversation_id}/pause", conversations::pause)
            .ok::<SuccessResponse>()
            .doc("Stops after the in-flight step."),
        Route::post("/api/conversations/{conversation_id}/interrupt", conversations::interrupt)
            .ok::<SuccessResponse>()
            .doc("Cancels the in-flight LLM call or tool now."),
        Route::post(
            "/api/conversations/{conversation_id}/confirmation_policy",
            conversations::confirmation_policy,
        )
        .body::<SetConfirmationPolicyRequest>()
        .ok::<SuccessResponse>()
        .doc("Body SetConfirmationPolicyRequest {policy}."),
        Route::get("/api/conversations/{conversation_id}/budget", conversations::budget)
            .ok::<tandem_protocol::Budget>()
            .doc("(Tandem addition.) Budget {max_cost, max_tokens}: what the conversation may spend (US dollars; prompt and completion tokens of all its LLMs) before its run pauses; upstream's max_budget_per_task of the agent's LLM is the cost limit when max_cost is unset."),
        Route::put("/api/conversations/{conversation_id}/budget", conversations::set_budget)
            .body::<tandem_protocol::Budget>()
            .ok::<tandem_protocol::Budget>()
            .doc("(Tandem addition.) Body Budget {max_cost?, max_tokens?} (absent: no limit) → the budget. Reaching it pauses the run (status paused, state budget_reached {limit, spent_cost, spent_tokens, max_cost, max_tokens}); a run started while it is reached gets 409 naming what was spent. Raising it clears budget_reached. 422 naming a limit of 0 or less."),
        Route::post(
            "/api/conversations/{conversation_id}/security_analyzer",
            conversations::security_analyzer,
        )
        .body::<SetSecurityAnalyzerRequest>()
        .ok::<SuccessResponse>()
        .doc("Body SetSecurityAnalyzerRequest {security_analyzer|null}."),
        Route::post("/api/conversations/{conversation_id}/secrets", conversations::secrets)
            .body::<UpdateSecretsRequest>()
            .ok::<SuccessResponse>()
            .doc("Body UpdateSecretsRequest {secrets: {NAME: value|StaticSecret|LookupSecret}}."),
        Route::post("/api/conversations/{conversation_id}/ask_agent", conversations::ask_agent)
            .body::<AskAgentRequest>()
            .ok::<AgentResponse>()
            .doc("Body AskAgentRequest {question} → AgentResponse {response}; a side LLM call, the conversation is unchanged; 502 when the LLM fails (retried once at most) or answers with a tool call only, 504 when it does not answer within 60 s."),
        Route::post("/api/conversations/{conversation_id}/condense", conversations::condense)
            .ok::<SuccessResponse>()
            .doc("Requests condensation of the history."),
        Route::get(
            "/api/conversations/{conversation_id}/agent_final_response",
            conversations::agent_final_response,
        )
        .ok::<AgentResponse>()
        .doc("AgentResponse: the last finish message or agent text."),
    ];
    let events_routes = [
        Route::get("/api/conversations/{conversation_id}/events/search", event_routes::search)
            .ok::<EventPage>()
            .doc("EventPage; ?page_id (id of the page's first event), limit (1..100), kind, source, body, timestamp__gte, timestamp__lt, sort_order=TIMESTAMP|TIMESTAMP_DESC."),
        Route::get("/api/conversations/{conversation_id}/events/count", event_routes::count)
            .response(Body::Integer)
            .doc("Number of events matching the search filters."),
        Route::get("/api/conversations/{conversation_id}/events/stream", event_routes::stream)
            .response(Body::sse::<Event>())
            .tandem()
            .doc("Server-Sent Events: the event socket's frames (full_state, ?resend_mode=all|since&after_timestamp replay, live events, full_state after each run)."),
        Route::get("/api/conversations/{conversation_id}/events/{event_id}", event_routes::get_one)
            .ok::<Event>()
            .doc("One event, 404 when unknown."),
        Route::get("/api/conversations/{conversation_id}/events", event_routes::batch)
            .request(Body::Strings)
            .response(Body::nullable_list::<Event>())
            .doc("Batch get: a JSON list of event ids in the GET body → [Event|null]."),
        Route::post("/api/conversations/{conversation_id}/events", event_routes::post)
            .body::<SendMessageRequest>()
            .ok::<SuccessResponse>()
            .doc("Body SendMessageRequest {role:user, content, run} → SuccessResponse."),
        Route::post(
            "/api/conversations/{conversation_id}/events/respond_to_confirmation",
            event_routes::respond,
        )
        .body::<ConfirmationResponseRequest>()
        .ok::<SuccessResponse>()
        .doc("Body ConfirmationResponseRequest {accept, reason}."),
        Route::post(
            "/api/conversations/{conversation_id}/events/approve_edited",
            event_routes::approve_edited,
        )
        .body::<ApproveEditedRequest>()
        .ok::<ApproveEditedResponse>()
        .tandem()
        .doc("Body ApproveEditedRequest {action_id, arguments}: that pending action runs once with these arguments in place of the agent's, its observation answering the original; the other pending actions keep waiting. 409 when it is not pending, 422 naming the field the tool rejects."),
    ];
    let bash_routes = [
        Route::post(
            "/api/conversations/{conversation_id}/bash/start_bash_command",
            bash_commands::conv_start,
        )
        .body::<ExecuteBashRequest>()
        .ok::<BashEvent>()
        .doc("Body ExecuteBashRequest → BashCommand at once (in the conversation's workspace; a relative cwd is below it); 422 when cwd is not an existing folder."),
        Route::post(
            "/api/conversations/{conversation_id}/bash/execute_bash_command",
            bash_commands::conv_execute,
        )
        .body::<ExecuteBashRequest>()
        .ok::<BashEvent>()
        .doc("Body ExecuteBashRequest → BashOutput when done."),
        Route::get(
            "/api/conversations/{conversation_id}/bash/bash_events/search",
            bash_commands::conv_search,
        )
        .ok::<BashEventPage>()
        .doc("BashEventPage; ?kind__eq, command_id__eq, sort_order, limit, page_id."),
        Route::get(
            "/api/conversations/{conversation_id}/bash/bash_events/{event_id}",
            bash_commands::conv_get_event,
        )
        .ok::<BashEvent>()
        .doc("One bash event."),
        Route::post(
            "/api/conversations/{conversation_id}/bash/bash_commands/{command_id}/stop",
            bash_commands::conv_stop,
        )
        .ok::<SuccessResponse>()
        .doc("Kills a running command."),
        Route::post("/api/bash/start_bash_command", bash_commands::start)
            .body::<ExecuteBashRequest>()
            .ok::<BashEvent>()
            .doc("Body ExecuteBashRequest → BashCommand at once; a relative cwd is below the server's workspace; 422 when cwd is not an existing folder."),
        Route::post("/api/bash/execute_bash_command", bash_commands::execute)
            .body::<ExecuteBashRequest>()
            .ok::<BashEvent>()
            .doc("Body ExecuteBashRequest → BashOutput when done."),
        Route::get("/api/bash/bash_events/search", bash_commands::search)
            .ok::<BashEventPage>()
            .doc("BashEventPage; ?kind__eq, command_id__eq, sort_order, limit, page_id."),
        Route::get("/api/bash/bash_events/", bash_commands::batch)
            .response(Body::nullable_list::<BashEvent>())
            .doc("Batch get: ?ids= → [BashEvent|null]."),
        Route::get("/api/bash/bash_events/{event_id}", bash_commands::get_event)
            .ok::<BashEvent>()
            .doc("One bash event."),
        Route::delete("/api/bash/bash_events", bash_commands::clear)
            .ok::<SuccessResponse>()
            .doc("Forgets every bash event."),
        Route::post("/api/bash/bash_commands/{command_id}/stop", bash_commands::stop)
            .ok::<SuccessResponse>()
            .doc("Kills a running command."),
    ];
    let browser_routes = [
        Route::get("/api/conversations/{conversation_id}/browser/state", crate::takeover::state_route)
            .ok::<BrowserState>()
            .tandem()
            .doc("BrowserState: who drives, URL, title, tabs, the agent's pending handoff, whether Chromium runs; 409 when the agent has no browser tools."),
        Route::post("/api/conversations/{conversation_id}/browser/take_control", crate::takeover::take_control_route)
            .ok::<BrowserState>()
            .tandem()
            .doc("A person takes control of the browser: the agent's browser actions are refused and its run pauses after the step in flight → BrowserState; 409 without browser tools."),
        Route::post("/api/conversations/{conversation_id}/browser/hand_back", crate::takeover::hand_back_route)
            .body::<HandBackRequest>()
            .ok::<BrowserState>()
            .tandem()
            .doc("Body HandBackRequest {note}: control returns to the agent, which is told the URL and title before and after and the note; a run the takeover paused resumes → BrowserState."),
    ];
    let files_routes = [
        Route::post("/api/conversations/{conversation_id}/file/upload", files::conv_upload)
            .request(Body::Multipart)
            .ok::<FileUploadResponse>()
            .body_limit(upload_limit)
            .doc("Multipart field `file`, ?path= inside the workspace (relative to its root) → FileUploadResponse; 403 outside; 422 for an empty or malformed path or a folder."),
        Route::get("/api/conversations/{conversation_id}/file/download", files::conv_download)
            .response(Body::Bytes)
            .doc("Raw bytes of ?path= inside the workspace; 403 outside; 422 for an empty or malformed path or a folder."),
        Route::post("/api/file/upload", files::upload)
            .request(Body::Multipart)
            .ok::<FileUploadResponse>()
            .body_limit(upload_limit)
            .doc("Multipart field `file`, ?path= absolute → FileUploadResponse; 422 for a relative or malformed path or a folder."),
        Route::get("/api/file/download", files::download)
            .response(Body::Bytes)
            .doc("Raw bytes of ?path= (absolute); 422 for a relative or malformed path or a folder."),
    ];
    let workspace_routes = [
        Route::get("/api/conversations/{conversation_id}/workspace/tree", workspace::tree)
            .ok::<WorkspaceTree>()
            .tandem()
            .doc("WorkspaceTree of the workspace (or ?path= below it); 422 when ?path= is a file."),
        Route::get("/api/conversations/{conversation_id}/workspace/file", workspace::read_file)
            .ok::<WorkspaceFile>()
            .tandem()
            .doc("WorkspaceFile for ?path= (text, size, mtime_ms, binary); 422 over 10 MB, for a folder or a malformed path; 403 outside."),
        Route::put("/api/conversations/{conversation_id}/workspace/file", workspace::write_file)
            .body::<WriteWorkspaceFileRequest>()
            .ok::<WorkspaceFile>()
            .tandem()
            .doc("Body WriteWorkspaceFileRequest {path, content, expected_mtime_ms?}; 409 when the file changed since; 422 naming `path` when it is empty, malformed or a folder."),
        Route::get("/api/conversations/{conversation_id}/workspace/diff", workspace::workspace_diff)
            .ok::<WorkspaceDiff>()
            .tandem()
            .doc("WorkspaceDiff: unified diffs of everything changed since the conversation started."),
        Route::post("/api/conversations/{conversation_id}/workspace/reject-hunk", workspace::reject_hunk)
            .body::<RejectHunkRequest>()
            .ok::<RejectHunkResponse>()
            .tandem()
            .doc("Body RejectHunkRequest {path, hunk (as the diff shows it), reason?} → RejectHunkResponse: that hunk alone is reverted on disk (all of an added file: the file is removed) and the agent reads at its next step which hunk was rejected and why. 409 when the hunk is no longer in the file's diff; 422 naming the field for a malformed path or hunk, a reason over 4000 characters, or a binary file; 403 outside the workspace."),
    ];
    let checkpoint_routes = [
        Route::get("/api/conversations/{conversation_id}/checkpoints", checkpoint_routes::list)
            .ok::<CheckpointList>()
            .tandem()
            .doc("CheckpointList: the workspace's checkpoints, oldest first, each with its id, its event (an action: before it ran; an observation: after), who made its changes (agent with tool_name, person, rewind) and the paths added, modified and deleted since the checkpoint before."),
        Route::post("/api/conversations/{conversation_id}/rewind", checkpoint_routes::rewind)
            .body::<RewindRequest>()
            .ok::<RewindResponse>()
            .tandem()
            .doc("Body RewindRequest {event_id | checkpoint_id, restore: code|chat|both, files: agent|all, dry_run} → RewindResponse {restored, skipped with reasons, undo_checkpoint_id, diff}: the workspace as it was when that event was recorded. Only paths that differ are written; with files: agent (default) only paths the agent changed since, a person's edits skipped and named. A checkpoint is taken first: rewinding to undo_checkpoint_id undoes the rewind. chat moves the conversation's head to the event (navigate), both does both. 409 while the agent runs or without checkpoints; 422 naming event_id or checkpoint_id when unknown."),
        Route::post("/api/conversations/{conversation_id}/fork", checkpoint_routes::fork)
            .body::<ForkConversationRequest>()
            .ok::<ConversationInfo>()
            .creates()
            .doc("Body ForkConversationRequest {id?, title?, tags?, reset_metrics (default true), from_event_id?, workspace?: keep|restore|worktree (Tandem; worktree: a new git worktree of the workspace's repository on branch tandem/<fork id> under $TANDEM_HOME/worktrees, holding the workspace as at from_event_id, where the fork runs)} → 201 ConversationInfo of the fork: idle, the source's events (the branch up to from_event_id when given, its head there), the source's LLM with its key, forked_from_conversation_id/forked_from_event_id set. 404 naming from_event_id when unknown (as upstream); 422 naming the field for a bad id, title or tag key, or workspace: worktree outside a git repository or one without a commit; 409 when the id exists."),
        Route::get("/api/conversations/{conversation_id}/replay", replay_routes::replay)
            .ok::<ReplayState>()
            .tandem()
            .doc("ReplayState for ?event_id=E: the panes as of event E — terminal {screen (the agent's terminal's visible screen as text, rows joined by \\n), cols, rows, at_event_id} rebuilt from its recording, browser {frame_id, url}, workspace {tree, checkpoint_id, at_event_id} (the newest checkpoint at or before E); a lane that had recorded nothing by E is null, notes name what a damaged recording could not give. 422 naming event_id when missing or not an event of the conversation."),
        Route::get("/api/conversations/{conversation_id}/replay/frames/{frame_id}", replay_routes::frame)
            .response(Body::Bytes)
            .tandem()
            .doc("A recorded browser frame (image/jpeg), by the frame_id a ReplayState names. 422 naming frame_id when it was not recorded or its image is gone."),
        Route::get("/api/conversations/{conversation_id}/trace", replay_routes::trace)
            .response(Body::Bytes)
            .tandem()
            .doc("The conversation's trace (application/x-tandem-trace, a tar archive): trace.json (format, version, conversation_id, workspace), conversation/ (base_state.json, meta.json, events/, checkpoints.jsonl, replay/ with the terminal casts and browser frames, every text file masked with the conversation's secrets) and checkpoints.bundle (a git bundle of the checkpoints' trees). `tandem replay open FILE` opens it with no server state."),
        Route::post("/api/conversations/{conversation_id}/export", move_routes::export)
            .body::<ExportConversationRequest>()
            .response(Body::Bytes)
            .tandem()
            .doc("Body ExportConversationRequest {force, include_replay, source_url?, llm_profile?} → the conversation's capsule (application/x-tandem-capsule, a tar archive): capsule.json (format, version, id, title, the workspace's commit and tree, the LLM by model and profile name, the secrets by name — never a key or a value), conversation/ (its files byte for byte, MCP credentials left out; replay/ with include_replay) and workspace.bundle (the workspace now and the checkpoints, as a git bundle), then capsule.sums.json (a SHA-256 of every entry). 409 while it runs or an action waits for approval (force: paused at the end of the step and the pending actions rejected), or once it moved (with moved_to)."),
        Route::post("/api/conversations/import", move_routes::import)
            .request(Body::Multipart)
            .ok::<ImportedConversation>()
            .creates()
            .body_limit(upload_limit)
            .tandem()
            .doc("Multipart `capsule` (a capsule from POST /api/conversations/{id}/export) and optional `options` (JSON ImportConversationOptions {working_dir?, llm?, secrets?, pending?}) → 201 ImportedConversation: the conversation with the same id and every event, paused where it was; its workspace written into working_dir (default: a new folder under the server's workspace root named after the conversation) and checked against the source's tree. 422 naming the cause for a capsule that is damaged, truncated, of another format or a newer version, or whose LLM this server cannot run (no profile with a key for it and no llm given); 409 when the id exists here (unless it is the record this conversation left when it moved away) or working_dir holds other files; 413 over the upload limit; 507 when this server's disk is full (nothing of it is kept)."),
        Route::post("/api/conversations/{conversation_id}/moved", move_routes::moved)
            .body::<MovedTo>()
            .ok::<MovedTo>()
            .tandem()
            .doc("Body MovedTo {url, conversation_id, last_event_id?}: the conversation continues there (after its import succeeded); here it becomes a read-only record — reads still answer, every write and every socket but the events' answers 409 {detail, code: moved, moved_to}. Repeating it is harmless; 409 while it runs, or when its newest event here is not last_event_id (it went on since the export)."),
        Route::get("/api/conversations/{conversation_id}/moved", move_routes::moved_record)
            .ok::<MovedTo>()
            .tandem()
            .doc("Where a conversation that moved away went (MovedTo), with workspace_base: the workspace commit this server still holds, unchanged, in the folder the conversation left. Export with it as base_commit and the capsule carries only what changed since; the import then brings that folder up to date. 404 when it did not move away."),
        Route::post("/api/conversations/{conversation_id}/arrival", move_routes::arrival)
            .body::<ArrivalRequest>()
            .ok::<ConversationInfo>()
            .tandem()
            .doc("Body ArrivalRequest {accept}: ends a move toward this server of a conversation imported with options.pending (until then it is read-only here: writes answer 409 {code: arriving}). accept: it runs here from now on (call it once the source is fenced) → ConversationInfo; reject: the arriving copy and the workspace folder its import made are deleted → 204 (409 when it is not arriving). Repeating either is harmless."),
        Route::post("/api/conversations/{conversation_id}/navigate", checkpoint_routes::navigate)
            .body::<NavigateConversationRequest>()
            .ok::<ConversationInfo>()
            .doc("Body NavigateConversationRequest {event_id|null} → ConversationInfo with the new leaf_event_id: the agent's next run continues from that event (null: the empty tree); every branch stays in the log. 409 while running; 404 naming event_id when unknown (as upstream)."),
    ];
    let secrets_routes = [
        Route::put("/api/settings/secrets", secrets::put)
            .body::<CreateSecretRequest>()
            .ok::<SecretInfo>()
            .doc("Body CreateSecretRequest {name, value, description?} → SecretInfo."),
        Route::get("/api/settings/secrets", secrets::list)
            .ok::<SecretList>()
            .doc("SecretList: names and descriptions, never values."),
        Route::get("/api/settings/secrets/{name}", secrets::get_value)
            .response(Body::Text)
            .doc("The secret's value as text/plain."),
        Route::delete("/api/settings/secrets/{name}", secrets::delete)
            .ok::<DeletedResponse>()
            .doc("DeletedResponse."),
    ];
    let sockets_routes = [
        Route::socket("/sockets/events/{conversation_id}", sockets::events::handler)
            .request(Body::frames(vec![
                schema::<SocketAuthFrame>(),
                schema::<SendMessageRequest>(),
            ]))
            .response(Body::frames(vec![schema::<Event>()]))
            .doc("WebSocket: first-frame auth {type:auth, session_api_key}; full_state, ?resend_mode=all|since replay, live events, full_state after each run; client Message frames run the agent; close 4001/4004."),
        Route::socket("/sockets/bash-events", sockets::bash::handler)
            .request(Body::frames(vec![
                schema::<SocketAuthFrame>(),
                schema::<ExecuteBashRequest>(),
            ]))
            .response(Body::frames(vec![schema::<BashEvent>()]))
            .doc("WebSocket: BashCommand/BashOutput frames; client ExecuteBashRequest frames start commands."),
        Route::socket("/sockets/browser/{conversation_id}", sockets::browser::handler)
            .request(Body::frames(vec![schema::<BrowserClientFrame>()]))
            .response(Body::frames(vec![schema::<BrowserServerFrame>()]))
            .tandem()
            .doc("WebSocket: the agent's browser live; first-frame auth; state frames on connect and on every change, JPEG screencast frames (width/height in CSS pixels of the viewport); client take_control, hand_back {note}, and while the person drives mouse/key/text/navigate/back/forward/reload/switch_tab frames; refused input gets an error frame; close 4001/4004."),
        Route::socket("/sockets/pty/{conversation_id}", sockets::pty::handler)
            .request(Body::frames(vec![schema::<PtyClientFrame>()]))
            .response(Body::terminal(vec![schema::<PtyServerFrame>()]))
            .tandem()
            .doc("WebSocket: the agent's terminal (or ?mode=shell a new shell in the workspace); binary output frames; client {type:input,data} and {type:resize,rows,cols}."),
        Route::socket("/sockets/vnc/{conversation_id}", sockets::vnc::handler)
            .request(Body::frames(vec![schema::<SocketAuthFrame>()]))
            .response(Body::terminal(vec![schema::<VncServerFrame>()]))
            .tandem()
            .doc("WebSocket: the server's desktop (its VNC server, TANDEM_VNC_ADDR) for noVNC; first-frame auth, then raw RFB bytes in binary frames both ways from the server's RFB 003.008 greeting on; text frames after auth are ignored; close 4001 wrong key, 4004 unknown conversation, error frame + 4004 when the server has no desktop (server_info.desktop false), error frame + 1011 when its VNC server cannot be reached."),
    ];
    let mcp_routes = [Route::post("/api/mcp/test", mcp::test)
        .body::<tandem_protocol::api::McpTestRequest>()
        .ok::<tandem_protocol::api::McpTestResponse>()
        .doc("Body MCPTestRequest {name?, server, timeout?, tool_call?} → 200 MCPTestSuccess {ok:true, tools, tool_result?} or MCPTestFailure {ok:false, error, error_kind: timeout|connection|unknown}; connects to the server, lists its tools and closes it; 422 naming the field for a malformed server entry.")];
    let profiles_routes = [
        Route::get("/api/profiles", profile_routes::list)
            .ok::<ProfileListResponse>()
            .doc("ProfileListResponse: saved LLM profiles (never their keys) and the active one."),
        Route::get("/api/profiles/{name}", profile_routes::get_one)
            .ok::<ProfileDetailResponse>()
            .doc("ProfileDetailResponse: the profile's LLM config with its secrets masked (api_key null, api_key_set); 404 when unknown."),
        Route::post("/api/profiles/{name}", profile_routes::save)
            .body::<SaveProfileRequest>()
            .ok::<ProfileMutationResponse>()
            .creates()
            .doc("Body SaveProfileRequest {llm, include_secrets?} → 201 ProfileMutationResponse; saves (or replaces) the profile, its key encrypted at rest; 409 past 50 profiles."),
        Route::delete("/api/profiles/{name}", profile_routes::delete)
            .ok::<ProfileMutationResponse>()
            .doc("ProfileMutationResponse; deletes the profile (idempotent)."),
        Route::post("/api/profiles/{name}/activate", profile_routes::activate)
            .ok::<ActivateProfileResponse>()
            .doc("ActivateProfileResponse; records the active profile; 404 when unknown."),
    ];
    let gateway_routes = [
        Route::get("/v1/models", gateway::models)
            .bearer()
            .ok::<ModelList>()
            .doc("ModelList: every LLM profile as openhands_{profile}."),
        Route::post("/v1/chat/completions", gateway::chat)
            .bearer()
            .body::<ChatCompletionRequest>()
            .ok::<ChatCompletionResponse>()
            .doc("ChatCompletionRequest → ChatCompletionResponse, or with stream:true chat.completion.chunk SSE (a last usage chunk with stream_options.include_usage); every answer names its conversation in X-OpenHands-ServerConversation-ID, which a request sends to continue it; errors in OpenAI's shape."),
        Route::post("/v1/responses", gateway::responses)
            .bearer()
            .body::<ResponseRequest>()
            .ok::<ResponseObject>()
            .doc("ResponseRequest → ResponseObject (output_text is the agent's final answer), or with stream:true the response.* SSE events ending in response.completed; previous_response_id continues its conversation; errors in OpenAI's shape."),
    ];
    [
        tagged("server", server_routes),
        tagged("conversations", conversations_routes),
        tagged("events", events_routes),
        tagged("bash", bash_routes),
        tagged("browser", browser_routes),
        tagged("files", files_routes),
        tagged("workspace", workspace_routes),
        tagged("checkpoints", checkpoint_routes),
        tagged("secrets", secrets_routes),
        tagged("sockets", sockets_routes),
        tagged("profiles", profiles_routes),
        tagged("MCP", mcp_routes),
        tagged("gateway", gateway_routes),
    ]
    .concat()
}

/// Every route, documented.
pub fn route_docs() -> Vec<RouteDoc> {
    table(0).into_iter().map(|r| r.doc).collect()
}

/// The router of every route (without state and middleware).
pub fn router(upload_limit: usize) -> Router<AppState> {
    table(upload_limit)
        .into_iter()
        .fold(Router::new(), |router, r| {
            router.route(r.doc.path, r.handler)
        })
}
