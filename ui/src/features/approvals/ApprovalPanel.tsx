// Pending actions, shown prominently when the conversation waits for confirmation: risk, full
// arguments, and Approve / Reject with a reason / Edit-and-approve, with keyboard shortcuts
// (a, r, e when the panel has focus; Alt+Shift+A approves from anywhere, see Shortcuts).
import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import type { Api } from "../../api/client";
import { messageOf } from "../../api/errors";
import type { ActionEvent } from "../../api/types";
import { RiskBadge } from "../timeline/RiskBadge";
import { actionArguments, actionHeadline } from "../timeline/describe";
import { EDIT_REJECT_REASON, editMessage } from "./policy";

export type ApprovalApi = Pick<Api, "respondToConfirmation" | "sendMessage">;

type Mode = { kind: "idle" } | { kind: "reject"; reason: string } | { kind: "edit"; text: string };

/** Edited commands waiting for the agent to re-issue them, per conversation. */
const expectedEdits = new Map<string, { tool: string; headline: string }>();

function editableText(ev: ActionEvent): string {
  const args = actionArguments(ev);
  if (ev.tool_name === "terminal" && typeof args.command === "string") return args.command;
  const { security_risk: _r, summary: _s, ...rest } = args;
  return JSON.stringify(rest, null, 2);
}

function isTyping(e: KeyboardEvent): boolean {
  const t = e.target as HTMLElement;
  return t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable;
}

export function ApprovalPanel({
  api,
  conversationId,
  pending,
}: {
  api: ApprovalApi;
  conversationId: string;
  pending: ActionEvent[];
}) {
  const [mode, setMode] = useState<Mode>({ kind: "idle" });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const reasonRef = useRef<HTMLInputElement>(null);
  const editRef = useRef<HTMLTextAreaElement>(null);
  const first = pending[0];

  async function act(f: () => Promise<unknown>) {
    setBusy(true);
    setError(null);
    try {
      await f();
      setMode({ kind: "idle" });
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }

  const approve = () => act(() => api.respondToConfirmation(conversationId, true));
  const reject = (reason: string) =>
    act(() => api.respondToConfirmation(conversationId, false, reason.trim() || "User rejected the action."));
  const submitEdit = (text: string) =>
    act(async () => {
      if (!first) return;
      expectedEdits.set(conversationId, { tool: first.tool_name, headline: text.trim() });
      await api.respondToConfirmation(conversationId, false, EDIT_REJECT_REASON);
      await api.sendMessage(conversationId, editMessage(first.tool_name, text), true);
      setNote("Edited version sent; it will be approved automatically when the agent issues it.");
    });

  // The agent re-issued the edited command: approve it once, as the person already did.
  useEffect(() => {
    const want = expectedEdits.get(conversationId);
    if (!want || !first || pending.length !== 1) return;
    if (first.tool_name === want.tool && editableText(first).trim() === want.headline) {
      expectedEdits.delete(conversationId);
      setNote("Approved the edited action.");
      void approve();
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [first?.id, conversationId]);

  useEffect(() => {
    if (mode.kind === "reject") reasonRef.current?.focus();
    if (mode.kind === "edit") editRef.current?.focus();
  }, [mode.kind]);

  if (!first) return null;

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key === "Escape" && mode.kind !== "idle") {
      setMode({ kind: "idle" });
      e.currentTarget.focus();
      return;
    }
    if (isTyping(e) || e.ctrlKey || e.metaKey || e.altKey || busy) return;
    if (e.key === "a") {
      e.preventDefault();
      void approve();
    } else if (e.key === "r") {
      e.preventDefault();
      setMode({ kind: "reject", reason: "" });
    } else if (e.key === "e") {
      e.preventDefault();
      setMode({ kind: "edit", text: editableText(first) });
    }
  };

  return (
    <section
      className="approvals"
      data-pane="approvals"
      tabIndex={-1}
      onKeyDown={onKeyDown}
      aria-label="Pending approval"
      role="region"
    >
      <div className="approvals-head">
        <strong>
          {pending.length === 1 ? "The agent wants to run an action" : `The agent wants to run ${pending.length} actions`}
        </strong>
        <span className="hint">
          <kbd>a</kbd> approve · <kbd>r</kbd> reject · <kbd>e</kbd> edit
        </span>
      </div>
      {pending.map((ev) => (
        <div key={ev.id} className="approval-item">
          <div className="item-head">
            <span className="tool">{ev.tool_name}</span>
            <RiskBadge risk={ev.security_risk} />
          </div>
          <code className="headline big">{actionHeadline(ev)}</code>
          <pre className="args-full" aria-label="Arguments">
            {JSON.stringify(actionArguments(ev), null, 2)}
          </pre>
        </div>
      ))}

      {mode.kind === "reject" && (
        <form
          className="approval-form"
          onSubmit={(e) => {
            e.preventDefault();
            void reject(mode.reason);
          }}
        >
          <input
            ref={reasonRef}
            aria-label="Reason for rejecting"
            placeholder="Why not? (the agent reads this)"
            value={mode.reason}
            onChange={(e) => setMode({ kind: "reject", reason: e.target.value })}
          />
          <button type="submit" className="danger" disabled={busy}>
            Reject
          </button>
          <button type="button" onClick={() => setMode({ kind: "idle" })}>
            Cancel
          </button>
        </form>
      )}

      {mode.kind === "edit" && (
        <form
          className="approval-form column"
          onSubmit={(e) => {
            e.preventDefault();
            void submitEdit(mode.text);
          }}
        >
          <textarea
            ref={editRef}
            aria-label="Edited action"
            className="mono"
            rows={Math.min(12, mode.text.split("\n").length + 1)}
            value={mode.text}
            onChange={(e) => setMode({ kind: "edit", text: e.target.value })}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
                e.preventDefault();
                void submitEdit(mode.text);
              }
            }}
          />
          <div className="row">
            <button type="submit" className="primary" disabled={busy}>
              Approve edited (Ctrl+Enter)
            </button>
            <button type="button" onClick={() => setMode({ kind: "idle" })}>
              Cancel
            </button>
          </div>
        </form>
      )}

      {mode.kind === "idle" && (
        <div className="row">
          <button type="button" className="primary" disabled={busy} onClick={() => void approve()}>
            Approve
          </button>
          <button type="button" className="danger" disabled={busy} onClick={() => setMode({ kind: "reject", reason: "" })}>
            Reject…
          </button>
          <button type="button" disabled={busy} onClick={() => setMode({ kind: "edit", text: editableText(first) })}>
            Edit and approve…
          </button>
        </div>
      )}
      {error && (
        <div className="error-text" role="alert">
          {error}
        </div>
      )}
      {note && <div className="hint">{note}</div>}
    </section>
  );
}
