// Plain-text views of events for labels, search and the approval panel.
import { assertNever, isKnownAction, isKnownEvent } from "../../api/kinds";
import type { ActionEvent, WireEvent } from "../../api/types";
import { LEAF_KEY } from "../../store/branch";
import { BUDGET_REACHED_KEY, budgetMarkerText } from "../budget/budget";
import { messageText, type ActionResult, type TimelineItem } from "../../store/timeline";
import { stripAnsi } from "./ansi";
import { isTaskAction, taskHeadline } from "./task";

/** Untrusted JSON that is an object (arrays included, as `JSON.parse` may give). */
export const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;

export function contentText(content: unknown): string {
  if (!Array.isArray(content)) return "";
  return content
    .map((c: unknown) => (typeof c === "object" && c !== null && "text" in c && typeof c.text === "string" ? c.text : ""))
    .join("");
}

/** The arguments the model sent, pretty-printed (the parsed action when available). */
export function actionArguments(ev: ActionEvent): Record<string, unknown> {
  if (ev.action) {
    const { kind: _kind, ...rest } = ev.action;
    return rest;
  }
  try {
    const parsed: unknown = JSON.parse(ev.tool_call?.arguments ?? "{}");
    return isObject(parsed) ? parsed : { arguments: parsed };
  } catch {
    return { arguments: ev.tool_call?.arguments ?? "" };
  }
}

/** One line saying what the action does: the command, the file, or the summary. */
export function actionHeadline(ev: ActionEvent): string {
  const a = ev.action;
  // A kind this UI does not know (an upstream server's tool), or a call whose arguments did not
  // parse: read what the arguments say.
  if (!a || !isKnownAction(a)) return argumentsHeadline(ev);
  switch (a.kind) {
    case "TerminalAction":
      return a.command;
    case "FileEditorAction":
      return `${a.command} ${a.path}`;
    case "ThinkAction":
      return a.thought;
    case "FinishAction":
      return a.message;
    case "TaskAction":
      return taskHeadline(a);
    case "GlobAction":
    case "GrepAction":
      return searchHeadline(ev.tool_name, a) ?? argumentsHeadline(ev);
    case "BrowserNavigateAction":
    case "BrowserClickAction":
    case "BrowserTypeAction":
    case "BrowserGetStateAction":
    case "BrowserGetContentAction":
    case "BrowserScrollAction":
    case "BrowserGoBackAction":
    case "BrowserListTabsAction":
    case "BrowserSwitchTabAction":
    case "BrowserCloseTabAction":
    case "BrowserGetStorageAction":
    case "BrowserSetStorageAction":
    case "BrowserStartRecordingAction":
    case "BrowserStopRecordingAction":
    case "BrowserRequestHandoffAction":
      return browserHeadline(ev.tool_name, a) ?? argumentsHeadline(ev);
    // The list, or an MCP tool's arguments: the model's summary says it better.
    case "TaskTrackerAction":
    case "MCPToolAction":
      return ev.summary ?? ev.tool_name;
    default:
      return assertNever(a);
  }
}

/** The headline of an action read from its arguments alone: by tool name, then common fields. */
function argumentsHeadline(ev: ActionEvent): string {
  const a = actionArguments(ev);
  const browser = browserHeadline(ev.tool_name, a);
  if (browser) return browser;
  if (isTaskAction(ev)) return taskHeadline(a);
  if (typeof a.command === "string" && ev.tool_name === "terminal") return a.command;
  const search = searchHeadline(ev.tool_name, a);
  if (search) return search;
  if (typeof a.path === "string") return `${typeof a.command === "string" ? a.command + " " : ""}${a.path}`;
  if (typeof a.message === "string") return a.message;
  if (typeof a.thought === "string") return a.thought;
  return ev.summary ?? ev.tool_name;
}

const str = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");

/** A `glob` or `grep` call in words; null for other tools. */
export function searchHeadline(tool: string, a: Record<string, unknown>): string | null {
  const where = str(a.path) ? ` in ${str(a.path)}` : "";
  if (tool === "glob" && str(a.pattern)) return `find files ${str(a.pattern)}${where}`;
  if (tool === "grep" && str(a.pattern)) {
    const include = str(a.include) ? ` in ${str(a.include)} files` : "";
    return `search for /${str(a.pattern)}/${include}${where}`;
  }
  return null;
}

/** A browser tool's action in words (upstream's summary is the tool name and raw JSON); null for other tools. */
export function browserHeadline(tool: string, a: Record<string, unknown>): string | null {
  const inNewTab = a.new_tab === true ? " in a new tab" : "";
  switch (tool) {
    case "browser_navigate":
      return `open ${str(a.url)}${inNewTab}`;
    case "browser_click":
      return `click element ${str(a.index)}${inNewTab}`;
    case "browser_type":
      return `type ${JSON.stringify(str(a.text))} into element ${str(a.index)}`;
    case "browser_get_state":
      return a.include_screenshot === true ? "read the page's state, with a screenshot" : "read the page's state";
    case "browser_get_content":
      return "read the page's content";
    case "browser_scroll":
      return `scroll ${str(a.direction) || "down"}`;
    case "browser_go_back":
      return "go back";
    case "browser_list_tabs":
      return "list the tabs";
    case "browser_switch_tab":
      return `switch to tab ${str(a.tab_id)}`;
    case "browser_close_tab":
      return `close tab ${str(a.tab_id)}`;
    case "browser_get_storage":
      return "read cookies and storage";
    case "browser_set_storage":
      return "restore cookies and storage";
    case "browser_start_recording":
      return "start recording";
    case "browser_stop_recording":
      return "stop recording";
    case "browser_request_handoff":
      return `ask you to take over the browser: ${str(a.reason)}`;
    default:
      return null;
  }
}

/**
 * The line for a `browser_control` state update (the person took the browser or handed it
 * back), or null when `value` is not one.
 */
export function browserControlText(v: unknown): string | null {
  if (!isObject(v)) return null;
  const where = str(v.title) || str(v.url) || "a blank page";
  const note = str(v.note).trim();
  const reason = str(v.reason).trim();
  if (v.driver === "person") return `You took control of the browser at ${where}${reason ? ` (the agent asked: ${reason})` : ""}`;
  if (v.driver === "agent") return note ? `You handed the browser back: ${note}` : `You handed the browser back at ${where}`;
  return null;
}

/** The line for a navigation: the conversation's head moved back (a rewind of the chat). */
export const NAVIGATION_TEXT = "The conversation went back to an earlier event: the agent continues from there; the events after it stay on another branch.";

/** The state-update key of an LLM call's retry announcement. */
export const LLM_RETRY_KEY = "llm_retry";

/** A wait in seconds the way people read it: `8 s`, `0.5 s`, `2 min`. */
function seconds(s: number): string {
  if (s >= 120) return `${Math.round(s / 60)} min`;
  return `${s >= 10 ? Math.round(s) : Number(s.toFixed(1))} s`;
}

/**
 * The line for an `llm_retry` state update ("LLM error LLMRateLimitError, retry 2/5 in 8 s"),
 * or null when `value` is not one.
 */
export function llmRetryText(v: unknown): string | null {
  if (!isObject(v)) return null;
  if (typeof v.retry !== "number" || typeof v.max_retries !== "number") return null;
  const wait = typeof v.wait_seconds === "number" && Number.isFinite(v.wait_seconds) ? v.wait_seconds : 0;
  return `LLM error ${str(v.code) || "(unknown)"}, retry ${v.retry}/${v.max_retries} in ${seconds(wait)}`;
}

/** The provider's message of an `llm_retry` state update. */
export function llmRetryDetail(value: unknown): string {
  return isObject(value) ? str(value.message) : "";
}

export function resultText(r: ActionResult): string {
  switch (r.kind) {
    case "ObservationEvent":
      return stripAnsi(contentText(r.observation.content));
    case "UserRejectObservation":
      return r.rejection_reason ?? "";
    case "AgentErrorEvent":
      return r.error;
    default:
      return assertNever(r);
  }
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
      if (item.event.key === "browser_control") return browserControlText(item.event.value) ?? "browser_control";
      if (item.event.key === LEAF_KEY) return NAVIGATION_TEXT;
      if (item.event.key === BUDGET_REACHED_KEY) return budgetMarkerText(item.event.value);
      if (item.event.key === LLM_RETRY_KEY) return `${llmRetryText(item.event.value) ?? LLM_RETRY_KEY} ${llmRetryDetail(item.event.value)}`;
      return `${item.event.key ?? ""} ${typeof item.event.value === "string" ? item.event.value : ""}`;
    case "other":
      return otherText(item.event);
  }
}

export function otherText(ev: WireEvent): string {
  if (!isKnownEvent(ev)) return ev.kind;
  switch (ev.kind) {
    case "ConversationErrorEvent":
      return `${ev.code}: ${ev.detail}`;
    case "Condensation":
      return ev.summary ?? "";
    case "SystemPromptEvent":
    case "MessageEvent":
    case "ActionEvent":
    case "ObservationEvent":
    case "AgentErrorEvent":
    case "UserRejectObservation":
    case "PauseEvent":
    case "InterruptEvent":
    case "CondensationRequest":
    case "ConversationStateUpdateEvent":
    case "StreamingDeltaEvent":
    case "ServerErrorEvent":
      return ev.kind;
    default:
      return assertNever(ev);
  }
}
