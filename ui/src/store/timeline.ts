// The pure reducer that turns a conversation's event stream into what the panes show: timeline
// items (each action grouped with its answer), the pending approvals, the execution status,
// cost and tokens, the run's place in the server's run queue, the budget it paused on, the text the
// agent is streaming, and the messages queued by the person.
//
// It is pure (state, input) → state and never mutates its input, so it can be replayed and
// tested; replayed events (reconnect catch-up, `resend_mode=all`) are dropped by id, so feeding
// the same event twice is harmless. Batches are cheap: one copy of the item list per batch, not
// per event, which keeps 10,000 events in a few milliseconds.
import type {
  ActionEvent,
  AgentErrorEvent,
  ConversationStateUpdateEvent,
  ExecutionStatus,
  MessageEvent,
  ObservationEvent,
  UserRejectObservation,
  WireEvent,
} from "../api/types";
import type { Budget } from "../api/tandemTypes";
import { BUDGET_KEY, BUDGET_REACHED_KEY, readBudget, readBudgetReached, type BudgetReached } from "../features/budget/budget";
import { QUEUED_AHEAD_KEY, queuePlaceOf } from "../features/chat/queue";
import { initialBranches, isNavigation, placeEvent, type Branches } from "./branch";

/** What answered an action: its observation, a rejection, or an agent error. */
export type ActionResult = ObservationEvent | UserRejectObservation | AgentErrorEvent;

/** One row of the timeline. */
export type TimelineItem =
  | { type: "message"; id: string; event: MessageEvent }
  | { type: "action"; id: string; event: ActionEvent; result?: ActionResult }
  /** An observation, rejection or error whose action we never saw (e.g. condensed away). */
  | { type: "result"; id: string; event: ActionResult }
  | { type: "state"; id: string; event: ConversationStateUpdateEvent }
  | { type: "other"; id: string; event: WireEvent };

export interface Usage {
  cost: number;
  promptTokens: number;
  completionTokens: number;
  cacheReadTokens: number;
  reasoningTokens: number;
  /** The largest context window usage reported by a single call. */
  contextTokens: number;
}

/** A message the person sent that the server has not echoed back as a MessageEvent yet. */
export interface QueuedMessage {
  localId: string;
  text: string;
  failed?: string;
}

export interface TimelineState {
  /** Ids of every event applied (persisted or not), for dedupe. */
  seen: ReadonlySet<string>;
  items: readonly TimelineItem[];
  /** action event id / tool_call_id → index in `items`, to attach results. */
  actionIndex: Readonly<Record<string, number>>;
  /** Ids of actions with no answer yet, in arrival order. */
  openActions: readonly string[];
  status: ExecutionStatus | null;
  policy: string | null;
  model: string | null;
  usage: Usage;
  /** While the run waits for a slot (a Tandem server's run queue): how many runs are ahead; else null. */
  queuedAhead: number | null;
  /** The run paused on its budget: what was spent and the limits; null otherwise (or once raised). */
  budgetReached: BudgetReached | null;
  /** The budget as the state last said (null: not said, e.g. an upstream server). */
  budget: Budget | null;
  /** Agent text and reasoning streamed by StreamingDeltaEvent, cleared by the final event. */
  streaming: { content: string; reasoning: string } | null;
  queued: readonly QueuedMessage[];
  /** Last persisted event id: where reconnect catch-up resumes from. */
  lastPersistedId: string | null;
  /** Where each event hangs and the head: the timeline shows the active branch (branch.ts). */
  branches: Branches;
}

export type TimelineInput =
  | { type: "events"; events: readonly WireEvent[] }
  | { type: "queue"; localId: string; text: string }
  | { type: "queueFailed"; localId: string; error: string }
  | { type: "dequeue"; localId: string }
  /** The run's place in the queue as the server answered a poll (it changes without an event). */
  | { type: "queuePlace"; ahead: number };

export const emptyUsage: Usage = {
  cost: 0,
  promptTokens: 0,
  completionTokens: 0,
  cacheReadTokens: 0,
  reasoningTokens: 0,
  contextTokens: 0,
};

export function initialTimeline(): TimelineState {
  return {
    seen: new Set(),
    items: [],
    actionIndex: {},
    openActions: [],
    status: null,
    policy: null,
    model: null,
    usage: emptyUsage,
    queuedAhead: null,
    budgetReached: null,
    budget: null,
    streaming: null,
    queued: [],
    lastPersistedId: null,
    branches: initialBranches(),
  };
}

export function timelineReducer(state: TimelineState, input: TimelineInput): TimelineState {
  switch (input.type) {
    case "events":
      return applyEvents(state, input.events);
    case "queue":
      return { ...state, queued: [...state.queued, { localId: input.localId, text: input.text }] };
    case "queueFailed":
      return {
        ...state,
        queued: state.queued.map((q) => (q.localId === input.localId ? { ...q, failed: input.error } : q)),
      };
    case "dequeue":
      return { ...state, queued: state.queued.filter((q) => q.localId !== input.localId) };
    case "queuePlace":
      // A poll answered after the run left the queue must not put it back.
      return state.queuedAhead === null || state.queuedAhead === input.ahead ? state : { ...state, queuedAhead: input.ahead };
  }
}

/** Events that exist only on the socket: never persisted, never a catch-up anchor. */
function isTransient(ev: WireEvent): boolean {
  const kind: string = ev.kind;
  return (
    kind === "StreamingDeltaEvent" ||
    // An upstream server's streamed tokens (no kind of Tandem's).
    kind === "TokenEvent" ||
    kind === "ServerErrorEvent" ||
    (ev.kind === "ConversationStateUpdateEvent" && ev.key === "full_state")
  );
}

/** Applies a batch; copies the containers once, then works on the copies. */
function applyEvents(prev: TimelineState, events: readonly WireEvent[]): TimelineState {
  if (events.length === 0) return prev;
  const seen = new Set(prev.seen);
  const items = prev.items.slice();
  const actionIndex: Record<string, number> = { ...prev.actionIndex };
  let open = prev.openActions.slice();
  let { status, policy, model, usage, queuedAhead, budgetReached, budget, streaming, queued, lastPersistedId } = prev;
  const parents = new Map(prev.branches.parents);
  let { head, navigated } = prev.branches;
  let changed = false;

  for (const ev of events) {
    const id = ev.id;
    // Events without an id cannot be deduped; the server always sends one, so skip the rest.
    if (!id) continue;
    if (seen.has(id)) continue;
    seen.add(id);
    changed = true;
    if (!isTransient(ev)) {
      lastPersistedId = id;
      head = placeEvent(parents, head, ev);
      navigated ||= isNavigation(ev);
    }

    switch (ev.kind) {
      case "StreamingDeltaEvent": {
        const s = streaming ?? { content: "", reasoning: "" };
        streaming = {
          content: s.content + (ev.content ?? ""),
          reasoning: s.reasoning + (ev.reasoning_content ?? ""),
        };
        continue;
      }
      case "ConversationStateUpdateEvent": {
        const u = applyStateUpdate(ev, { status, policy, model, usage, queuedAhead, budgetReached, budget });
        ({ status, policy, model, usage, queuedAhead, budgetReached, budget } = u);
        // full_state snapshots are not history; field updates are shown (filterable).
        if (ev.key !== "full_state") items.push({ type: "state", id, event: ev });
        continue;
      }
      case "MessageEvent": {
        if (ev.source === "agent") streaming = null;
        if (ev.source === "user" && queued.length > 0) queued = dropEchoed(queued, ev);
        items.push({ type: "message", id, event: ev });
        continue;
      }
      case "ActionEvent": {
        streaming = null;
        actionIndex[id] = items.length;
        if (ev.tool_call_id) actionIndex[`call:${ev.tool_call_id}`] = items.length;
        items.push({ type: "action", id, event: ev });
        open.push(id);
        continue;
      }
      case "ObservationEvent":
      case "UserRejectObservation":
      case "AgentErrorEvent": {
        const at = findAction(actionIndex, ev);
        const target = at === undefined ? undefined : items[at];
        if (at !== undefined && target?.type === "action" && !target.result) {
          items[at] = { ...target, result: ev };
          open = open.filter((a) => a !== target.id);
        } else {
          items.push({ type: "result", id, event: ev });
        }
        continue;
      }
      case "ConversationErrorEvent":
        streaming = null;
        status = "error";
        items.push({ type: "other", id, event: ev });
        continue;
      default:
        items.push({ type: "other", id, event: ev });
    }
  }

  if (!changed) return prev;
  return {
    seen,
    items,
    actionIndex,
    openActions: open,
    status,
    policy,
    model,
    usage,
    queuedAhead,
    budgetReached,
    budget,
    streaming,
    queued,
    lastPersistedId,
    branches: { parents, head, navigated },
  };
}

function findAction(index: Record<string, number>, ev: ActionResult): number | undefined {
  const byId = "action_id" in ev && typeof ev.action_id === "string" && ev.action_id ? index[ev.action_id] : undefined;
  if (byId !== undefined) return byId;
  return ev.tool_call_id ? index[`call:${ev.tool_call_id}`] : undefined;
}

/** The first queued message with the same text leaves the queue when the server echoes it. */
function dropEchoed(queued: readonly QueuedMessage[], ev: MessageEvent): readonly QueuedMessage[] {
  const text = messageText(ev);
  const i = queued.findIndex((q) => q.text === text);
  return i < 0 ? queued : [...queued.slice(0, i), ...queued.slice(i + 1)];
}

export function messageText(ev: MessageEvent): string {
  return (ev.llm_message.content ?? [])
    .map((c) => (c.type === "text" ? c.text : ""))
    .join("");
}

interface Derived {
  status: ExecutionStatus | null;
  policy: string | null;
  model: string | null;
  usage: Usage;
  queuedAhead: number | null;
  budgetReached: BudgetReached | null;
  budget: Budget | null;
}

// `value` is typed `unknown` by the schema (it depends on `key`); read it defensively.
function applyStateUpdate(ev: ConversationStateUpdateEvent, d: Derived): Derived {
  const value: unknown = ev.value;
  switch (ev.key) {
    case "execution_status":
      return typeof value === "string" ? { ...d, status: value as ExecutionStatus } : d;
    case "confirmation_policy":
      return { ...d, policy: policyKind(value) ?? d.policy };
    case "stats":
      return { ...d, usage: usageFromStats(value) ?? d.usage };
    // Tandem's: the value is null when the run leaves the queue, or once the budget is raised.
    case QUEUED_AHEAD_KEY:
      return { ...d, queuedAhead: queuePlaceOf(value) };
    case BUDGET_REACHED_KEY:
      return { ...d, budgetReached: readBudgetReached(value) };
    case BUDGET_KEY:
      return { ...d, budget: readBudget(value) };
    case "full_state": {
      if (!isRecord(value)) return d;
      const status = typeof value.execution_status === "string" ? (value.execution_status as ExecutionStatus) : d.status;
      const agent = isRecord(value.agent) ? value.agent : undefined;
      const llm = agent && isRecord(agent.llm) ? agent.llm : undefined;
      return {
        status,
        policy: policyKind(value.confirmation_policy) ?? d.policy,
        model: typeof llm?.model === "string" ? llm.model : d.model,
        usage: usageFromStats(value.stats) ?? d.usage,
        // The whole state: a key it lacks is not set (Tandem keeps these among its extra fields).
        queuedAhead: queuePlaceOf(value[QUEUED_AHEAD_KEY]),
        budgetReached: readBudgetReached(value[BUDGET_REACHED_KEY]),
        budget: readBudget(value[BUDGET_KEY]),
      };
    }
    default:
      return d;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function policyKind(v: unknown): string | null {
  return isRecord(v) && typeof v.kind === "string" ? v.kind : null;
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/** Sums `usage_to_metrics` (agent, condenser, …) into one figure for the status bar. */
export function usageFromStats(stats: unknown): Usage | null {
  if (!isRecord(stats) || !isRecord(stats.usage_to_metrics)) return null;
  const u = { ...emptyUsage };
  for (const m of Object.values(stats.usage_to_metrics)) {
    if (!isRecord(m)) continue;
    u.cost += num(m.accumulated_cost);
    const t = isRecord(m.accumulated_token_usage) ? m.accumulated_token_usage : {};
    u.promptTokens += num(t.prompt_tokens);
    u.completionTokens += num(t.completion_tokens);
    u.cacheReadTokens += num(t.cache_read_tokens);
    u.reasoningTokens += num(t.reasoning_tokens);
    u.contextTokens = Math.max(u.contextTokens, num(t.per_turn_token));
  }
  return u;
}

/**
 * Actions waiting for the person: while the conversation waits for confirmation, every action
 * with no observation, rejection or error yet. (Outside that status open actions are simply
 * running.)
 */
export function pendingApprovals(state: TimelineState): ActionEvent[] {
  if (state.status !== "waiting_for_confirmation") return [];
  const out: ActionEvent[] = [];
  for (const id of state.openActions) {
    const at = state.actionIndex[id];
    const item = at === undefined ? undefined : state.items[at];
    if (item?.type === "action") out.push(item.event);
  }
  return out;
}
