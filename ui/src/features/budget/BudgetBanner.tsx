// The run paused on its budget: what was spent, the limits to raise (prefilled with the current
// budget) and "Raise and resume", which sets the budget and starts the run again. It goes away
// when the state says the budget no longer holds the run (`budget_reached` turns null).
import { useEffect, useRef, useState } from "react";
import type { Api } from "../../api/client";
import { ApiError, messageOf } from "../../api/errors";
import type { Budget } from "../../api/tandemTypes";
import {
  budgetErrorsOf,
  budgetReachedText,
  draftOf,
  parseBudgetDraft,
  stillReached,
  type BudgetErrors,
  type BudgetReached,
} from "./budget";
import { BudgetFields } from "./BudgetFields";

export interface BudgetBannerProps {
  api: Pick<Api, "budget" | "setBudget" | "run">;
  conversationId: string;
  reached: BudgetReached;
  /** The budget as the state says it now; the limits the run paused on when it does not. Both
   * give way to the server's answer (its effective budget) unless the person typed first. */
  budget: Budget | null;
}

/** The limits in force when the run paused, as a budget. */
function budgetAt(r: BudgetReached): Budget {
  const b: Budget = {};
  if (r.maxCost !== null) b.max_cost = r.maxCost;
  if (r.maxTokens !== null) b.max_tokens = r.maxTokens;
  return b;
}

export function BudgetBanner({ api, conversationId, reached, budget }: BudgetBannerProps) {
  const [draft, setDraft] = useState(() => draftOf(budget ?? budgetAt(reached)));
  const edited = useRef(false);
  const [errors, setErrors] = useState<BudgetErrors>({});
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  // The server's budget is the current one (a cost limit may come from the LLM's own
  // max_budget_per_task, which the state's `budget` does not carry).
  useEffect(() => {
    let mounted = true;
    api
      .budget(conversationId)
      .then((b) => mounted && !edited.current && setDraft(draftOf(b)))
      // The state's limits stay in the fields.
      .catch(() => undefined);
    return () => {
      mounted = false;
    };
  }, [api, conversationId]);

  async function raiseAndResume() {
    setError(null);
    const parsed = parseBudgetDraft(draft);
    const found = parsed.errors ?? stillReached(parsed.budget, reached);
    setErrors(found);
    if (!parsed.budget || Object.keys(found).length) return;
    setBusy(true);
    try {
      try {
        await api.setBudget(conversationId, parsed.budget);
      } catch (e) {
        const named = budgetErrorsOf(e);
        if (named) setErrors(named);
        else setError(messageOf(e));
        return;
      }
      try {
        await api.run(conversationId);
      } catch (e) {
        // 409 names what was spent against which limit, in the server's words.
        setError(`The budget was saved, but the run did not start: ${e instanceof ApiError ? (e.detail ?? e.message) : messageOf(e)}`);
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="banner warn budget-banner" aria-label="Budget reached">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!busy) void raiseAndResume();
        }}
      >
        <strong>{budgetReachedText(reached)}</strong>
        <span className="hint"> Raise a limit, or clear it for no limit, to let the agent continue.</span>
        <div className="row">
          <BudgetFields
            draft={draft}
            errors={errors}
            onChange={(d) => {
              edited.current = true;
              setDraft(d);
            }}
          />
          <button type="submit" className="primary" disabled={busy}>
            {busy ? "Resuming…" : "Raise and resume"}
          </button>
        </div>
        {error && (
          <div className="error-text" role="alert">
            {error}
          </div>
        )}
      </form>
    </section>
  );
}
