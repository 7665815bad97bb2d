// The Docker sandbox in the backend switch, over a fake desktop host whose sandbox reports the
// statuses the Rust side emits: choosing it asks for a folder and starts there, the build's
// line and the start's step show while it comes up, a connected sandbox is probed like a
// remote backend with the key from the keyring, a failure shows its reason and retries on the
// same folder, and leaving it stops it.
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { setHostForTests, type Host, type SandboxState, type SandboxStatus } from "../../host";
import { SANDBOX_ID, useBackends } from "./backendStore";
import { BackendSwitcher } from "./BackendSwitcher";
import { folderName } from "./SandboxBar";

const FOLDER = "/home/ann/project";
const URL_ = "http://127.0.0.1:4100";

function fakeDesktop(picked: string | null = FOLDER) {
  const listeners = new Set<(s: SandboxStatus) => void>();
  const calls: string[] = [];
  const prefs = new Map<string, unknown>();
  const secrets = new Map<string, string>([["backend:sandbox", "sb-key"]]);
  let current: SandboxStatus = { seq: 0, state: { state: "stopped", workspace: null } };
  const next = (state: SandboxState) => (current = { seq: current.seq + 1, state });
  const host: Host = {
    kind: "tauri",
    keyringWarning: null,
    keyringGet: async (a) => secrets.get(a) ?? null,
    keyringSet: async (a, s) => void secrets.set(a, s),
    keyringDelete: async (a) => void secrets.delete(a),
    pickFolder: async () => picked,
    localBackend: async () => ({ baseUrl: "http://local:1", key: "good" }),
    loadBackends: async () => [],
    saveBackends: async () => {},
    loadPref: <T,>(n: string) => (prefs.get(n) ?? null) as T | null,
    savePref: (n, v) => void prefs.set(n, v),
    sandbox: {
      status: async () => current,
      async start(workspace) {
        calls.push(`start ${workspace}`);
        return next({ state: "starting", workspace, step: "connecting" });
      },
      async stop() {
        calls.push("stop");
        return next({ state: "stopped", workspace: current.state.workspace ?? null });
      },
      async listen(l) {
        listeners.add(l);
        return () => void listeners.delete(l);
      },
    },
  };
  /** The desktop emits a new status. */
  const emit = (state: SandboxState) => act(() => listeners.forEach((l) => l(next(state))));
  return {
    host,
    calls,
    prefs,
    emit,
    secrets,
    stale: (state: SandboxState) => act(() => listeners.forEach((l) => l({ seq: 1, state }))),
    /** The desktop's status before the UI loads (a reload of the window). */
    already: (state: SandboxState) => void next(state),
  };
}

const json = (b: unknown, status = 200) => new Response(JSON.stringify(b), { status });

async function renderSwitcher(d: ReturnType<typeof fakeDesktop>) {
  setHostForTests(d.host);
  await act(async () => {
    await useBackends.getState().load();
  });
  render(<BackendSwitcher />);
}

const connected = (model: string | null = "openai/gpt-5"): SandboxState => ({
  state: "connected",
  workspace: FOLDER,
  baseUrl: URL_,
  keyAccount: "backend:sandbox",
  workspaceInside: "/workspace",
  id: "c0ffee",
  model,
});

beforeEach(() => {
  vi.stubGlobal("fetch", async (req: Request) => {
    const u = new URL(req.url);
    const keyed = req.headers.get("X-Session-API-Key") === (u.origin === URL_ ? "sb-key" : "good");
    if (u.pathname === "/server_info") return json({ title: "Tandem", llm_model: "openai/gpt-5", desktop: true });
    if (u.pathname === "/api/conversations/search") return keyed ? json({ items: [], next_page_id: null }) : json({ detail: "Unauthorized" }, 401);
    return json({ detail: "Not Found" }, 404);
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  setHostForTests(null);
  useBackends.setState({ loaded: false, backends: [], activeId: null, health: {}, sandbox: null });
});

describe("Docker sandbox backend", () => {
  it("asks for a folder, shows the build and the start, then connects like a remote backend", async () => {
    const d = fakeDesktop();
    await renderSwitcher(d);
    expect(screen.getByRole("option", { name: "Docker sandbox" })).toBeTruthy();
    fireEvent.change(screen.getByLabelText("Backend"), { target: { value: SANDBOX_ID } });
    await waitFor(() => expect(d.calls).toEqual([`start ${FOLDER}`]));
    expect(useBackends.getState().activeId).toBe(SANDBOX_ID);
    expect(d.prefs.get("activeBackend")).toBe(SANDBOX_ID);
    expect(await screen.findByText("sandbox: connecting to Docker…")).toBeTruthy();

    d.emit({ state: "building", workspace: FOLDER, line: "Step 3/12 : RUN apt-get install -y chromium" });
    expect(screen.getByText("building the sandbox image…")).toBeTruthy();
    expect(screen.getByTestId("sandbox-line").textContent).toBe("Step 3/12 : RUN apt-get install -y chromium");
    expect(screen.getByTitle(`Host folder: ${FOLDER}`).textContent).toBe("project");
    // Nothing to talk to yet: the conversations pane hears why.
    expect(useBackends.getState().health[SANDBOX_ID]?.message).toBe("Building the sandbox image…");

    d.emit({ state: "starting", workspace: FOLDER, step: "waiting_for_health" });
    expect(screen.getByText("sandbox: waiting for its server…")).toBeTruthy();
    expect(screen.queryByTestId("sandbox-line")).toBeNull();

    d.emit(connected());
    await waitFor(() => expect(useBackends.getState().health[SANDBOX_ID]?.status).toBe("ok"));
    const b = useBackends.getState().backends.find((x) => x.id === SANDBOX_ID);
    expect(b).toMatchObject({ kind: "sandbox", baseUrl: URL_, key: "sb-key", workspaceInside: "/workspace" });
    expect(screen.getByText("connected")).toBeTruthy();
    expect(screen.getByRole("button", { name: "Stop" })).toBeTruthy();
    expect(screen.queryByText("no default LLM")).toBeNull();

    // A status older than the last one heard (a late command answer) changes nothing.
    d.stale({ state: "stopped", workspace: FOLDER });
    expect(useBackends.getState().sandbox?.state.state).toBe("connected");
  });

  it("says so when the sandbox has no default LLM", async () => {
    const d = fakeDesktop();
    await renderSwitcher(d);
    fireEvent.change(screen.getByLabelText("Backend"), { target: { value: SANDBOX_ID } });
    await waitFor(() => expect(d.calls).toHaveLength(1));
    d.emit(connected(null));
    expect(await screen.findByText("no default LLM")).toBeTruthy();
  });

  it("shows a failure with its reason and retries on the same folder", async () => {
    const d = fakeDesktop();
    await renderSwitcher(d);
    fireEvent.change(screen.getByLabelText("Backend"), { target: { value: SANDBOX_ID } });
    await waitFor(() => expect(d.calls).toHaveLength(1));
    const reason =
      "no Docker daemon answers at unix:///nowhere.sock: No such file or directory. Start one (as root: `dockerd`) or point DOCKER_HOST at a running daemon";
    d.emit({ state: "failed", workspace: FOLDER, reason: `${reason}\n--- its last output ---\nboom`, code: "no_docker" });
    expect(screen.getByText("sandbox failed")).toBeTruthy();
    const alert = screen.getByRole("alert");
    expect(alert.textContent).toBe(reason);
    expect(alert.getAttribute("title")).toContain("boom");
    expect(useBackends.getState().health[SANDBOX_ID]).toMatchObject({ status: "error", message: `The Docker sandbox failed: ${reason}\n--- its last output ---\nboom` });
    expect(useBackends.getState().backends.find((x) => x.id === SANDBOX_ID)?.baseUrl).toBe("");

    fireEvent.click(screen.getByRole("button", { name: "Retry" }));
    await waitFor(() => expect(d.calls).toEqual([`start ${FOLDER}`, `start ${FOLDER}`]));
    expect(await screen.findByText("sandbox: connecting to Docker…")).toBeTruthy();
  });

  it("stops the sandbox when the person switches away, and shows it stopped on return", async () => {
    const d = fakeDesktop();
    await renderSwitcher(d);
    fireEvent.change(screen.getByLabelText("Backend"), { target: { value: SANDBOX_ID } });
    await waitFor(() => expect(d.calls).toHaveLength(1));
    d.emit(connected());
    await waitFor(() => expect(useBackends.getState().health[SANDBOX_ID]?.status).toBe("ok"));

    fireEvent.change(screen.getByLabelText("Backend"), { target: { value: "local" } });
    await waitFor(() => expect(d.calls).toEqual([`start ${FOLDER}`, "stop"]));
    await waitFor(() => expect(useBackends.getState().sandbox?.state).toEqual({ state: "stopped", workspace: FOLDER }));
    expect(useBackends.getState().activeId).toBe("local");
    expect(useBackends.getState().backends.find((x) => x.id === SANDBOX_ID)?.key).toBeNull();

    // Back on it (the app restored it as the last backend): stopped, with Start on that folder.
    act(() => useBackends.setState({ activeId: SANDBOX_ID }));
    expect(screen.getByText("sandbox stopped")).toBeTruthy();
    fireEvent.click(screen.getByRole("button", { name: "Start" }));
    await waitFor(() => expect(d.calls.at(-1)).toBe(`start ${FOLDER}`));
  });

  it("changes nothing when the folder picker is cancelled", async () => {
    const d = fakeDesktop(null);
    await renderSwitcher(d);
    fireEvent.change(screen.getByLabelText("Backend"), { target: { value: SANDBOX_ID } });
    await act(async () => {});
    expect(d.calls).toEqual([]);
    expect(useBackends.getState().activeId).toBe("local");
  });

  it("connects again after a reload of the window while the sandbox runs, keeping its conversation", async () => {
    const d = fakeDesktop();
    d.already(connected());
    d.prefs.set("activeBackend", SANDBOX_ID);
    d.prefs.set("sandboxId", "c0ffee");
    d.prefs.set("lastConversation.sandbox", "conv-1");
    await renderSwitcher(d);
    await waitFor(() => expect(useBackends.getState().health[SANDBOX_ID]?.status).toBe("ok"));
    expect(useBackends.getState().backends.find((x) => x.id === SANDBOX_ID)).toMatchObject({ baseUrl: URL_, key: "sb-key" });
    expect(d.prefs.get("lastConversation.sandbox")).toBe("conv-1");
    expect(d.calls).toEqual([]);
  });

  it("forgets the conversation of a sandbox that no longer runs", async () => {
    const d = fakeDesktop();
    d.prefs.set("activeBackend", SANDBOX_ID);
    d.prefs.set("lastConversation.sandbox", "conv-1");
    await renderSwitcher(d);
    expect(d.prefs.get("lastConversation.sandbox")).toBeNull();
    expect(screen.getByText("sandbox stopped")).toBeTruthy();
  });

  it("has no sandbox where the host cannot start one", async () => {
    const d = fakeDesktop();
    setHostForTests({ ...d.host, sandbox: undefined });
    await act(async () => {
      await useBackends.getState().load();
    });
    expect(useBackends.getState().backends.map((b) => b.id)).toEqual(["local"]);
    expect(useBackends.getState().sandbox).toBeNull();
  });
});

describe("folderName", () => {
  it("is the last part of a path", () => {
    expect(folderName("/home/ann/project/")).toBe("project");
    expect(folderName("C:\\work\\app")).toBe("app");
    expect(folderName("/")).toBe("/");
  });
});
