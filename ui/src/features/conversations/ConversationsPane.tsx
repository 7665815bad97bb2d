// Conversations of the active backend: title, status, cost, last activity; search, new,
// rename (F2 or double-click), delete. Sub-agent conversations nest under their parent
// (collapsible, with a count and their failures shown on it) and a running one can be paused.
import { useMemo, useState } from "react";
import { messageOf } from "../../api/errors";
import { convKey, useLive } from "../../store/live";
import { useUi } from "../../store/ui";
import { useBackends, type Backend } from "../backends/backendStore";
import { formatCost } from "../chat/format";
import { infoQueuedAhead, statusClass, statusText } from "../chat/queue";
import { NewConversation } from "./NewConversation";
import {
  conversationCost,
  conversationTitle,
  useConversationMutations,
  useConversations,
  workspaceDir,
  type ConversationItem,
} from "./queries";
import { buildTree, visibleRows, type ConvRow } from "./tree";
import "./conversations.css";

function ago(iso: string | undefined): string {
  if (!iso) return "";
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, (Date.now() - t) / 1000);
  if (s < 60) return "just now";
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return new Date(t).toLocaleDateString();
}

/** Status, place in the run queue and cost of a listed conversation; one whose event stream is
 * connected in this window shows its live values, fresher than the polled list. */
function useStatus(item: ConversationItem, backendId: string): { status: string; queuedAhead: number | null; cost: number } {
  const key = convKey(backendId, item.id);
  const live = useLive((s) => (s.streams[key]?.status === "connected" ? s.timelines[key] : undefined));
  return {
    status: live?.status ?? item.execution_status ?? "idle",
    queuedAhead: live ? live.queuedAhead : infoQueuedAhead(item),
    cost: live ? live.usage.cost : conversationCost(item),
  };
}

/** The status pill and cost; a running sub-agent also gets a pause button. */
function ConversationStatus({ row, backendId, onPause }: { row: ConvRow; backendId: string; onPause(): void }) {
  const { status, queuedAhead, cost } = useStatus(row.item, backendId);
  return (
    <>
      <span className={`status-pill small ${statusClass(status, queuedAhead)}`}>{statusText(status, queuedAhead)}</span>
      <span>{formatCost(cost)}</span>
      {row.depth > 0 && status === "running" && (
        <button
          type="button"
          className="link"
          aria-label={`Pause ${conversationTitle(row.item)}`}
          onClick={(e) => {
            e.stopPropagation();
            onPause();
          }}
        >
          pause
        </button>
      )}
    </>
  );
}

/** The parent's control over its children: expand/collapse, how many, and failures among them. */
function ChildrenToggle({ row, onToggle }: { row: ConvRow; onToggle(): void }) {
  if (row.childCount === 0) return null;
  const n = row.childCount;
  return (
    <button
      type="button"
      className="link conv-children"
      aria-expanded={row.expanded}
      aria-label={`${row.expanded ? "Hide" : "Show"} ${n} sub-agent${n === 1 ? "" : "s"}`}
      onClick={(e) => {
        e.stopPropagation();
        onToggle();
      }}
    >
      {row.expanded ? "▾" : "▸"} {n} sub-agent{n === 1 ? "" : "s"}
      {row.runningBelow > 0 && <span className="st-running"> · {row.runningBelow} running</span>}
      {row.failedBelow > 0 && <span className="st-error"> · {row.failedBelow} failed</span>}
    </button>
  );
}

export function ConversationsPane({ backend }: { backend: Backend | null }) {
  const health = useBackends((s) => (backend ? s.health[backend.id] : undefined));
  const usable = health?.status === "ok";
  const list = useConversations(backend, usable);
  const { remove, rename, pause } = useConversationMutations(backend);
  const current = useUi((s) => s.conversationId);
  const open = useUi((s) => s.openConversation);
  const [query, setQuery] = useState("");
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<{ id: string; title: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  // Parents the person expanded or collapsed; the others follow visibleRows' default.
  const [toggled, setToggled] = useState<Record<string, boolean>>({});

  const tree = useMemo(() => buildTree(list.data ?? []), [list.data]);
  const rows = useMemo(() => visibleRows(tree, { query, current, toggled }), [tree, query, current, toggled]);

  if (!backend) return <div className="empty">No backend. Add one in Settings.</div>;

  const del = (c: ConversationItem) => {
    if (!window.confirm(`Delete “${conversationTitle(c)}”? Its history is removed from the server.`)) return;
    remove.mutate(c.id, {
      onError: (e) => setError(messageOf(e)),
      onSuccess: () => current === c.id && open(null),
    });
  };

  return (
    <div className="conversations">
      <div className="toolbar">
        <input
          type="search"
          data-autofocus
          aria-label="Search conversations"
          placeholder="Search…"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <button type="button" className="primary" disabled={!usable} onClick={() => setCreating(true)} title="New conversation (N)">
          New
        </button>
      </div>
      {creating && (
        <NewConversation
          backend={backend}
          onCancel={() => setCreating(false)}
          onCreated={(id) => {
            setCreating(false);
            open(id);
          }}
        />
      )}
      {!usable && health && health.status !== "checking" && (
        <div className="error-text" role="alert">
          {health.message ?? "This backend is not available."}
        </div>
      )}
      {list.error && <div className="error-text">{messageOf(list.error)}</div>}
      {error && <div className="error-text">{error}</div>}
      <ul className="conv-list" role="listbox" aria-label="Conversations">
        {rows.map((row) => {
          const c = row.item;
          return (
            <li
              key={c.id}
              role="option"
              aria-selected={c.id === current}
              tabIndex={0}
              className={`${c.id === current ? "selected" : ""}${row.depth > 0 ? " conv-child" : ""}`}
              style={row.depth > 0 ? { paddingLeft: 10 + 14 * row.depth } : undefined}
              data-parent={row.depth > 0 ? (c.parent_conversation_id ?? undefined) : undefined}
              onClick={() => open(c.id)}
              onDoubleClick={() => setEditing({ id: c.id, title: conversationTitle(c) })}
              onKeyDown={(e) => {
                if (e.target !== e.currentTarget) return;
                if (e.key === "Enter") open(c.id);
                else if (e.key === "F2") setEditing({ id: c.id, title: conversationTitle(c) });
                else if (e.key === "Delete") del(c);
                else if (row.childCount > 0 && (e.key === "ArrowRight" || e.key === "ArrowLeft"))
                  setToggled({ ...toggled, [c.id]: e.key === "ArrowRight" });
                else if (e.key === "ArrowDown") (e.currentTarget.nextElementSibling as HTMLElement | null)?.focus();
                else if (e.key === "ArrowUp") (e.currentTarget.previousElementSibling as HTMLElement | null)?.focus();
              }}
            >
              {editing?.id === c.id ? (
                <form
                  onSubmit={(e) => {
                    e.preventDefault();
                    const title = editing.title.trim();
                    if (title) rename.mutate({ id: c.id, title }, { onError: (err) => setError(messageOf(err)) });
                    setEditing(null);
                  }}
                >
                  <input
                    autoFocus
                    aria-label="Title"
                    maxLength={200}
                    value={editing.title}
                    onChange={(e) => setEditing({ id: c.id, title: e.target.value })}
                    onBlur={() => setEditing(null)}
                    onKeyDown={(e) => e.key === "Escape" && setEditing(null)}
                  />
                </form>
              ) : (
                <>
                  <div className="conv-title">
                    {row.depth > 0 && <span className="muted" aria-hidden="true">↳ </span>}
                    {conversationTitle(c)}
                  </div>
                  <div className="conv-meta">
                    <ConversationStatus row={row} backendId={backend.id} onPause={() => pause.mutate(c.id, { onError: (err) => setError(messageOf(err)) })} />
                    <span title={c.updated_at ?? ""}>{ago(c.updated_at ?? c.created_at ?? undefined)}</span>
                    <span className="conv-actions">
                      <button type="button" className="link" aria-label="Rename" onClick={(e) => { e.stopPropagation(); setEditing({ id: c.id, title: conversationTitle(c) }); }}>
                        rename
                      </button>
                      <button type="button" className="link danger" aria-label="Delete" onClick={(e) => { e.stopPropagation(); del(c); }}>
                        delete
                      </button>
                    </span>
                  </div>
                  {row.depth === 0 && <div className="conv-dir mono" title={workspaceDir(c)}>{workspaceDir(c)}</div>}
                  <ChildrenToggle row={row} onToggle={() => setToggled({ ...toggled, [c.id]: !row.expanded })} />
                </>
              )}
            </li>
          );
        })}
        {usable && list.isSuccess && rows.length === 0 && <li className="empty">No conversations{query ? " match" : " yet"}.</li>}
      </ul>
    </div>
  );
}
