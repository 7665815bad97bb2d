// The run queue of a Tandem server: it runs at most so many conversations at once, and a run
// beyond that waits its turn (the conversation is `running`, its state saying how many runs are
// ahead). Readers of both places that say so, and the status pill's words for it.
import { STATUS_LABEL } from "./format";

export const QUEUED_AHEAD_KEY = "queued_ahead";

/** The `queued_ahead` state update's value (`{"ahead": n}`) as a number; null once the run has its slot. */
export function queuePlaceOf(v: unknown): number | null {
  if (typeof v !== "object" || v === null) return null;
  const ahead = (v as { ahead?: unknown }).ahead;
  return typeof ahead === "number" && Number.isFinite(ahead) && ahead >= 0 ? ahead : null;
}

/** `ConversationInfo.queued_ahead` (absent unless the run waits), read from any server's answer. */
export function infoQueuedAhead(info: unknown): number | null {
  if (typeof info !== "object" || info === null) return null;
  const ahead = (info as { queued_ahead?: unknown }).queued_ahead;
  return typeof ahead === "number" && Number.isFinite(ahead) && ahead >= 0 ? ahead : null;
}

/** Whether a conversation's run waits for a slot (it is `running` with a place in the queue). */
export function isQueued(status: string | null | undefined, queuedAhead: number | null): boolean {
  return status === "running" && queuedAhead !== null;
}

/** The status pill's text: "Queued, 2 ahead" / "Queued, next" while the run waits, else the status. */
export function statusText(status: string | null | undefined, queuedAhead: number | null): string {
  if (!status) return "—";
  if (isQueued(status, queuedAhead)) return queuedAhead === 0 ? "Queued, next" : `Queued, ${queuedAhead} ahead`;
  return STATUS_LABEL[status] ?? status;
}

/** The status pill's class: `st-queued` while the run waits (not yet working), else `st-<status>`. */
export function statusClass(status: string | null | undefined, queuedAhead: number | null): string {
  return isQueued(status, queuedAhead) ? "st-queued" : `st-${status ?? "unknown"}`;
}
