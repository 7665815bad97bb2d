// Status (with the run's place while it waits for a slot), tokens and cost of the open
// conversation and the honest state of its stream.
import type { StreamState } from "../../api/eventStream";
import type { TimelineState } from "../../store/timeline";
import { formatCost, formatTokens } from "./format";
import { statusClass, statusText } from "./queue";

export function streamLabel(s: StreamState | null): { text: string; tone: "ok" | "warn" | "bad" } {
  if (!s) return { text: "Not connected", tone: "warn" };
  switch (s.status) {
    case "connecting":
      return { text: s.attempt > 1 ? `Reconnecting (attempt ${s.attempt})…` : "Connecting…", tone: "warn" };
    case "syncing":
      return { text: "Catching up…", tone: "warn" };
    case "connected":
      return { text: "Live", tone: "ok" };
    case "lost":
      return { text: `Connection lost — retrying in ${Math.ceil(s.retryInMs / 1000)}s (${s.reason})`, tone: "bad" };
    case "unauthorized":
      return { text: "Unauthorized: the session key was refused", tone: "bad" };
    case "not_found":
      return { text: "Conversation not found on this backend", tone: "bad" };
    case "closed":
      return { text: "Closed", tone: "warn" };
  }
}

export function StatusBar({ state, stream }: { state: TimelineState; stream: StreamState | null }) {
  const u = state.usage;
  const conn = streamLabel(stream);
  const status = state.status;
  return (
    <div className="statusbar" role="status" aria-label="Conversation status">
      <span className={`status-pill ${statusClass(status, state.queuedAhead)}`}>{statusText(status, state.queuedAhead)}</span>
      {state.model && <span className="muted mono" title="Model">{state.model}</span>}
      <span title={`prompt ${u.promptTokens}, completion ${u.completionTokens}, cache read ${u.cacheReadTokens}, reasoning ${u.reasoningTokens}`}>
        {formatTokens(u.promptTokens)} in · {formatTokens(u.completionTokens)} out
      </span>
      <span title="Accumulated cost">{formatCost(u.cost)}</span>
      <span className={`conn conn-${conn.tone}`}>
        <span className="dot" aria-hidden /> {conn.text}
      </span>
    </div>
  );
}
