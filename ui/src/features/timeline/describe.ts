// Plain-text views of events for labels, search and the approval panel.
import type { ActionEvent, WireEvent } from "../../api/types";
import { messageText, type ActionResult, type TimelineItem } from "../../store/timeline";
import { stripAnsi } from "./ansi";

export function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .map((c: unknown) => (typeof c === "object" && c !== null && "text" in c && typeof c.text === "string" ? c.text : ""))
    .join("");
}

/** The arguments the model sent, pretty-printed (the parsed action when available). */
export function actionArguments(ev: ActionEvent): Record<string, unknown> {
  if (ev.action && typeof ev.action === "object") {
    const { kind: _kind, ...rest } = ev.action as Record<string, unknown>;
    return rest;
  }
  try {
    const parsed: unknown = JSON.parse(ev.tool_call?.arguments ?? "{}");
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : { arguments: parsed };
  } catch {
    return { arguments: ev.tool_call?.arguments ?? "" };
  }
}

/** One line saying what the action does: the command, the file, or the summary. */
export function actionHeadline(ev: ActionEvent): string {
  const a = actionArguments(ev);
  if (typeof a.command === "string" && ev.tool_name === "terminal") return a.command;
  if (typeof a.path === "string") return `${typeof a.command === "string" ? a.command + " " : ""}${a.path}`;
  if (typeof a.message === "string") return a.message;
  if (typeof a.thought === "string") return a.thought;
  return ev.summary ?? ev.tool_name;
}

export function resultText(r: ActionResult): string {
  if (r.kind === "ObservationEvent") return stripAnsi(contentText((r.observation as { content?: unknown }).content));
  if (r.kind === "UserRejectObservation") return r.rejection_reason ?? "";
  return r.error;
}

/** Text that the timeline's text filter matches against. */
export function itemText(item: TimelineItem): string {
  switch (item.type) {
    case "message":
      return messageText(item.event);
    case "action":
      return `${item.event.tool_name} ${actionHeadline(item.event)} ${item.event.summary ?? ""} ${item.result ? resultText(item.result) : ""}`;
    case "result":
      return resultText(item.event);
    case "state":
      return `${item.event.key ?? ""} ${typeof item.event.value === "string" ? item.event.value : ""}`;
    case "other":
      return otherText(item.event);
  }
}

export function otherText(ev: WireEvent): string {
  switch (ev.kind) {
    case "ConversationErrorEvent":
      return `${ev.code}: ${ev.detail}`;
    case "Condensation":
      return ev.summary ?? "";
    default:
      return ev.kind;
  }
}
