// A handoff request the person has not answered yet, read from the timeline: the agent's
// `browser_request_handoff` action has no observation until the person hands back. The app
// uses it to notify outside the Browser pane, which may be hidden (and then has no socket).
import type { TimelineState } from "../../store/timeline";
import { actionArguments } from "../timeline/describe";

export const HANDOFF_TOOL = "browser_request_handoff";

export interface PendingHandoff {
  actionId: string;
  reason: string;
}

export function pendingHandoff(state: TimelineState): PendingHandoff | null {
  for (let i = state.openActions.length - 1; i >= 0; i--) {
    const id = state.openActions[i];
    const at = id === undefined ? undefined : state.actionIndex[id];
    const item = at === undefined ? undefined : state.items[at];
    if (item?.type !== "action" || item.event.tool_name !== HANDOFF_TOOL || item.result) continue;
    const reason = actionArguments(item.event).reason;
    return { actionId: item.id, reason: typeof reason === "string" ? reason : "" };
  }
  return null;
}
