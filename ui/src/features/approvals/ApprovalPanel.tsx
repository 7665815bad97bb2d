// Pending actions, shown prominently when the conversation waits for confirmation: risk, full
// arguments, and Approve / Reject with a reason / Edit-and-approve, with keyboard shortcuts
// (a, r, e when the panel has focus; Alt+Shift+A approves from anywhere, see Shortcuts).
// Edit-and-approve edits the first pending action and runs exactly that, once, through Tandem's
// approve_edited route; the other pending actions keep waiting for their own decision.
import { useEffect, useRef, useState, type KeyboardEvent } from "react";
import type { Api } from "../../api/client";
import { ApiError, messageOf } from "../../api/errors";
import type { ActionEvent } from "../../api/types";
import { RiskBadge } from "../timeline/RiskBadge";
import { actionArguments, actionHeadline } from "../timeline/describe";

export type ApprovalApi = Pick<Api, "respondToConfirmation" | "approveEdited" | "run">;

type Mode = { kind: "idle" } | { kind: "reject"; reason: string; resume: boolean } | { kind: "edit"; text: string };

/** What the panel says when the backend has no approve_edited route (an upstream server). */
export const EDIT_NEEDS_TANDEM =
  "Editing an action before it runs needs a Tandem server; this backend can only approve or reject it as proposed.";

/**
 * The arguments to run in place of `ev`'s, from the edited text: for the terminal the text is
 * the command (the other arguments stay), for other tools it is their arguments as JSON.
 */
export function editedArguments(ev: ActionEvent, text: string): Record<string, unknown> {
  const args = actionArguments(ev);
  if (ev.tool_name === "terminal" && typeof args.command === "string") return { ...args, command: text };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new Error(`The edited arguments are not valid JSON: ${messageOf(e)}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new Error("The edited arguments must be a JSON object.");
  }
  return parsed as Record<string, unknown>;
}

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
  canEdit = true,
}: {
  api: ApprovalApi;
  conversationId: string;
  pending: ActionEvent[];
  /** False when the server says it has no approve_edited route (its capabilities). */
  canEdit?: boolean;
}) {
  const [mode, setMode] = useState<Mode>({ kind: "idle" });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  // Known from the server's capabilities, or learnt from a 404/405 when it did not list them.
  const [routeMissing, setRouteMissing] = useState(false);
  const editUnsupported = routeMissing || !canEdit;
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
  // A rejection alone leaves the conversation idle (as upstream servers do); by default the
  // agent then goes on, reading the reason, as it does in `tandem run`.
  const reject = (reason: string, resume: boolean) =>
    act(async () => {
      await api.respondToConfirmation(conversationId, false, reason.trim() || "User rejected the action.");
      if (!resume) return;
      // Rejected: the form closes even if resuming fails, so the rejection is not sent again.
      setMode({ kind: "idle" });
      await api.run(conversationId);
    });
  const submitEdit = (text: string) => {
    const action = first;
    const actionId = action?.id;
    if (!action || !actionId) return;
    void act(async () => {
      try {
        const result = await api.approveEdited(conversationId, actionId, editedArguments(action, text));
        const rated = result.security_risk === "UNKNOWN" ? "" : ` (rated ${result.security_risk.toLowerCase()} risk)`;
        setNote(`Approved the edited action${rated}; it runs in place of the original.`);
      } catch (e) {
        // An upstream server has no such route: say so, and leave approve/reject as they are.
        // Anything else keeps the edit open with the reason, so the person can fix it.
        if (e instanceof ApiError && (e.status === 404 || e.status === 405)) setRouteMissing(true);
        else throw e;
      }
    });
  };

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
      setMode({ kind: "reject", reason: "", resume: true });
    } else if (e.key === "e" && !editUnsupported) {
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
            void reject(mode.reason, mode.resume);
          }}
        >
          <input
            ref={reasonRef}
            aria-label="Reason for rejecting"
            placeholder="Why not? (the agent reads this)"
            value={mode.reason}
            onChange={(e) => setMode({ ...mode, reason: e.target.value })}
          />
          <label className="inline">
            <input type="checkbox" checked={mode.resume} onChange={(e) => setMode({ ...mode, resume: e.target.checked })} /> then let the agent continue
          </label>
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
          <button type="button" className="danger" disabled={busy} onClick={() => setMode({ kind: "reject", reason: "", resume: true })}>
            Reject…
          </button>
          <button
            type="button"
            disabled={busy || editUnsupported}
            onClick={() => setMode({ kind: "edit", text: editableText(first) })}
          >
            Edit and approve…
          </button>
        </div>
      )}
      {error && (
        <div className="error-text" role="alert">
          {error}
        </div>
      )}
      {editUnsupported && <div className="hint">{EDIT_NEEDS_TANDEM}</div>}
      {note && <div className="hint">{note}</div>}
    </section>
  );
}
