// Budgets (a Tandem server's): what a conversation may spend, in US dollars and tokens, before its
// run pauses. Pure readers of the state updates that carry them, the texts the banner and the
// editors show, and the checks of a form's draft (the same ones the server makes, named per field).
import type { ServerInfoView } from "../../api/client";
import { ApiError } from "../../api/errors";
import type { Budget } from "../../api/tandemTypes";

/** A limit of a budget, as the wire and a 422's `loc` name it. */
export type BudgetField = keyof Budget;

/** A message per field of a budget form. */
export type BudgetErrors = Partial<Record<BudgetField, string>>;

/** What a budget form holds: the text of each field (empty: no limit). */
export interface BudgetDraft {
  maxCost: string;
  maxTokens: string;
}

/**
 * The `budget_reached` state update's value: the limit the run paused on, what was spent and
 * both limits. The document types state values as unknown; this is how the UI reads this one.
 */
export interface BudgetReached {
  limit: BudgetField;
  spentCost: number;
  spentTokens: number;
  maxCost: number | null;
  maxTokens: number | null;
}

export const BUDGET_REACHED_KEY = "budget_reached";
export const BUDGET_KEY = "budget";

const FIELD_NAME: Record<BudgetField, string> = { max_cost: "Max cost", max_tokens: "Max tokens" };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function num(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** A `budget_reached` value, or null (the update that clears it, or anything unreadable). */
export function readBudgetReached(v: unknown): BudgetReached | null {
  if (!isRecord(v) || (v.limit !== "max_cost" && v.limit !== "max_tokens")) return null;
  return { limit: v.limit, spentCost: num(v.spent_cost) ?? 0, spentTokens: num(v.spent_tokens) ?? 0, maxCost: num(v.max_cost), maxTokens: num(v.max_tokens) };
}

/** A `budget` state value (or a saved one): only the limits that are set, and more than 0. */
export function readBudget(v: unknown): Budget | null {
  if (!isRecord(v)) return null;
  const b: Budget = {};
  const cost = num(v.max_cost);
  const tokens = num(v.max_tokens);
  if (cost !== null && cost > 0) b.max_cost = cost;
  if (tokens !== null && tokens > 0) b.max_tokens = tokens;
  return b;
}

/** Whether a budget sets any limit. */
export function hasLimit(b: Budget | null | undefined): boolean {
  return typeof b?.max_cost === "number" || typeof b?.max_tokens === "number";
}

/** Dollars as precisely as a small budget needs: `$0.0123`, `$0.01`, `$0.015`, `$12.35`. */
export function formatUsd(usd: number): string {
  if (usd >= 1 || usd === 0) return `$${usd.toFixed(2)}`;
  const fixed = usd.toFixed(4).replace(/0+$/, "");
  return `$${fixed.length < 4 ? usd.toFixed(2) : fixed}`;
}

/** Whole tokens with thousands separators: `1,699`. */
export function formatTokenCount(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** The banner's line: "Paused at its budget: $0.0123 of $0.01" or "… 1,699 tokens of 1,000". */
export function budgetReachedText(r: BudgetReached): string {
  if (r.limit === "max_cost") return `Paused at its budget: ${formatUsd(r.spentCost)} of ${r.maxCost === null ? "its limit" : formatUsd(r.maxCost)}`;
  return `Paused at its budget: ${formatTokenCount(r.spentTokens)} tokens of ${r.maxTokens === null ? "its limit" : formatTokenCount(r.maxTokens)}`;
}

/** The timeline's line for a `budget_reached` update: the pause, or (null) the budget raised. */
export function budgetMarkerText(v: unknown): string {
  const r = readBudgetReached(v);
  return r ? budgetReachedText(r) : "The budget was raised: the conversation can run again";
}

/** A budget in a few words: "$1.00 · 100,000 tokens", or "no limit". */
export function budgetSummary(b: Budget | null | undefined): string {
  const parts: string[] = [];
  if (typeof b?.max_cost === "number") parts.push(formatUsd(b.max_cost));
  if (typeof b?.max_tokens === "number") parts.push(`${formatTokenCount(b.max_tokens)} tokens`);
  return parts.length ? parts.join(" · ") : "no limit";
}

/** A form's draft of `b` (an unset limit is an empty field). */
export function draftOf(b: Budget | null | undefined): BudgetDraft {
  return {
    maxCost: typeof b?.max_cost === "number" ? String(b.max_cost) : "",
    maxTokens: typeof b?.max_tokens === "number" ? String(b.max_tokens) : "",
  };
}

/**
 * The budget a draft asks for, or a message per wrong field: a limit must be a number more than
 * 0 (tokens a whole one); an empty field is no limit. `$` and thousands separators are allowed.
 */
export function parseBudgetDraft(d: BudgetDraft): { budget: Budget; errors: null } | { budget: null; errors: BudgetErrors } {
  const errors: BudgetErrors = {};
  const budget: Budget = {};
  const cost = d.maxCost.trim().replace(/^\$/, "").replace(/,/g, "").trim();
  if (cost) {
    const n = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(cost) ? Number(cost) : NaN;
    if (!Number.isFinite(n)) errors.max_cost = `${FIELD_NAME.max_cost} must be a number of US dollars, e.g. 0.50`;
    else if (n <= 0) errors.max_cost = `${FIELD_NAME.max_cost} must be more than 0`;
    else budget.max_cost = n;
  }
  const tokens = d.maxTokens.trim().replace(/[,_\s]/g, "");
  if (tokens) {
    const n = /^[-+]?\d+(\.\d+)?$/.test(tokens) ? Number(tokens) : NaN;
    if (Number.isFinite(n) && n <= 0) errors.max_tokens = `${FIELD_NAME.max_tokens} must be more than 0`;
    else if (!Number.isSafeInteger(n)) errors.max_tokens = `${FIELD_NAME.max_tokens} must be a whole number of tokens, e.g. 100000`;
    else budget.max_tokens = n;
  }
  return Object.keys(errors).length ? { budget: null, errors } : { budget, errors: null };
}

/**
 * For resuming: a limit of `b` that what was spent already reaches would pause the run again at
 * once (the server refuses the run with 409), so it is named before asking.
 */
export function stillReached(b: Budget, r: BudgetReached): BudgetErrors {
  const errors: BudgetErrors = {};
  if (typeof b.max_cost === "number" && b.max_cost <= r.spentCost)
    errors.max_cost = `${FIELD_NAME.max_cost} must be more than the ${formatUsd(r.spentCost)} already spent`;
  if (typeof b.max_tokens === "number" && b.max_tokens <= r.spentTokens)
    errors.max_tokens = `${FIELD_NAME.max_tokens} must be more than the ${formatTokenCount(r.spentTokens)} already spent`;
  return errors;
}

/**
 * The server's 422 per field (`loc` ending in `max_cost` or `max_tokens`, under `body` or
 * `body.budget`), or null when `e` names neither.
 */
export function budgetErrorsOf(e: unknown): BudgetErrors | null {
  if (!(e instanceof ApiError)) return null;
  const errors: BudgetErrors = {};
  for (const f of e.fields) {
    const field = f.loc[f.loc.length - 1];
    if (field === "max_cost" || field === "max_tokens") errors[field] = f.msg || `${FIELD_NAME[field]} was refused`;
  }
  return Object.keys(errors).length ? errors : null;
}

/**
 * Whether a server has budgets (capability `tandem_budget_v1`); upstream's has no budget routes
 * and may refuse the `budget` field.
 */
export function offersBudgets(info: ServerInfoView | undefined): boolean {
  return (info?.capabilities ?? []).includes("tandem_budget_v1");
}
