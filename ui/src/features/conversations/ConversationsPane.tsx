// Conversations of the active backend: title, status, cost, last activity; search, new,
// rename (F2 or double-click), delete.
import { useMemo, useState } from "react";
import { messageOf } from "../../api/errors";
import { convKey, useLive } from "../../store/live";
import { useUi } from "../../store/ui";
import { useBackends, type Backend } from "../backends/backendStore";
import { formatCost, STATUS_LABEL } from "../chat/format";
import { NewConversation } from "./NewConversation";
import {
  conversationCost,
  conversationTitle,
  useConversationMutations,
  useConversations,
  workspaceDir,
  type ConversationItem,
} from "./queries";

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

/** Status and cost of a listed conversation; one whose event stream is connected in this
 * window shows its live values, fresher than the polled list. */
function ConversationStatus({ item, backendId }: { item: ConversationItem; backendId: string }) {
  const key = convKey(backendId, item.id);
  const live = useLive((s) => (s.streams[key]?.status === "connected" ? s.timelines[key] : undefined));
  const status = live?.status ?? item.execution_status ?? "idle";
  return (
    <>
      <span className={`status-pill small st-${status}`}>{STATUS_LABEL[status] ?? status}</span>
      <span>{formatCost(live ? live.usage.cost : conversationCost(item))}</span>
    </>
  );
}

export function ConversationsPane({ backend }: { backend: Backend | null }) {
  const health = useBackends((s) => (backend ? s.health[backend.id] : undefined));
  const usable = health?.status === "ok";
  const list = useConversations(backend, usable);
  const { remove, rename } = useConversationMutations(backend);
  const current = useUi((s) => s.conversationId);
  const open = useUi((s) => s.openConversation);
  const [query, setQuery] = useState("");
  const [creating, setCreating] = useState(false);
  const [editing, setEditing] = useState<{ id: string; title: string } | null>(null);
  const [error, setError] = useState<string | null>(null);

  const rows = useMemo(() => {
    const q = query.trim().toLowerCase();
    const all = [...(list.data ?? [])].sort((a, b) => (b.updated_at ?? "").localeCompare(a.updated_at ?? ""));
    return q ? all.filter((c) => `${conversationTitle(c)} ${workspaceDir(c)} ${c.id}`.toLowerCase().includes(q)) : all;
  }, [list.data, query]);

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
        {rows.map((c) => (
          <li
            key={c.id}
            role="option"
            aria-selected={c.id === current}
            tabIndex={0}
            className={c.id === current ? "selected" : ""}
            onClick={() => open(c.id)}
            onDoubleClick={() => setEditing({ id: c.id, title: conversationTitle(c) })}
            onKeyDown={(e) => {
              if (e.target !== e.currentTarget) return;
              if (e.key === "Enter") open(c.id);
              else if (e.key === "F2") setEditing({ id: c.id, title: conversationTitle(c) });
              else if (e.key === "Delete") del(c);
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
                <div className="conv-title">{conversationTitle(c)}</div>
                <div className="conv-meta">
                  <ConversationStatus item={c} backendId={backend.id} />
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
                <div className="conv-dir mono" title={workspaceDir(c)}>{workspaceDir(c)}</div>
              </>
            )}
          </li>
        ))}
        {usable && list.isSuccess && rows.length === 0 && <li className="empty">No conversations{query ? " match" : " yet"}.</li>}
      </ul>
    </div>
  );
}
