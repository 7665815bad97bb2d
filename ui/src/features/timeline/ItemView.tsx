// One timeline row. Actions show with their answer; terminal output keeps its colours; file
// edits show as diffs; browser steps show their screenshot; thinking is collapsed; errors and
// rejections are marked.
import { memo } from "react";
import Markdown from "react-markdown";
import remarkGfm from "remark-gfm";
import type { ActionEvent, MessageEvent, ObservationEvent, WireEvent } from "../../api/types";
import { messageText, type ActionResult, type TimelineItem } from "../../store/timeline";
import { HANDOFF_TOOL } from "../browser/handoff";
import { Screenshot } from "../browser/Screenshot";
import { AnsiText } from "./AnsiText";
import { actionArguments, actionHeadline, browserControlText, contentText, LLM_RETRY_KEY, llmRetryDetail, llmRetryText } from "./describe";
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
  const obs = ev.observation as Record<string, unknown> & { kind?: string; is_error?: boolean };
  const text = contentText(obs.content);
  if (obs.kind === "TaskObservation") return <TaskResult obs={obs} />;
  if (obs.kind === "FileEditorObservation" && typeof obs.new_content === "string" && obs.command !== "view") {
    return (
      <FileDiffView
        path={typeof obs.path === "string" ? obs.path : ""}
        oldText={typeof obs.old_content === "string" ? obs.old_content : ""}
        newText={obs.new_content}
      />
    );
  }
  if (obs.kind === "TerminalObservation") {
    const exit = typeof obs.exit_code === "number" ? obs.exit_code : null;
    return (
      <>
        <AnsiText text={text || "(no output)"} className="ansi term-out" />
        {exit !== null && exit !== 0 && <div className="exit bad">exit code {exit}</div>}
        {obs.timeout === true && <div className="exit bad">timed out</div>}
      </>
    );
  }
  if (obs.kind === "BrowserObservation" && typeof obs.screenshot_data === "string" && obs.screenshot_data) {
    return (
      <>
        {text && <pre className="obs-text">{text}</pre>}
        <Screenshot data={obs.screenshot_data} label={`after ${ev.tool_name}`} />
      </>
    );
  }
  return <pre className="obs-text">{text}</pre>;
}

function ResultView({ r }: { r: ActionResult }) {
  if (r.kind === "UserRejectObservation")
    return (
      <div className="result rejected" role="note">
        <strong>Rejected</strong> {r.rejection_reason ? `— ${r.rejection_reason}` : ""}
      </div>
    );
  if (r.kind === "AgentErrorEvent")
    return (
      <div className="result error" role="note">
        <strong>Error</strong> {r.error}
      </div>
    );
  const isError = (r.observation as { is_error?: boolean }).is_error === true;
  return (
    <div className={isError ? "result error" : "result"}>
      <ObservationBody ev={r} />
    </div>
  );
}

export function ActionView({ ev, result, pending }: { ev: ActionEvent; result?: ActionResult; pending: boolean }) {
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
    </div>
  );
}

function OtherView({ ev }: { ev: WireEvent }) {
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
    default: {
      // Upstream servers also record their analyzer's verdicts (SecurityAnalysisEvent).
      const extra = ev as unknown as { analyzer?: unknown; risks?: unknown };
      if (ev.kind === "SecurityAnalysisEvent" && extra.risks && typeof extra.risks === "object") {
        const risks = Object.values(extra.risks as Record<string, unknown>).map((r) => String(r).toLowerCase());
        return (
          <div className="item marker">
            Security analysis{typeof extra.analyzer === "string" ? ` (${extra.analyzer})` : ""}: {risks.length ? risks.join(", ") : "no pending action"}
          </div>
        );
      }
      return <div className="item marker">{ev.kind}</div>;
    }
  }
}

export const ItemView = memo(function ItemView({ item, pending }: { item: TimelineItem; pending: boolean }) {
  switch (item.type) {
    case "message":
      return <MessageView ev={item.event} />;
    case "action":
      return <ActionView ev={item.event} {...(item.result ? { result: item.result } : {})} pending={pending} />;
    case "result":
      return (
        <div className="item action orphan">
          <div className="item-head">
            <span className="tool">{"tool_name" in item.event ? item.event.tool_name : ""}</span>
          </div>
          <ResultView r={item.event} />
        </div>
      );
    case "state": {
      const browser = item.event.key === "browser_control" ? browserControlText(item.event.value) : null;
      if (browser) return <div className="item marker browser-control">{browser}</div>;
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
