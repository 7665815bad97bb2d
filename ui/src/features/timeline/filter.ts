// Timeline filters: by kind of row, by source, by text. Pure, so tests and the pane agree.
import type { TimelineItem } from "../../store/timeline";
import { LEAF_KEY } from "../../store/branch";
import { BUDGET_REACHED_KEY } from "../budget/budget";
import { itemText, LLM_RETRY_KEY } from "./describe";

export type KindFilter = "message" | "action" | "error" | "state" | "other";
export const ALL_KINDS: KindFilter[] = ["message", "action", "error", "state", "other"];

export interface TimelineFilter {
  kinds: ReadonlySet<KindFilter>;
  source: "all" | "agent" | "user" | "environment";
  text: string;
}

/** State updates are noise most of the time; they are one click away. */
export const defaultFilter: TimelineFilter = {
  kinds: new Set<KindFilter>(["message", "action", "error", "other"]),
  source: "all",
  text: "",
};

export function kindOf(item: TimelineItem): KindFilter {
  switch (item.type) {
    case "message":
      return "message";
    case "action":
      return item.result && item.result.kind !== "ObservationEvent" ? "error" : "action";
    case "result":
      return item.event.kind === "ObservationEvent" && !item.event.observation.is_error ? "action" : "error";
    case "state":
      // Who drives the browser is history the person reviews, not noise: shown by default.
      if (item.event.key === "browser_control") return "other";
      // So is the conversation going back to an earlier event (a rewind of the chat).
      if (item.event.key === LEAF_KEY) return "other";
      // So are the run pausing on its budget and the budget being raised.
      if (item.event.key === BUDGET_REACHED_KEY) return "other";
      // A failed LLM call being retried is an error the person may act on (or cancel).
      return item.event.key === LLM_RETRY_KEY ? "error" : "state";
    case "other":
      return item.event.kind === "ConversationErrorEvent" ? "error" : "other";
  }
}

export function filterItems(items: readonly TimelineItem[], f: TimelineFilter): TimelineItem[] {
  const text = f.text.trim().toLowerCase();
  return items.filter((item) => {
    if (!f.kinds.has(kindOf(item))) return false;
    if (f.source !== "all" && item.event.source !== f.source) return false;
    if (text && !itemText(item).toLowerCase().includes(text)) return false;
    return true;
  });
}
