// A run paused on its budget: the banner says what was spent, offers the limits to raise
// (prefilled with the current budget), and "Raise and resume" sets the budget then starts the
// run, over a fake server's budget and run routes; a 422 shows beside the field it names.
import { act, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { useReducer } from "react";
import { describe, expect, it, vi } from "vitest";
import { createApi, type FetchLike } from "../../api/client";
import type { WireEvent } from "../../api/types";
import { initialTimeline, timelineReducer, type TimelineInput } from "../../store/timeline";
import * as E from "../../test/events";
import { BudgetBanner } from "./BudgetBanner";
import { BudgetDialog } from "./BudgetDialog";

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

const reachedTokens = { limit: "max_tokens", spent_cost: 0.002, spent_tokens: 1699, max_tokens: 1000 };
const reachedCost = { limit: "max_cost", spent_cost: 0.0123, spent_tokens: 800, max_cost: 0.01, max_tokens: 50000 };

/**
 * A server's budget and run routes: `put` answers a PUT (default: the budget back), `run` the
 * run (default: success). Every request is recorded as "METHOD path body".
 */
function budgetServer(o: { put?: (body: unknown) => Response; run?: () => Response; budget?: unknown } = {}) {
  const calls: string[] = [];
  const fetch: FetchLike = async (req) => {
    const path = new URL(req.url).pathname;
    const body = req.method === "PUT" ? ((await req.json()) as unknown) : undefined;
    calls.push(`${req.method} ${path}${body === undefined ? "" : ` ${JSON.stringify(body)}`}`);
    if (path === "/api/conversations/c1/budget" && req.method === "GET") return json(o.budget ?? {});
    if (path === "/api/conversations/c1/budget" && req.method === "PUT") return o.put?.(body) ?? json(body);
    if (path === "/api/conversations/c1/run" && req.method === "POST") return o.run?.() ?? json({ success: true });
    return json({ detail: "Not Found" }, 404);
  };
  return { api: createApi({ baseUrl: "http://h", key: "k" }, fetch), calls };
}

/**
 * The banner as the Workspace shows it (while the state's budget_reached is set), once it has
 * the server's budget.
 */
async function setup(server: ReturnType<typeof budgetServer>, events: WireEvent[]) {
  let push: (i: TimelineInput) => void = () => {};
  function Harness() {
    const [state, dispatch] = useReducer(timelineReducer, undefined, () => timelineReducer(initialTimeline(), { type: "events", events }));
    push = dispatch;
    return state.budgetReached ? <BudgetBanner api={server.api} conversationId="c1" reached={state.budgetReached} budget={state.budget} /> : null;
  }
  render(<Harness />);
  await act(async () => {
    await vi.waitFor(() => expect(server.calls).toContain("GET /api/conversations/c1/budget"));
  });
  server.calls.length = 0;
  return { push: (i: TimelineInput) => act(() => push(i)) };
}

const banner = () => screen.getByRole("region", { name: "Budget reached" });
const field = (label: string) => within(banner()).getByLabelText(label) as HTMLInputElement;

describe("the budget banner", () => {
  it("says what was spent against the token limit, with the current budget in the fields", async () => {
    await setup(budgetServer({ budget: { max_tokens: 1000 } }), [E.budget({ max_tokens: 1000 }), E.budgetReached(reachedTokens), E.status("paused")]);
    expect(banner().textContent).toContain("Paused at its budget: 1,699 tokens of 1,000");
    expect(field("Max tokens").value).toBe("1000");
    expect(field("Max cost (US$)").value).toBe("");
  });

  it("says what was spent against the cost limit, with the server's budget in the fields", async () => {
    // The state has no budget update (the cost limit is the LLM's max_budget_per_task): the server's budget is the current one.
    await setup(budgetServer({ budget: { max_cost: 0.01, max_tokens: 50000 } }), [E.budget({ max_tokens: 50000 }), E.budgetReached(reachedCost)]);
    expect(banner().textContent).toContain("Paused at its budget: $0.0123 of $0.01");
    await waitFor(() => expect(field("Max cost (US$)").value).toBe("0.01"));
    expect(field("Max tokens").value).toBe("50000");
  });

  it("starts from the limits it paused on when the server does not answer its budget", async () => {
    const server = budgetServer();
    const failing = { ...server, api: { ...server.api, budget: () => Promise.reject(new Error("Cannot reach http://h")) } };
    render(<BudgetBanner api={failing.api} conversationId="c1" reached={{ limit: "max_cost", spentCost: 0.0123, spentTokens: 800, maxCost: 0.01, maxTokens: 50000 }} budget={null} />);
    await act(async () => undefined);
    expect(field("Max cost (US$)").value).toBe("0.01");
    expect(field("Max tokens").value).toBe("50000");
  });

  it("raises the budget, then resumes the run, and goes away when budget_reached turns null", async () => {
    const server = budgetServer({ budget: { max_tokens: 1000 } });
    const { push } = await setup(server, [E.budget({ max_tokens: 1000 }), E.budgetReached(reachedTokens), E.status("paused")]);
    fireEvent.change(field("Max tokens"), { target: { value: "5,000" } });
    fireEvent.click(within(banner()).getByRole("button", { name: "Raise and resume" }));
    await waitFor(() => expect(server.calls).toEqual(['PUT /api/conversations/c1/budget {"max_tokens":5000}', "POST /api/conversations/c1/run"]));
    // Still shown until the state says the budget no longer holds the run.
    expect(banner()).toBeTruthy();
    push({ type: "events", events: [E.budget({ max_tokens: 5000 }), E.budgetReached(null), E.status("running")] });
    expect(screen.queryByRole("region", { name: "Budget reached" })).toBeNull();
  });

  it("shows the server's 422 beside the field it names, and does not start the run", async () => {
    const server = budgetServer({
      budget: { max_cost: 0.01, max_tokens: 50000 },
      put: () => json({ detail: [{ type: "greater_than", loc: ["body", "max_cost"], msg: "max_cost: must be a positive number of US dollars, not 1e-400", input: 0 }] }, 422),
    });
    await setup(server, [E.budgetReached(reachedCost)]);
    fireEvent.change(field("Max cost (US$)"), { target: { value: "0.5" } });
    fireEvent.click(within(banner()).getByRole("button", { name: "Raise and resume" }));
    const cost = field("Max cost (US$)");
    await waitFor(() => expect(cost.getAttribute("aria-invalid")).toBe("true"));
    const message = document.getElementById(cost.getAttribute("aria-describedby") ?? "");
    expect(message?.textContent).toBe("max_cost: must be a positive number of US dollars, not 1e-400");
    expect(field("Max tokens").getAttribute("aria-invalid")).toBeNull();
    expect(server.calls).toEqual(['PUT /api/conversations/c1/budget {"max_cost":0.5,"max_tokens":50000}']);
  });

  it("names a limit the spending still reaches, or one that is not more than 0, before asking the server", async () => {
    const server = budgetServer({ budget: { max_tokens: 1000 } });
    await setup(server, [E.budgetReached(reachedTokens)]);
    fireEvent.change(field("Max tokens"), { target: { value: "1500" } });
    fireEvent.click(within(banner()).getByRole("button", { name: "Raise and resume" }));
    expect((await within(banner()).findByRole("alert")).textContent).toBe("Max tokens must be more than the 1,699 already spent");
    fireEvent.change(field("Max tokens"), { target: { value: "0" } });
    fireEvent.click(within(banner()).getByRole("button", { name: "Raise and resume" }));
    await waitFor(() => expect(within(banner()).getByRole("alert").textContent).toBe("Max tokens must be more than 0"));
    expect(server.calls).toEqual([]);
  });

  it("says why the run did not start after the budget was saved (409 naming what was spent)", async () => {
    const server = budgetServer({ budget: { max_tokens: 1000 }, run: () => json({ detail: "this conversation reached its budget: 1699 tokens of 1000; raise max_tokens to continue" }, 409) });
    await setup(server, [E.budgetReached(reachedTokens)]);
    // The server has the last word (the budget may have changed meanwhile): its reason is shown.
    fireEvent.change(field("Max tokens"), { target: { value: "" } });
    fireEvent.change(field("Max cost (US$)"), { target: { value: "1" } });
    fireEvent.click(within(banner()).getByRole("button", { name: "Raise and resume" }));
    expect((await within(banner()).findByRole("alert")).textContent).toBe(
      "The budget was saved, but the run did not start: this conversation reached its budget: 1699 tokens of 1000; raise max_tokens to continue",
    );
    expect(server.calls).toEqual(['PUT /api/conversations/c1/budget {"max_cost":1}', "POST /api/conversations/c1/run"]);
  });
});

describe("the budget editor", () => {
  it("shows the conversation's budget, saves the new one and closes", async () => {
    const server = budgetServer({ budget: { max_cost: 2 } });
    const onClose = vi.fn();
    const onSaved = vi.fn();
    render(<BudgetDialog api={server.api} conversationId="c1" onClose={onClose} onSaved={onSaved} />);
    const cost = (await screen.findByLabelText("Max cost (US$)")) as HTMLInputElement;
    expect(cost.value).toBe("2");
    expect((screen.getByLabelText("Max tokens") as HTMLInputElement).value).toBe("");
    fireEvent.change(screen.getByLabelText("Max tokens"), { target: { value: "200000" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(onClose).toHaveBeenCalled());
    expect(onSaved).toHaveBeenCalledWith({ max_cost: 2, max_tokens: 200000 });
    expect(server.calls).toEqual(["GET /api/conversations/c1/budget", 'PUT /api/conversations/c1/budget {"max_cost":2,"max_tokens":200000}']);
  });

  it("keeps the dialog open with the server's 422 beside the field, and refuses 0 itself", async () => {
    const server = budgetServer({ put: () => json({ detail: [{ loc: ["body", "max_tokens"], msg: "max_tokens: must be a positive number of tokens, not 0" }] }, 422) });
    const onClose = vi.fn();
    render(<BudgetDialog api={server.api} conversationId="c1" onClose={onClose} />);
    const tokens = (await screen.findByLabelText("Max tokens")) as HTMLInputElement;
    fireEvent.change(tokens, { target: { value: "-1" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    expect((await screen.findByRole("alert")).textContent).toBe("Max tokens must be more than 0");
    fireEvent.change(tokens, { target: { value: "10" } });
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(screen.getByRole("alert").textContent).toBe("max_tokens: must be a positive number of tokens, not 0"));
    expect(onClose).not.toHaveBeenCalled();
  });
});
