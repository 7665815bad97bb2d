// Spending across backends: per conversation, per model and per day from each backend's
// conversation list (`stats.usage_to_metrics`), with totals; a backend that cannot be reached is
// listed as unreachable and the others still count.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { cleanup, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { useBackends, type Backend } from "../backends/backendStore";
import type { ConversationItem } from "../conversations/queries";
import { costReport, dayOf, tokensOf, UNKNOWN_MODEL, usageOf } from "./costs";
import { CostsView } from "./CostsDialog";

/** A listed conversation (test boundary: only the fields the report reads). Noon UTC: the same local day in any time zone within ±11 h. */
function conv(id: string, title: string, updated: string | null, usage: Record<string, [string, number, number, number]>): ConversationItem {
  const usage_to_metrics = Object.fromEntries(
    Object.entries(usage).map(([usageId, [model, cost, prompt, completion]]) => [
      usageId,
      { model_name: model, accumulated_cost: cost, accumulated_token_usage: { prompt_tokens: prompt, completion_tokens: completion } },
    ]),
  );
  return { id, title, execution_status: "finished", ...(updated ? { updated_at: `${updated}T12:00:00Z` } : {}), stats: { usage_to_metrics } } as unknown as ConversationItem;
}

const localConvs = [
  conv("a1", "Fix the parser", "2026-03-02", { agent: ["openai/gpt-5", 0.3, 1000, 200], condenser: ["openai/gpt-5-mini", 0.01, 500, 50] }),
  conv("a2", "Write the docs", "2026-03-01", { agent: ["openai/gpt-5", 0.1, 400, 100] }),
  conv("a3", "Nothing yet", "2026-03-01", {}),
];
const remoteConvs = [
  conv("b1", "Port the build", "2026-03-02", { agent: ["anthropic/claude-sonnet-4-5", 0.5, 2000, 300] }),
  conv("b2", "Old one", null, { agent: ["openai/gpt-5", 0.05, 100, 10] }),
];

describe("the cost report", () => {
  const report = costReport([
    { backendId: "local", backendName: "Local", conversations: localConvs },
    { backendId: "r1", backendName: "Build box", conversations: remoteConvs },
  ]);

  it("totals cost and tokens over every backend", () => {
    expect(report.total.cost).toBeCloseTo(0.96);
    expect(report.total.promptTokens).toBe(4000);
    expect(report.total.completionTokens).toBe(660);
    expect(report.withoutSpending).toBe(1);
  });

  it("lists each conversation that spent something, most expensive first, with its backend and models", () => {
    expect(report.byConversation.map((c) => [c.backendName, c.title, Number(c.cost.toFixed(2)), tokensOf(c), c.models])).toEqual([
      ["Build box", "Port the build", 0.5, 2300, ["anthropic/claude-sonnet-4-5"]],
      ["Local", "Fix the parser", 0.31, 1750, ["openai/gpt-5", "openai/gpt-5-mini"]],
      ["Local", "Write the docs", 0.1, 500, ["openai/gpt-5"]],
      ["Build box", "Old one", 0.05, 110, ["openai/gpt-5"]],
    ]);
  });

  it("sums each model over conversations and backends", () => {
    expect(report.byModel.map((m) => [m.model, Number(m.cost.toFixed(2)), tokensOf(m), m.conversations])).toEqual([
      ["anthropic/claude-sonnet-4-5", 0.5, 2300, 1],
      ["openai/gpt-5", 0.45, 1810, 3],
      ["openai/gpt-5-mini", 0.01, 550, 1],
    ]);
  });

  it("sums each day (of the conversation's last activity), newest first, the undated last", () => {
    expect(report.byDay.map((d) => [d.day, Number(d.cost.toFixed(2)), tokensOf(d), d.conversations])).toEqual([
      ["2026-03-02", 0.81, 4050, 2],
      ["2026-03-01", 0.1, 500, 1],
      ["no date", 0.05, 110, 1],
    ]);
  });

  it("reads a server that sends only metrics totals, and odd dates", () => {
    const upstream = { id: "u", metrics: { accumulated_cost: 0.2, accumulated_token_usage: { prompt_tokens: 10, completion_tokens: 5 } } } as unknown as ConversationItem;
    expect(usageOf(upstream)).toEqual([{ model: UNKNOWN_MODEL, spend: { cost: 0.2, promptTokens: 10, completionTokens: 5 } }]);
    expect(usageOf({ id: "v" } as unknown as ConversationItem)).toEqual([]);
    expect(dayOf("not a date")).toBeNull();
    expect(dayOf(undefined)).toBeNull();
  });
});

describe("the Costs view", () => {
  const local: Backend = { id: "local", name: "Local", kind: "local", baseUrl: "http://local:1", key: "k" };
  const remote: Backend = { id: "r1", name: "Build box", kind: "remote", baseUrl: "http://remote:2", key: "rk" };
  const down: Backend = { id: "r2", name: "Laptop", kind: "remote", baseUrl: "http://down:3", key: "dk" };

  beforeEach(() => {
    vi.stubGlobal("fetch", async (req: Request) => {
      const u = new URL(req.url);
      if (u.host === "down:3") throw new TypeError("Failed to fetch");
      if (u.pathname !== "/api/conversations/search") return new Response("{}", { status: 404 });
      const items = u.host === "local:1" ? localConvs : remoteConvs;
      return new Response(JSON.stringify({ items, next_page_id: null }), { status: 200, headers: { "content-type": "application/json" } });
    });
    useBackends.setState({ backends: [local, remote, down], activeId: "local" });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    useBackends.setState({ backends: [], activeId: null });
  });

  it("adds up the reachable backends and lists the unreachable one as such", async () => {
    render(
      <QueryClientProvider client={new QueryClient()}>
        <CostsView />
      </QueryClientProvider>,
    );
    const backends = screen.getByRole("list", { name: "Backends" });
    await waitFor(() => expect(within(backends).getByText("unreachable")).toBeTruthy());
    const laptop = within(backends).getByText("Laptop").closest("li");
    expect(laptop?.textContent).toContain("Cannot reach http://down:3");
    await waitFor(() => expect(screen.getByRole("status", { name: "Total" }).textContent).toContain("on 2 backends"));
    expect(screen.getByRole("status", { name: "Total" }).textContent).toBe(
      "$0.96 · 4,660 tokens (4,000 prompt, 660 completion) over 4 conversations on 2 backends",
    );
    const rows = (label: string) =>
      within(screen.getByRole("table", { name: label }))
        .getAllByRole("row")
        .slice(1)
        .map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent));
    expect(rows("By day")).toEqual([
      ["2026-03-02", "2", "$0.81", "4,050"],
      ["2026-03-01", "1", "$0.10", "500"],
      ["no date", "1", "$0.05", "110"],
    ]);
    expect(rows("By model")[0]).toEqual(["anthropic/claude-sonnet-4-5", "1", "$0.50", "2,300"]);
    expect(rows("By conversation").map((r) => [r[0], r[1]])).toEqual([
      ["Port the build", "Build box"],
      ["Fix the parser", "Local"],
      ["Write the docs", "Local"],
      ["Old one", "Build box"],
    ]);
  });
});
