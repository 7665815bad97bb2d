// The events a replay steps through, read from the timeline's rows (the active branch): an
// action and its answer are two events, in the order the rows show them. Field updates of the
// conversation's state (status, stats) are left out: nothing the panes show changes with them,
// and they would double the steps. Pure, so the scrubber and its tests agree.
import { isKnownEvent } from "../../api/kinds";
import type { WireEvent } from "../../api/types";
import { messageText, type TimelineItem } from "../../store/timeline";
import { actionHeadline, browserControlText, itemText, otherText, resultText } from "../timeline/describe";
import { kindOf } from "../timeline/filter";

/** What a lane mark along the scrubber points out. */
export type LaneMark = "approval" | "error" | "browser";

export interface ReplayEvent {
  id: string;
  kind: string;
  /** One line saying what happened. */
  summary: string;
  mark: LaneMark | null;
}

const LINE = 120;

function oneLine(text: string): string {
  const line = text.trim().split("\n", 1)[0] ?? "";
  return line.length > LINE ? `${line.slice(0, LINE - 1)}…` : line;
}

function eventOf(ev: WireEvent, summary: string, mark: LaneMark | null = null): ReplayEvent {
  return { id: ev.id, kind: ev.kind, summary: oneLine(summary), mark };
}

/** An answer to an action: a rejection is the person's decision, an error or failed command an error. */
function answerOf(ev: WireEvent): ReplayEvent {
  if (!isKnownEvent(ev)) return eventOf(ev, ev.kind);
  switch (ev.kind) {
    case "UserRejectObservation":
      return eventOf(ev, `Rejected: ${resultText(ev)}`, "approval");
    case "AgentErrorEvent":
      return eventOf(ev, resultText(ev), "error");
    case "ObservationEvent":
      return eventOf(ev, resultText(ev), ev.observation.is_error ? "error" : null);
    default:
      return eventOf(ev, otherText(ev));
  }
}

export function replayEvents(items: readonly TimelineItem[]): ReplayEvent[] {
  const out: ReplayEvent[] = [];
  for (const item of items) {
    switch (item.type) {
      case "message":
        out.push(eventOf(item.event, messageText(item.event)));
        break;
      case "action":
        out.push(eventOf(item.event, actionHeadline(item.event)));
        if (item.result) out.push(answerOf(item.result));
        break;
      case "result":
        out.push(answerOf(item.event));
        break;
      case "state": {
        const ev = item.event;
        if (ev.key === "execution_status" && ev.value === "waiting_for_confirmation") {
          // The newest action waited for the person's confirmation.
          const waited = out.findLastIndex((e) => e.kind === "ActionEvent");
          const action = out[waited];
          if (action && !action.mark) out[waited] = { ...action, mark: "approval" };
        }
        if (kindOf(item) === "state") break;
        const browser = ev.key === "browser_control" ? browserControlText(ev.value) : null;
        out.push(eventOf(ev, browser ?? itemText(item), browser ? "browser" : null));
        break;
      }
      case "other":
        out.push(eventOf(item.event, otherText(item.event), item.event.kind === "ConversationErrorEvent" ? "error" : null));
        break;
    }
  }
  return out;
}
