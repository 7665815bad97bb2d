// Smoke test of the shell: the local backend is probed, its conversations are listed, a wrong
// key on a second backend reads "unauthorized" on that backend only.
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { App } from "./App";
import { useBackends } from "./features/backends/backendStore";
import { setHostForTests, type Host } from "./host";

function fakeHost(): Host {
  const secrets = new Map<string, string>([["backend:r1", "wrong"]]);
  return {
    kind: "browser",
    keyringWarning: "not a keyring",
    keyringGet: async (a) => secrets.get(a) ?? null,
    keyringSet: async (a, s) => void secrets.set(a, s),
    keyringDelete: async (a) => void secrets.delete(a),
    pickFolder: null,
    localBackend: async () => ({ baseUrl: "http://local:1", key: "good" }),
    loadBackends: async () => [{ id: "r1", name: "Box", baseUrl: "http://remote:2" }],
    saveBackends: async () => {},
    loadPref: () => null,
    savePref: () => {},
  };
}

const json = (b: unknown, status = 200) => new Response(JSON.stringify(b), { status });

beforeEach(() => {
  setHostForTests(fakeHost());
  vi.stubGlobal("fetch", async (req: Request) => {
    const u = new URL(req.url);
    const key = req.headers.get("X-Session-API-Key");
    if (u.pathname === "/server_info") return json({ title: "Tandem", llm_model: u.host === "local:1" ? "openai/tandem-demo" : "x" });
    if (u.pathname === "/api/conversations/search") {
      if (key !== "good") return json({ detail: "Unauthorized" }, 401);
      return json({
        items: [{ id: "11111111-2222-4333-8444-555555555555", title: "Fix the flaky test", execution_status: "finished", updated_at: new Date().toISOString(), workspace: { kind: "LocalWorkspace", working_dir: "/src/app" }, metrics: { accumulated_cost: 0.42 } }],
        next_page_id: null,
      });
    }
    return json({ detail: "Not Found" }, 404);
  });
});
afterEach(() => {
  vi.unstubAllGlobals();
  setHostForTests(null);
});

describe("App shell", () => {
  it("lists the local backend's conversations, shows demo mode, and isolates an unauthorized remote", async () => {
    await act(async () => {
      await useBackends.getState().load();
    });
    render(
      <QueryClientProvider client={new QueryClient()}>
        <App />
      </QueryClientProvider>,
    );
    expect(await screen.findByText("Fix the flaky test")).toBeTruthy();
    expect(screen.getByText("$0.42")).toBeTruthy();
    expect(screen.getByText("Demo mode")).toBeTruthy();
    await waitFor(() => expect(useBackends.getState().health.r1?.status).toBe("unauthorized"));
    expect(useBackends.getState().health.local?.status).toBe("ok");
    fireEvent.change(screen.getByLabelText("Backend"), { target: { value: "r1" } });
    expect((await screen.findAllByText(/Unauthorized/)).length).toBeGreaterThan(0);
    expect(screen.queryByText("Fix the flaky test")).toBeNull();
  });

  it("opens the Costs view from the top bar, and closes it with Escape", async () => {
    await act(async () => {
      await useBackends.getState().load();
    });
    render(
      <QueryClientProvider client={new QueryClient()}>
        <App />
      </QueryClientProvider>,
    );
    fireEvent.click(screen.getByRole("button", { name: "Costs" }));
    const dialog = await screen.findByRole("dialog", { name: "Costs" });
    // The remote refuses the key: listed, not counted.
    await waitFor(() => expect(dialog.textContent).toContain("unreachable"));
    expect(dialog.textContent).toContain("Box");
    fireEvent.keyDown(dialog, { key: "Escape" });
    expect(screen.queryByRole("dialog", { name: "Costs" })).toBeNull();
  });
});
