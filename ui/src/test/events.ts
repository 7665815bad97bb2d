// Event builders for tests, shaped like the upstream frames in client_trace.md.
import type { WireEvent } from "../api/types";

let n = 0;
const ts = () => new Date(Date.UTC(2026, 10, 22, 12, 0, 0, n)).toISOString().replace("Z", "");
export const nextId = () => `00000000-0000-4000-8000-${String(++n).padStart(12, "0")}`;

/** Test boundary: builders produce plain JSON as the server would send it. */
const ev = (o: Record<string, unknown>): WireEvent => ({ id: nextId(), timestamp: ts(), ...o }) as unknown as WireEvent;

export const userMessage = (text: string) =>
  ev({ kind: "MessageEvent", source: "user", llm_message: { role: "user", content: [{ type: "text", text }] } });
export const agentMessage = (text: string) =>
  ev({ kind: "MessageEvent", source: "agent", llm_message: { role: "assistant", content: [{ type: "text", text }] } });
export const action = (command: string, risk = "UNKNOWN", callId = `call_${n + 1}`) =>
  ev({
    kind: "ActionEvent",
    source: "agent",
    thought: [],
    tool_name: "terminal",
    tool_call_id: callId,
    tool_call: { id: callId, name: "terminal", arguments: JSON.stringify({ command }), origin: "completion" },
    action: { command, is_input: false, kind: "TerminalAction" },
    llm_response_id: "r",
    security_risk: risk,
    summary: `terminal: ${command}`,
  });
export const observation = (a: WireEvent, text: string) =>
  ev({
    kind: "ObservationEvent",
    source: "environment",
    tool_name: "terminal",
    tool_call_id: (a as { tool_call_id?: string }).tool_call_id,
    action_id: a.id,
    observation: { content: [{ type: "text", text }], is_error: false, exit_code: 0, kind: "TerminalObservation" },
  });
export const rejection = (a: WireEvent, reason: string) =>
  ev({
    kind: "UserRejectObservation",
    source: "environment",
    tool_name: "terminal",
    tool_call_id: (a as { tool_call_id?: string }).tool_call_id,
    action_id: a.id,
    rejection_reason: reason,
  });
export const status = (value: string) => ev({ kind: "ConversationStateUpdateEvent", source: "environment", key: "execution_status", value });
export const stats = (cost: number, prompt: number, completion: number) =>
  ev({
    kind: "ConversationStateUpdateEvent",
    source: "environment",
    key: "stats",
    value: {
      usage_to_metrics: {
        agent: { accumulated_cost: cost, accumulated_token_usage: { prompt_tokens: prompt, completion_tokens: completion, per_turn_token: prompt + completion } },
        condenser: { accumulated_cost: 0, accumulated_token_usage: { prompt_tokens: 0, completion_tokens: 0 } },
      },
    },
  });
export const fullState = (value: Record<string, unknown>) =>
  ev({ kind: "ConversationStateUpdateEvent", source: "environment", key: "full_state", value });
export const delta = (content: string) => ev({ kind: "StreamingDeltaEvent", source: "agent", content });
/** Tandem's run queue: `{"ahead": n}` when the run starts waiting, null when it gets its slot. */
export const queued = (ahead: number | null) =>
  ev({ kind: "ConversationStateUpdateEvent", source: "environment", key: "queued_ahead", value: ahead === null ? null : { ahead } });
/** Tandem's budget pause (`budget_reached`), or null once the budget is raised. */
export const budgetReached = (value: Record<string, unknown> | null) =>
  ev({ kind: "ConversationStateUpdateEvent", source: "environment", key: "budget_reached", value });
/** Tandem's budget as the state records it. */
export const budget = (value: Record<string, unknown>) => ev({ kind: "ConversationStateUpdateEvent", source: "environment", key: "budget", value });
