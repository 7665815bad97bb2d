// Settings: the budget new conversations start with (max cost in US dollars, max tokens; empty
// is no limit), kept in the host's preferences like the other defaults. A limit of 0 or less is
// refused here, naming the field, before anything is saved.
import { useState } from "react";
import { budgetSummary, draftOf, parseBudgetDraft, type BudgetErrors } from "../budget/budget";
import { BudgetFields } from "../budget/BudgetFields";
import { useSettings } from "./settingsStore";

export function DefaultBudget() {
  const budget = useSettings((s) => s.budget);
  const setDefaults = useSettings((s) => s.setDefaults);
  const [draft, setDraft] = useState(() => draftOf(budget));
  const [errors, setErrors] = useState<BudgetErrors>({});
  const [saved, setSaved] = useState(false);
  return (
    <form
      className="default-budget"
      aria-label="Default budget for new conversations"
      onSubmit={(e) => {
        e.preventDefault();
        const parsed = parseBudgetDraft(draft);
        setErrors(parsed.errors ?? {});
        setSaved(false);
        if (!parsed.budget) return;
        setDefaults({ budget: parsed.budget });
        setDraft(draftOf(parsed.budget));
        setSaved(true);
      }}
    >
      <h4>Default budget for new conversations</h4>
      <p className="hint">
        What a new conversation may spend before its run pauses (on a Tandem server); empty: no limit. Raise it from the conversation to continue.
      </p>
      <div className="row">
        <BudgetFields
          draft={draft}
          errors={errors}
          onChange={(d) => {
            setDraft(d);
            setSaved(false);
          }}
        />
        <button type="submit">Save budget</button>
        {saved && (
          <span className="muted" role="status">
            Saved: {budgetSummary(budget)}
          </span>
        )}
      </div>
    </form>
  );
}
