// "Costs": what was spent on every backend the UI knows, in total, per day, per model and per
// conversation, from each backend's conversation list (the same query the conversations pane
// keeps). A backend that cannot be reached is listed as such; the others still count.
import { useQueries } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { messageOf } from "../../api/errors";
import { useUi } from "../../store/ui";
import { apiFor, useBackends, type Backend } from "../backends/backendStore";
import { formatTokenCount } from "../budget/budget";
import { formatCost } from "../chat/format";
import { conversationsKey, listConversations } from "../conversations/queries";
import { costReport, tokensOf, type CostSource, type Spend } from "./costs";
import "./costs.css";

/** What the view knows of one backend's list. */
type SourceState = { backend: Backend } & (
  | { status: "loading" }
  | { status: "not_running" }
  | { status: "unreachable"; message: string }
  | { status: "ok"; source: CostSource }
);

function backendName(b: Backend): string {
  return b.kind === "local" ? "Local" : b.name;
}

/** Every backend's conversation list, each on its own (one failing leaves the others). */
function useSources(): SourceState[] {
  const backends = useBackends((s) => s.backends);
  const results = useQueries({
    queries: backends.map((b) => ({
      queryKey: conversationsKey(b.id),
      queryFn: () => listConversations(apiFor(b)),
      // A sandbox that is not running has no address yet.
      enabled: b.baseUrl !== "",
      retry: false,
    })),
  });
  return backends.map((backend, i): SourceState => {
    const r = results[i];
    if (backend.baseUrl === "") return { backend, status: "not_running" };
    if (r?.isError) return { backend, status: "unreachable", message: messageOf(r.error) };
    if (!r?.data) return { backend, status: "loading" };
    return { backend, status: "ok", source: { backendId: backend.id, backendName: backendName(backend), conversations: r.data } };
  });
}

function SpendCells({ s }: { s: Spend }) {
  return (
    <>
      <td className="num">{formatCost(s.cost)}</td>
      <td className="num" title={`${formatTokenCount(s.promptTokens)} prompt, ${formatTokenCount(s.completionTokens)} completion`}>
        {formatTokenCount(tokensOf(s))}
      </td>
    </>
  );
}

function Breakdown({ label, first, rows }: { label: string; first: string[]; rows: ReactNode }) {
  return (
    <section aria-label={label}>
      <h3>{label}</h3>
      <table className="costs-table" aria-label={label}>
        <thead>
          <tr>
            {first.map((h) => (
              <th key={h}>{h}</th>
            ))}
            <th className="num">Cost</th>
            <th className="num">Tokens</th>
          </tr>
        </thead>
        <tbody>{rows}</tbody>
      </table>
    </section>
  );
}

export function CostsDialog() {
  const open = useUi((s) => s.costsOpen);
  const setOpen = useUi((s) => s.setCosts);
  if (!open) return null;
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-label="Costs" onKeyDown={(e) => e.key === "Escape" && setOpen(false)}>
      <div className="dialog wide costs">
        <div className="dialog-head">
          <h2>Costs</h2>
          <button type="button" autoFocus onClick={() => setOpen(false)} aria-label="Close costs">
            ✕
          </button>
        </div>
        <CostsView />
      </div>
    </div>
  );
}

/** The report; apart from the dialog so it can be shown elsewhere. */
export function CostsView() {
  const sources = useSources();
  const ok = sources.flatMap((s) => (s.status === "ok" ? [s.source] : []));
  // A few thousand conversations at most: cheap enough on each render (a query answering).
  const report = costReport(ok);
  const t = report.total;
  return (
    <>
      <p className="costs-total" role="status" aria-label="Total">
        <strong>{formatCost(t.cost)}</strong> · {formatTokenCount(tokensOf(t))} tokens ({formatTokenCount(t.promptTokens)} prompt,{" "}
        {formatTokenCount(t.completionTokens)} completion) over {report.byConversation.length} conversation{report.byConversation.length === 1 ? "" : "s"} on{" "}
        {ok.length} backend{ok.length === 1 ? "" : "s"}
      </p>
      <ul className="plain" aria-label="Backends">
        {sources.map((s) => (
          <li key={s.backend.id} className="row">
            <strong>{backendName(s.backend)}</strong>
            {s.status === "ok" && <span className="muted">{s.source.conversations.length} conversations</span>}
            {s.status === "loading" && <span className="muted">loading…</span>}
            {s.status === "not_running" && <span className="badge">not running</span>}
            {s.status === "unreachable" && (
              <>
                <span className="badge warn">unreachable</span>
                <span className="error-text">{s.message}</span>
              </>
            )}
          </li>
        ))}
      </ul>
      <p className="hint">
        Per day counts each conversation on the day of its last activity. The costs are what each server's LLMs reported
        {report.withoutSpending > 0 ? `; ${report.withoutSpending} conversation${report.withoutSpending === 1 ? "" : "s"} spent nothing` : ""}.
      </p>
      <Breakdown
        label="By day"
        first={["Day", "Conversations"]}
        rows={report.byDay.map((d) => (
          <tr key={d.day}>
            <td className="mono">{d.day}</td>
            <td className="num">{d.conversations}</td>
            <SpendCells s={d} />
          </tr>
        ))}
      />
      <Breakdown
        label="By model"
        first={["Model", "Conversations"]}
        rows={report.byModel.map((m) => (
          <tr key={m.model}>
            <td className="mono">{m.model}</td>
            <td className="num">{m.conversations}</td>
            <SpendCells s={m} />
          </tr>
        ))}
      />
      <Breakdown
        label="By conversation"
        first={["Conversation", "Backend", "Models"]}
        rows={report.byConversation.map((c) => (
          <tr key={`${c.backendId}/${c.id}`}>
            <td>{c.title}</td>
            <td>{c.backendName}</td>
            <td className="mono">{c.models.join(", ")}</td>
            <SpendCells s={c} />
          </tr>
        ))}
      />
    </>
  );
}
