// Names for the generated wire types the UI uses. Nothing here is a hand-written copy of a
// server type: every alias points into a generated file (regenerate with `npm run -w ui gen:api`).
// Events, actions and observations come from Tandem's own document (tandem.gen.ts), whose unions
// are discriminated by `kind`; upstream servers send the same shapes, plus kinds of their own
// that kinds.ts tells apart. The rest still comes from upstream's document (generated.ts).
import type { components, paths } from "./generated";
import type { components as TandemComponents } from "./tandem.gen";

export type { paths };
type S = components["schemas"];
type T = TandemComponents["schemas"];

/** Every event kind the server may send (a union discriminated by `kind`). */
export type WireEvent = T["Event"];
export type EventKind = WireEvent["kind"];
export type ActionEvent = T["ActionEvent"];
export type ObservationEvent = T["ObservationEvent"];
export type MessageEvent = T["MessageEvent"];
export type AgentErrorEvent = T["AgentErrorEvent"];
export type UserRejectObservation = T["UserRejectObservation"];
export type ConversationStateUpdateEvent = T["ConversationStateUpdateEvent"];
export type ConversationErrorEvent = T["ConversationErrorEvent"];
export type StreamingDeltaEvent = T["StreamingDeltaEvent"];
export type SystemPromptEvent = T["SystemPromptEvent"];
export type Condensation = T["Condensation"];

/** What a tool will do (`ActionEvent.action`), discriminated by `kind`. */
export type Action = T["Action"];
export type ActionKind = Action["kind"];
/** What a tool returned (`ObservationEvent.observation`), discriminated by `kind`. */
export type Observation = T["Observation"];
export type ObservationKind = Observation["kind"];

export type FileEditorObservation = T["FileEditorObservation"];
export type TerminalObservation = T["TerminalObservation"];
export type TextContent = T["TextContent"];
export type SecurityRisk = T["SecurityRisk"];

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
