// A conversation's budget, to view and change: what it may spend (US dollars, tokens) before its
// run pauses. Empty is no limit; the server's 422 shows beside the field it names.
import { useEffect, useState } from "react";
import type { Api } from "../../api/client";
import { messageOf } from "../../api/errors";
import type { Budget } from "../../api/tandemTypes";
import { budgetErrorsOf, draftOf, parseBudgetDraft, type BudgetDraft, type BudgetErrors } from "./budget";
import { BudgetFields } from "./BudgetFields";

export interface BudgetDialogProps {
  api: Pick<Api, "budget" | "setBudget">;
  conversationId: string;
  onClose(): void;
  /** Saved: the budget as the server answered it. */
  onSaved?(budget: Budget): void;
}

export function BudgetDialog({ api, conversationId, onClose, onSaved }: BudgetDialogProps) {
  // Null until the server said what the budget is.
  const [draft, setDraft] = useState<BudgetDraft | null>(null);
  const [errors, setErrors] = useState<BudgetErrors>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    let mounted = true;
    api
      .budget(conversationId)
      .then((b) => mounted && setDraft(draftOf(b)))
      .catch((e: unknown) => mounted && setError(`Cannot read the budget: ${messageOf(e)}`));
    return () => {
      mounted = false;
    };
  }, [api, conversationId]);

  async function save(d: BudgetDraft) {
    setError(null);
    const parsed = parseBudgetDraft(d);
    setErrors(parsed.errors ?? {});
    if (!parsed.budget) return;
    setBusy(true);
    try {
      const saved = await api.setBudget(conversationId, parsed.budget);
      onSaved?.(saved);
      onClose();
    } catch (e) {
      const named = budgetErrorsOf(e);
      if (named) setErrors(named);
      else setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-label="Budget" onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <form
        className="dialog budget-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (draft && !busy) void save(draft);
        }}
      >
        <div className="dialog-head">
          <h2>Budget</h2>
          <button type="button" onClick={onClose} aria-label="Close">
            ✕
          </button>
        </div>
        <p className="hint">
          What this conversation may spend, over every LLM it uses, before its run pauses. Empty: no limit. A paused conversation continues once
          its budget is raised.
        </p>
        {draft ? <BudgetFields draft={draft} errors={errors} onChange={setDraft} /> : !error && <div className="muted">Loading…</div>}
        {error && (
          <div className="error-text" role="alert">
            {error}
          </div>
        )}
        <div className="dialog-actions">
          <button type="submit" className="primary" disabled={!draft || busy}>
            {busy ? "Saving…" : "Save"}
          </button>
          <button type="button" autoFocus onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}
