//! `tandem-protocol`: the wire types of the Tandem agent engine.
//!
//! Every type here serialises to the same JSON as the OpenHands agent server 1.58: events are
//! objects discriminated by `kind` (the upstream class name), fields are snake_case, and a field
//! that is `None` is left out rather than written as `null`. Reading is tolerant: unknown fields
//! are kept (and written back unchanged) and unknown `kind`s load as [`Event::Unknown`] /
//! [`Action::Unknown`] / [`Observation::Unknown`] instead of failing.
//!
//! This crate holds data only: no tokio, no IO, no HTTP. Entry points: [`Event`] (the event
//! log's element), [`Message`] (what goes to and comes from the LLM), [`ConversationState`]
//! (what `base_state.json` holds), and the tool [`Action`]s / [`Observation`]s, whose structs
//! are also the tools' typed inputs and outputs ([`tool_io`]: the schema the model reads and
//! the lenient parsing of its arguments).

mod action;
pub mod api;
mod browser;
mod event;
mod kind;
mod mcp;
mod message;
mod observation;
mod schema;
pub use schema::Variant;
mod search;
mod state;
mod task;
pub mod tool_io;

pub use action::{
    Action, FileEditorAction, FinishAction, TaskItem, TaskTrackerAction, TerminalAction,
    ThinkAction,
};
pub use browser::{
    BrowserClickAction, BrowserCloseTabAction, BrowserGetContentAction, BrowserGetStateAction,
    BrowserGetStorageAction, BrowserGoBackAction, BrowserListTabsAction, BrowserNavigateAction,
    BrowserObservation, BrowserRequestHandoffAction, BrowserScrollAction, BrowserSetStorageAction,
    BrowserStartRecordingAction, BrowserStopRecordingAction, BrowserSwitchTabAction,
    BrowserTypeAction,
};
pub use event::{
    ActionEvent, AgentErrorEvent, Condensation, CondensationRequest, ConversationErrorEvent,
    ConversationStateUpdateEvent, ErrorClassification, Event, EventBase, InterruptEvent,
    MessageEvent, ObservationEvent, PauseEvent, ServerErrorEvent, Source, StreamingDeltaEvent,
    SystemPromptEvent, UserRejectObservation, new_event_id, now_timestamp,
};
pub use mcp::{McpToolAction, McpToolObservation};
pub use message::{
    Content, ImageContent, Message, MessageToolCall, Role, TextContent, ThinkingBlock,
};
pub use observation::{
    CmdOutputMetadata, FileEditorObservation, FinishObservation, Observation,
    TaskTrackerObservation, TerminalObservation, ThinkObservation,
};
pub use search::{GlobAction, GlobObservation, GrepAction, GrepObservation};
pub use state::{
    AgentSpec, Budget, BudgetError, ConfirmationPolicy, ConversationState, ConversationStats,
    ExecutionStatus, LlmConfig, Metrics, ResponseLatency, SecurityRisk, TokenUsage, ToolSpec,
    WorkspaceSpec,
};
pub use task::{DEFAULT_SUBAGENT, TaskAction, TaskObservation};
pub use tool_io::{ToolInput, ToolInputError, ToolOutput};

/// A JSON object: the unknown fields a type keeps so that they are written back unchanged.
pub type Extra = serde_json::Map<String, serde_json::Value>;

pub use api::{
    ActivateProfileResponse, ChatChunkChoice, ChatCompletionChunk, ChatDelta, InputTokensDetails,
    OutputTokensDetails, ProfileDetailResponse, ProfileInfo, ProfileListResponse,
    ProfileMutationResponse, ResponseError, ResponseInput, ResponseInputItem, ResponseObject,
    ResponseOutputMessage, ResponseOutputText, ResponseRequest, ResponseStreamEvent, ResponseUsage,
    SaveProfileRequest, StreamOptions,
};
pub use api::{
    AgentResponse, ApproveEditedRequest, ApproveEditedResponse, AskAgentRequest, BashCommand,
    BashEvent, BashEventPage, BashOutput, ChatChoice, ChatCompletionRequest,
    ChatCompletionResponse, ChatMessage, ChatUsage, ConfirmationResponseRequest, ConversationInfo,
    ConversationPage, CreateSecretRequest, DeletedResponse, ErrorResponse, EventPage,
    ExecuteBashRequest, FileDiff, FileUploadResponse, ModelEntry, ModelList, OpenAiError,
    OpenAiErrorResponse, PtyClientFrame, PtyServerFrame, RejectHunkRequest, RejectHunkResponse,
    RuntimeInfo, SecretInfo, SecretList, SendMessageRequest, ServerInfo,
    SetConfirmationPolicyRequest, SetSecurityAnalyzerRequest, SocketAuthFrame,
    StartConversationRequest, StatusResponse, SuccessResponse, UpdateConversationRequest,
    UpdateSecretsRequest, ValidationErrorItem, ValidationErrorResponse, VncServerFrame,
    WorkspaceDiff, WorkspaceEntry, WorkspaceFile, WorkspaceTree, WriteWorkspaceFileRequest,
};
pub use api::{
    BrowserClientFrame, BrowserDriver, BrowserHandoff, BrowserServerFrame, BrowserState,
    BrowserTab, HandBackRequest,
};
