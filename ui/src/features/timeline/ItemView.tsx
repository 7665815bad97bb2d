// One timeline row. Actions show with their answer; terminal output keeps its colours; file
// edits show their diffs; browser steps show their screenshot; thinking is collapsed; errors and
// rejections are marked.
import { memo } from "react";
import Markdown from "react-markdown";
import remarkGfm from "remark-gfm";
import { assertNever, isKnownEvent, isKnownObservation } from "../../api/kinds";
import type { Checkpoint } from "../../api/tandemTypes";
import type { ActionEvent, MessageEvent, ObservationEvent, WireEvent } from "../../api/types";
import { LEAF_KEY } from "../../store/branch";
import { messageText, type ActionResult, type TimelineItem } from "../../store/timeline";
import { HANDOFF_TOOL } from "../browser/handoff";
import { BUDGET_REACHED_KEY, budgetMarkerText } from "../budget/budget";
import { Screenshot } from "../browser/Screenshot";
import { ChangedFiles } from "../rewind/ChangedFiles";
import { AnsiText } from "./AnsiText";
import { actionArguments, actionHeadline, browserControlText, contentText, isObject, LLM_RETRY_KEY, llmRetryDetail, llmRetryText, NAVIGATION_TEXT } from "./describe";
import { FileDiffView } from "./FileDiffView";
import { RiskBadge } from "./RiskBadge";
import { isTaskAction } from "./task";
import { TaskPrompt, TaskResult } from "./TaskView";

function time(ts: string | undefined): string {
  if (!ts) return "";
  const d = new Date(ts);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

function Thinking({ ev }: { ev: { reasoning_content?: string | null; thinking_blocks?: unknown[] } }) {
  const blocks = (ev.thinking_blocks ?? [])
    .map((b) => (typeof b === "object" && b !== null && "thinking" in b && typeof b.thinking === "string" ? b.thinking : ""))
    .filter(Boolean);
  const text = [ev.reasoning_content ?? "", ...blocks].filter(Boolean).join("\n\n");
  if (!text) return null;
  return (
    <details className="thinking">
      <summary>Thinking</summary>
      <div className="thinking-body">{text}</div>
    </details>
  );
}

function MessageView({ ev }: { ev: MessageEvent }) {
  const who = ev.source === "user" ? "You" : ev.source === "agent" ? "Agent" : ev.source;
  // Keyword skills this message brought in (their text went to the model with it).
  const skills = ev.activated_skills ?? [];
  return (
    <div className={`item message from-${ev.source}`}>
      <div className="item-head">
        <span className="who">{who}</span>
        {skills.length > 0 && (
          <span className="badge skills" title="Skills this message activated">
            skills: {skills.join(", ")}
          </span>
        )}
        <span className="ts">{time(ev.timestamp)}</span>
      </div>
      <Thinking ev={ev.llm_message} />
      <div className="markdown">
        <Markdown remarkPlugins={[remarkGfm]}>{messageText(ev)}</Markdown>
      </div>
    </div>
  );
}

function ObservationBody({ ev }: { ev: ObservationEvent }) {
  const obs = ev.observation;
  const text = contentText(obs.content);
  const plain = <pre className="obs-text">{text}</pre>;
  // A kind this UI does not know (an upstream server's tool): its text.
  if (!isKnownObservation(obs)) return plain;
  switch (obs.kind) {
    case "TaskObservation":
      return <TaskResult obs={obs} />;
    case "FileEditorObservation":
      if (typeof obs.new_content !== "string" || obs.command === "view") return plain;
      return <FileDiffView path={obs.path ?? ""} oldText={obs.old_content ?? ""} newText={obs.new_content} />;
    case "TerminalObservation": {
      const exit = obs.exit_code ?? null;
      return (
        <>
          <AnsiText text={text || "(no output)"} className="ansi term-out" />
          {exit !== null && exit !== 0 && <div className="exit bad">exit code {exit}</div>}
          {obs.timeout === true && <div className="exit bad">timed out</div>}
        </>
      );
    }
    case "BrowserObservation":
      if (!obs.screenshot_data) return plain;
      return (
        <>
          {text && <pre className="obs-text">{text}</pre>}
          <Screenshot data={obs.screenshot_data} label={`after ${ev.tool_name}`} />
        </>
      );
    case "TaskTrackerObservation":
    case "ThinkObservation":
    case "FinishObservation":
    case "GlobObservation":
    case "GrepObservation":
    case "MCPToolObservation":
      return plain;
    default:
      return assertNever(obs);
  }
}

function ResultView({ r }: { r: ActionResult }) {
  switch (r.kind) {
    case "UserRejectObservation":
      return (
        <div className="result rejected" role="note">
          <strong>Rejected</strong> {r.rejection_reason ? `— ${r.rejection_reason}` : ""}
        </div>
      );
    case "AgentErrorEvent":
      return (
        <div className="result error" role="note">
          <strong>Error</strong> {r.error}
        </div>
      );
    case "ObservationEvent":
      return (
        <div className={r.observation.is_error === true ? "result error" : "result"}>
          <ObservationBody ev={r} />
        </div>
      );
    default:
      return assertNever(r);
  }
}

export function ActionView({ ev, result, pending, changes }: { ev: ActionEvent; result?: ActionResult; pending: boolean; changes?: Checkpoint | undefined }) {
  const thought = contentText(ev.thought);
  const args = actionArguments(ev);
  return (
    <div className={`item action${pending ? " pending" : ""}${result && result.kind !== "ObservationEvent" ? " failed" : ""}`}>
      <div className="item-head">
        <span className="tool">{ev.tool_name}</span>
        <RiskBadge risk={ev.security_risk} />
        {pending && <span className="badge waiting">awaiting approval</span>}
        {!pending && !result && ev.tool_name === HANDOFF_TOOL && <span className="badge waiting">waiting for you</span>}
        {!pending && !result && ev.tool_name !== HANDOFF_TOOL && <span className="badge running">running…</span>}
        <span className="ts">{time(ev.timestamp)}</span>
      </div>
      {thought && <div className="thought">{thought}</div>}
      <Thinking ev={ev} />
      <code className="headline">{actionHeadline(ev)}</code>
      {isTaskAction(ev) && <TaskPrompt args={args} />}
      <details className="args">
        <summary>Arguments</summary>
        <pre>{JSON.stringify(args, null, 2)}</pre>
      </details>
      {/* finish's observation only echoes the message its headline already shows */}
      {result && !(ev.tool_name === "finish" && result.kind === "ObservationEvent") && <ResultView r={result} />}
      {changes && <ChangedFiles checkpoint={changes} />}
    </div>
  );
}

/** An event of a kind this UI does not know (a newer or an upstream server's): its kind. */
function UnknownEventView({ ev }: { ev: WireEvent }) {
  // Upstream servers also record their analyzer's verdicts (SecurityAnalysisEvent).
  const kind: string = ev.kind;
  if (kind === "SecurityAnalysisEvent" && "risks" in ev && isObject(ev.risks)) {
    const risks = Object.values(ev.risks).map((r) => String(r).toLowerCase());
    const analyzer = "analyzer" in ev && typeof ev.analyzer === "string" ? ` (${ev.analyzer})` : "";
    return (
      <div className="item marker">
        Security analysis{analyzer}: {risks.length ? risks.join(", ") : "no pending action"}
      </div>
    );
  }
  return <div className="item marker">{ev.kind}</div>;
}

function OtherView({ ev }: { ev: WireEvent }) {
  if (!isKnownEvent(ev)) return <UnknownEventView ev={ev} />;
  switch (ev.kind) {
    case "ConversationErrorEvent": {
      // An LLM error that is not retried (a wrong key, address or model) says so: waiting
      // will not help, the setting its message names must change.
      const permanent = ev.code.startsWith("LLM") && ev.classification?.retryable === false;
      return (
        <div className={`item error-event${permanent ? " permanent" : ""}`} role="alert">
          <strong>{permanent ? "LLM error (not retried)" : "Conversation error"}</strong> {ev.code}: {ev.detail}
          {permanent && <div className="hint">Fix the setting named above, then run again.</div>}
        </div>
      );
    }
    case "PauseEvent":
      return <div className="item marker">‖ Paused</div>;
    case "InterruptEvent":
      return <div className="item marker">■ Interrupted</div>;
    case "Condensation":
      return (
        <details className="item marker">
          <summary>History condensed ({ev.forgotten_event_ids?.length ?? 0} events forgotten)</summary>
          <div className="thinking-body">{ev.summary}</div>
        </details>
      );
    case "CondensationRequest":
      return <div className="item marker">Condensation requested</div>;
    case "SystemPromptEvent":
      return (
        <details className="item marker">
          <summary>System prompt and {ev.tools?.length ?? 0} tools</summary>
          <pre className="obs-text">{ev.system_prompt?.text}</pre>
        </details>
      );
    // Each of these has its own row, or none; only an odd stream brings one here.
    case "MessageEvent":
    case "ActionEvent":
    case "ObservationEvent":
    case "AgentErrorEvent":
    case "UserRejectObservation":
    case "ConversationStateUpdateEvent":
    case "StreamingDeltaEvent":
    case "ServerErrorEvent":
      return <div className="item marker">{ev.kind}</div>;
    default:
      return assertNever(ev);
  }
}

/**
 * `changes`: the agent checkpoint of the row's observation, when the server keeps checkpoints
 * (what the action changed in the workspace, whatever its tool).
 */
export const ItemView = memo(function ItemView({ item, pending, changes }: { item: TimelineItem; pending: boolean; changes?: Checkpoint | undefined }) {
  switch (item.type) {
    case "message":
      return <MessageView ev={item.event} />;
    case "action":
      return <ActionView ev={item.event} {...(item.result ? { result: item.result } : {})} pending={pending} changes={changes} />;
    case "result":
      return (
        <div className="item action orphan">
          <div className="item-head">
            <span className="tool">{"tool_name" in item.event ? item.event.tool_name : ""}</span>
          </div>
          <ResultView r={item.event} />
          {changes && <ChangedFiles checkpoint={changes} />}
        </div>
      );
    case "state": {
      const browser = item.event.key === "browser_control" ? browserControlText(item.event.value) : null;
      if (browser) return <div className="item marker browser-control">{browser}</div>;
      if (item.event.key === LEAF_KEY) return <div className="item marker navigation">{NAVIGATION_TEXT}</div>;
      if (item.event.key === BUDGET_REACHED_KEY) return <div className="item marker budget">{budgetMarkerText(item.event.value)}</div>;
      const retry = item.event.key === LLM_RETRY_KEY ? llmRetryText(item.event.value) : null;
      if (retry) {
        const detail = llmRetryDetail(item.event.value);
        return (
          <div className="item marker llm-retry" role="status">
            <strong>{retry}</strong>
            {detail && <div className="obs-text">{detail}</div>}
            <div className="hint">Pause or interrupt to stop waiting.</div>
          </div>
        );
      }
      return (
        <div className="item state">
          {item.event.key}
          {typeof item.event.value === "string" ? ` → ${item.event.value}` : ""}
        </div>
      );
    }
    case "other":
      return <OtherView ev={item.event} />;
  }
});
