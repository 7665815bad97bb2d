// Branches of a conversation, as the server keeps them: a navigation (a rewind of the chat, or
// upstream's navigate) is a state update of `leaf_event_id` that moves the head to an earlier
// event; every later event hangs below the head of its time. The events list holds every
// branch, so the timeline shows the active one: the walk from the head up. Pure functions,
// shared by the reducer (which places each event as it arrives) and the timeline.
import type { WireEvent } from "../api/types";
import type { TimelineItem } from "./timeline";

/** The state key a navigation records (the server's `LEAF_KEY`). */
export const LEAF_KEY = "leaf_event_id";

export interface Branches {
  /**
   * Where each event hangs: an event's parent is the head when it arrived; a state update is
   * anchored at the head of its time, a navigation at the event it moved the head to.
   */
  parents: ReadonlyMap<string, string | null>;
  /** The newest event of the active branch (null: the empty tree). */
  head: string | null;
  /** Whether the conversation ever navigated: until then the active branch is every event. */
  navigated: boolean;
}

export function initialBranches(): Branches {
  return { parents: new Map(), head: null, navigated: false };
}

export function isNavigation(ev: WireEvent): boolean {
  return ev.kind === "ConversationStateUpdateEvent" && ev.key === LEAF_KEY;
}

/**
 * Places one persisted event: records where it hangs in `parents` (a copy the caller owns for
 * the batch) and returns the head after it, as the server replays its log.
 */
export function placeEvent(parents: Map<string, string | null>, head: string | null, ev: WireEvent): string | null {
  if (ev.kind === "ConversationStateUpdateEvent") {
    if (ev.key !== LEAF_KEY) {
      parents.set(ev.id, head);
      return head;
    }
    const value: unknown = ev.value;
    // An unknown event (or null) is the empty tree, as on the server.
    const to = typeof value === "string" && parents.has(value) ? value : null;
    parents.set(ev.id, to);
    return to;
  }
  parents.set(ev.id, head);
  return ev.id;
}

/** The ids of the active branch's events, or null when every event is on it (no navigation yet). */
export function activeBranchIds(b: Branches): ReadonlySet<string> | null {
  if (!b.navigated) return null;
  const ids = new Set<string>();
  for (let at = b.head; at !== null && !ids.has(at); at = b.parents.get(at) ?? null) ids.add(at);
  return ids;
}

/**
 * The timeline rows of the active branch: events on it, state updates anchored on it (or
 * before the first event), and the navigation that made it the active one (the last). Every
 * row when the conversation never navigated.
 */
export function activeItems(items: readonly TimelineItem[], b: Branches): readonly TimelineItem[] {
  const ids = activeBranchIds(b);
  if (ids === null) return items;
  const last = items.findLast((i) => i.type === "state" && i.event.key === LEAF_KEY)?.id;
  return items.filter((item) => {
    if (item.type !== "state") return ids.has(item.id);
    if (item.event.key === LEAF_KEY) return item.id === last;
    const anchor = b.parents.get(item.id) ?? null;
    return anchor === null || ids.has(anchor);
  });
}
