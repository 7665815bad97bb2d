import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { setHostForTests } from "../../host";
import { createBrowserHost } from "../../host/browser";
import { useUi } from "../../store/ui";
import { useBackends, type Backend } from "../backends/backendStore";
import { ConversationsPane } from "./ConversationsPane";

const backend: Backend = { id: "local", name: "Local", kind: "local", baseUrl: "http://127.0.0.1:1", key: "k" };

const items = [
  { id: "p1", title: "Refactor the parser", execution_status: "running", updated_at: "2026-01-03T00:00:00Z", sub_conversation_ids: ["c1", "c2"] },
  { id: "c1", title: "Read the grammar", execution_status: "running", parent_conversation_id: "p1", created_at: "2026-01-02T00:01:00Z" },
  { id: "c2", title: "Write the tests", execution_status: "error", parent_conversation_id: "p1", created_at: "2026-01-02T00:02:00Z" },
  { id: "solo", title: "Another task", execution_status: "idle", updated_at: "2026-01-01T00:00:00Z" },
];

const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { "content-type": "application/json" } });

describe("ConversationsPane: sub-agent conversations", () => {
  let calls: string[];
  beforeEach(() => {
    localStorage.clear();
    setHostForTests(createBrowserHost());
    calls = [];
    vi.stubGlobal("fetch", async (req: Request) => {
      const u = new URL(req.url);
      calls.push(`${req.method} ${u.pathname}`);
      if (u.pathname === "/api/conversations/search") return json({ items, next_page_id: null });
      return json({ success: true });
    });
    useBackends.setState({ backends: [backend], activeId: "local", health: { local: { status: "ok", demo: false } } });
    useUi.setState({ conversationId: null });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    setHostForTests(null);
    useBackends.setState({ backends: [], activeId: null, health: {} });
  });

  function renderPane() {
    render(
      <QueryClientProvider client={new QueryClient()}>
        <ConversationsPane backend={backend} />
      </QueryClientProvider>,
    );
  }

  const titles = () => screen.getAllByRole("option").map((o) => o.querySelector(".conv-title")?.textContent?.replace("↳ ", "↳"));

  it("lists children under their parent, not at the top level, with their count, status and failures", async () => {
    renderPane();
    await waitFor(() => expect(screen.getAllByRole("option")).toHaveLength(4));
    // A running child expands its parent.
    expect(titles()).toEqual(["Refactor the parser", "↳Read the grammar", "↳Write the tests", "Another task"]);
    const parent = screen.getAllByRole("option")[0]!;
    const toggle = within(parent).getByRole("button", { name: "Hide 2 sub-agents" });
    expect(toggle.textContent).toContain("1 running");
    expect(toggle.textContent).toContain("1 failed");
    expect(within(screen.getAllByRole("option")[2]!).getByText("Error")).toBeTruthy();

    fireEvent.click(toggle);
    expect(titles()).toEqual(["Refactor the parser", "Another task"]);
    fireEvent.click(within(parent).getByRole("button", { name: "Show 2 sub-agents" }));
    expect(titles()).toHaveLength(4);
  });

  it("opens a child like any conversation", async () => {
    renderPane();
    const child = await screen.findByRole("option", { name: /Write the tests/ });
    fireEvent.click(child);
    expect(useUi.getState().conversationId).toBe("c2");
    await waitFor(() => expect(screen.getByRole("option", { name: /Write the tests/ }).getAttribute("aria-selected")).toBe("true"));
  });

  it("pauses a running child through the pause route", async () => {
    renderPane();
    const pause = await screen.findByRole("button", { name: "Pause Read the grammar" });
    // Only running children get the button.
    expect(screen.queryByRole("button", { name: "Pause Write the tests" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Pause Refactor the parser" })).toBeNull();
    await act(async () => fireEvent.click(pause));
    await waitFor(() => expect(calls).toContain("POST /api/conversations/c1/pause"));
    // The click pauses; it does not open the child.
    expect(useUi.getState().conversationId).toBeNull();
  });
});

describe("ConversationsPane: the run queue", () => {
  beforeEach(() => {
    localStorage.clear();
    setHostForTests(createBrowserHost());
    useBackends.setState({ backends: [backend], activeId: "local", health: { local: { status: "ok", demo: false } } });
    useUi.setState({ conversationId: null });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    setHostForTests(null);
    useBackends.setState({ backends: [], activeId: null, health: {} });
  });

  it("shows a waiting run as queued with its place, and refreshes it while it waits", async () => {
    let ahead: number | null = 2;
    vi.stubGlobal("fetch", async (req: Request) => {
      if (new URL(req.url).pathname !== "/api/conversations/search") return json({ detail: "Not Found" });
      return json({
        items: [
          { id: "q1", title: "Waits its turn", execution_status: "running", ...(ahead === null ? {} : { queued_ahead: ahead }) },
          { id: "r1", title: "Runs now", execution_status: "running" },
        ],
        next_page_id: null,
      });
    });
    render(
      <QueryClientProvider client={new QueryClient()}>
        <ConversationsPane backend={backend} />
      </QueryClientProvider>,
    );
    const pill = async (title: RegExp) => (await screen.findByRole("option", { name: title })).querySelector(".status-pill")?.textContent;
    await waitFor(async () => expect(await pill(/Waits its turn/)).toBe("Queued, 2 ahead"));
    expect(await pill(/Runs now/)).toBe("Running");
    // The list is asked again while a run waits (every 2 s: listPollMs).
    ahead = 0;
    await waitFor(async () => expect(await pill(/Waits its turn/)).toBe("Queued, next"), { timeout: 6000 });
    ahead = null;
    await waitFor(async () => expect(await pill(/Waits its turn/)).toBe("Running"), { timeout: 6000 });
  }, 15_000); // two polls at the real interval
});
