import { describe, expect, it } from "vitest";
import { errorFromStatus } from "../../api/errors";
import { initialTimeline, timelineReducer } from "../../store/timeline";
import * as E from "../../test/events";
import { itemText } from "../timeline/describe";
import { kindOf } from "../timeline/filter";
import {
  budgetErrorsOf,
  budgetReachedText,
  budgetSummary,
  formatUsd,
  offersBudgets,
  parseBudgetDraft,
  readBudgetReached,
  stillReached,
} from "./budget";

const reachedTokens = { limit: "max_tokens", spent_cost: 0, spent_tokens: 1699, max_cost: null, max_tokens: 1000 };
const reachedCost = { limit: "max_cost", spent_cost: 0.0123, spent_tokens: 500, max_cost: 0.01 };

describe("budget texts", () => {
  it("say what was spent against the limit the run paused on", () => {
    expect(budgetReachedText(readBudgetReached(reachedCost)!)).toBe("Paused at its budget: $0.0123 of $0.01");
    expect(budgetReachedText(readBudgetReached(reachedTokens)!)).toBe("Paused at its budget: 1,699 tokens of 1,000");
    expect(readBudgetReached(null)).toBeNull();
    expect(readBudgetReached({ limit: "max_time" })).toBeNull();
  });

  it("show dollars as precisely as a small budget needs", () => {
    expect(formatUsd(0.0123)).toBe("$0.0123");
    expect(formatUsd(0.01)).toBe("$0.01");
    expect(formatUsd(0.015)).toBe("$0.015");
    expect(formatUsd(0.5)).toBe("$0.50");
    expect(formatUsd(12.345)).toBe("$12.35");
    expect(budgetSummary({ max_cost: 1, max_tokens: 100000 })).toBe("$1.00 · 100,000 tokens");
    expect(budgetSummary({})).toBe("no limit");
    expect(budgetSummary(null)).toBe("no limit");
  });
});

describe("a budget form's draft", () => {
  it("refuses 0, negative and non-numbers, naming the field; empty is no limit", () => {
    expect(parseBudgetDraft({ maxCost: "0", maxTokens: "" }).errors).toEqual({ max_cost: "Max cost must be more than 0" });
    expect(parseBudgetDraft({ maxCost: "", maxTokens: "-5" }).errors).toEqual({ max_tokens: "Max tokens must be more than 0" });
    expect(parseBudgetDraft({ maxCost: "lots", maxTokens: "1.5" }).errors).toEqual({
      max_cost: "Max cost must be a number of US dollars, e.g. 0.50",
      max_tokens: "Max tokens must be a whole number of tokens, e.g. 100000",
    });
    expect(parseBudgetDraft({ maxCost: " $0.50 ", maxTokens: "100,000" })).toEqual({ budget: { max_cost: 0.5, max_tokens: 100000 }, errors: null });
    expect(parseBudgetDraft({ maxCost: "", maxTokens: " " })).toEqual({ budget: {}, errors: null });
  });

  it("names a raised limit that what was spent still reaches", () => {
    const r = readBudgetReached(reachedTokens)!;
    expect(stillReached({ max_tokens: 1500 }, r)).toEqual({ max_tokens: "Max tokens must be more than the 1,699 already spent" });
    expect(stillReached({ max_tokens: 5000 }, r)).toEqual({});
    expect(stillReached({}, r)).toEqual({});
  });

  it("reads the server's 422 per field, under the body or its budget", () => {
    const e = errorFromStatus(422, { detail: [{ loc: ["body", "max_tokens"], msg: "max_tokens: must be a positive number of tokens, not 0", type: "greater_than" }] }, "set the budget");
    expect(budgetErrorsOf(e)).toEqual({ max_tokens: "max_tokens: must be a positive number of tokens, not 0" });
    const created = errorFromStatus(422, { detail: [{ loc: ["body", "budget", "max_cost"], msg: "max_cost: must be a positive number of US dollars, not -1" }] }, "create");
    expect(budgetErrorsOf(created)).toEqual({ max_cost: "max_cost: must be a positive number of US dollars, not -1" });
    expect(budgetErrorsOf(errorFromStatus(422, { detail: [{ loc: ["body", "title"], msg: "too long" }] }, "x"))).toBeNull();
    expect(budgetErrorsOf(new Error("x"))).toBeNull();
  });

  it("is offered by Tandem servers only", () => {
    expect(offersBudgets({ capabilities: ["tandem_budget_v1"] })).toBe(true);
    expect(offersBudgets({ capabilities: [] })).toBe(false);
    expect(offersBudgets(undefined)).toBe(false);
  });
});

describe("the timeline reducer and budgets", () => {
  it("holds budget_reached until it turns null, and the budget the state records", () => {
    let s = timelineReducer(initialTimeline(), { type: "events", events: [E.budget({ max_tokens: 1000 }), E.budgetReached(reachedTokens), E.status("paused")] });
    expect(s.budget).toEqual({ max_tokens: 1000 });
    expect(s.budgetReached).toMatchObject({ limit: "max_tokens", spentTokens: 1699, maxTokens: 1000 });
    s = timelineReducer(s, { type: "events", events: [E.budget({ max_tokens: 5000 }), E.budgetReached(null)] });
    expect(s.budgetReached).toBeNull();
    expect(s.budget).toEqual({ max_tokens: 5000 });
    // A full_state snapshot carries both among its fields.
    s = timelineReducer(s, { type: "events", events: [E.fullState({ execution_status: "paused", budget: { max_cost: 0.01 }, budget_reached: reachedCost })] });
    expect(s.budget).toEqual({ max_cost: 0.01 });
    expect(s.budgetReached?.limit).toBe("max_cost");
  });
});

describe("the timeline's budget rows", () => {
  it("are history shown by default: the pause with what was spent, then the budget raised", () => {
    const s = timelineReducer(initialTimeline(), { type: "events", events: [E.budgetReached(reachedTokens), E.budgetReached(null)] });
    const [paused, raised] = s.items;
    expect(paused && kindOf(paused)).toBe("other");
    expect(paused && itemText(paused)).toBe("Paused at its budget: 1,699 tokens of 1,000");
    expect(raised && itemText(raised)).toBe("The budget was raised: the conversation can run again");
  });
});
