// Names for the generated wire types the UI uses. Nothing here is a hand-written copy of a
// server type: every alias points into generated.ts (regenerate with `npm run -w ui gen:api`).
// When the generator's source changes (upstream → our server's OpenAPI), only this file adapts.
import type { components, paths } from "./generated";

export type { paths };
type S = components["schemas"];

/** Every event kind the server may send (a union discriminated by `kind`). */
export type WireEvent = S["Event"];
export type EventKind = WireEvent["kind"];
export type ActionEvent = S["ActionEvent"];
export type ObservationEvent = S["ObservationEvent"];
export type MessageEvent = S["MessageEvent"];
export type AgentErrorEvent = S["AgentErrorEvent"];
export type UserRejectObservation = S["UserRejectObservation"];
export type ConversationStateUpdateEvent = S["ConversationStateUpdateEvent"];
export type ConversationErrorEvent = S["ConversationErrorEvent"];
export type StreamingDeltaEvent = S["StreamingDeltaEvent"];
export type SystemPromptEvent = S["SystemPromptEvent"];
export type Condensation = S["Condensation"];

export type FileEditorObservation = S["FileEditorObservation"];
export type TerminalObservation = S["TerminalObservation"];
export type TextContent = S["TextContent"];
export type SecurityRisk = S["SecurityRisk"];

// Taken from the route's response rather than the component: upstream has Input/Output
// variants of nested schemas and the route's one is what the server sends.
export type ConversationPage =
  paths["/api/conversations/search"]["get"]["responses"][200]["content"]["application/json"];
export type ConversationInfo = ConversationPage["items"][number];
export type ExecutionStatus = S["ConversationExecutionStatus"];
export type StartConversationRequest = S["StartConversationRequest"];
export type SendMessageRequest = S["SendMessageRequest"];
export type ConfirmationPolicy = S["ConfirmationPolicyBase-Input"];
export type ConfirmationPolicyKind = ConfirmationPolicy["kind"];
export type ConversationStats = S["ConversationStats"];
export type Metrics = S["Metrics"];
export type TokenUsage = S["TokenUsage"];

/** Event sources as the wire names them. */
export type EventSource = WireEvent["source"];
