// The two limits of a budget as form fields, each with its message beside it (the form's own
// check, or the server's 422 naming the field).
import { useId } from "react";
import type { BudgetDraft, BudgetErrors, BudgetField } from "./budget";
import "./budget.css";

export function BudgetFields({ draft, errors, onChange }: { draft: BudgetDraft; errors: BudgetErrors; onChange(d: BudgetDraft): void }) {
  const id = useId();
  const field = (name: BudgetField, label: string, key: keyof BudgetDraft, placeholder: string, inputMode: "decimal" | "numeric") => {
    const error = errors[name];
    return (
      // The message is beside the field, not in its label: the field's name stays its label.
      <div className="budget-field">
        <label htmlFor={`${id}-${name}-input`}>{label}</label>
        <input
          id={`${id}-${name}-input`}
          className="mono"
          inputMode={inputMode}
          placeholder={placeholder}
          value={draft[key]}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${id}-${name}` : undefined}
          onChange={(e) => onChange({ ...draft, [key]: e.target.value })}
        />
        {error && (
          <span className="error-text" id={`${id}-${name}`} role="alert">
            {error}
          </span>
        )}
      </div>
    );
  };
  return (
    <div className="budget-fields">
      {field("max_cost", "Max cost (US$)", "maxCost", "no limit", "decimal")}
      {field("max_tokens", "Max tokens", "maxTokens", "no limit", "numeric")}
    </div>
  );
}
