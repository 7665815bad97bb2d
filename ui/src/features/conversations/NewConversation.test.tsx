import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { setHostForTests } from "../../host";
import { createBrowserHost } from "../../host/browser";
import { useBackends, type Backend } from "../backends/backendStore";
import { useMcp } from "../settings/mcpStore";
import { parseDraft } from "../settings/mcpServers";
import { useSettings } from "../settings/settingsStore";
import { NewConversation, defaultWorkspace, offersBrowserTools, offersSubAgents } from "./NewConversation";

const backend: Backend = { id: "local", name: "This server", kind: "local", baseUrl: "http://127.0.0.1:1", key: "k" };

function renderForm(b: Backend = backend, onCreated: (id: string) => void = () => {}) {
  render(
    <QueryClientProvider client={new QueryClient()}>
      <NewConversation backend={b} onCreated={onCreated} onCancel={() => {}} />
    </QueryClientProvider>,
  );
  return screen.getByPlaceholderText("/home/me/project") as HTMLInputElement;
}

function serverSays(info: Record<string, unknown> | undefined) {
  act(() => useBackends.setState({ health: { local: { status: "ok", demo: false, info } } }));
}

describe("defaultWorkspace", () => {
  it("prefers the folder used last, then the server's home folder, then nothing", () => {
    expect(defaultWorkspace("/srv/app", { home_dir: "/home/ann" })).toBe("/srv/app");
    expect(defaultWorkspace("  ", { home_dir: "/home/ann" })).toBe("/home/ann");
    expect(defaultWorkspace(null, { home_dir: "/home/ann" })).toBe("/home/ann");
    expect(defaultWorkspace(null, { home_dir: 42 })).toBe("");
    expect(defaultWorkspace(null, undefined)).toBe("");
  });
});

describe("NewConversation", () => {
  beforeEach(() => {
    localStorage.clear();
    setHostForTests(createBrowserHost());
  });
  afterEach(() => {
    cleanup();
    setHostForTests(null);
    useBackends.setState({ health: {} });
  });

  it("says a local agent runs as the person and the sandbox isolates it", () => {
    serverSays({ home_dir: "/home/ann" });
    renderForm();
    expect(screen.getByText(/the agent runs as you on this machine/)).toBeTruthy();
    expect(screen.getByText(/Use\s+a Docker sandbox to isolate it/)).toBeTruthy();
  });

  it("starts with the folder used last", () => {
    localStorage.setItem("tandem.lastWorkspace", JSON.stringify("/work/project"));
    serverSays({ home_dir: "/home/ann" });
    expect(renderForm().value).toBe("/work/project");
  });

  it("starts with the server's home folder when no folder was used yet, also when the info arrives later", () => {
    serverSays(undefined);
    const field = renderForm();
    expect(field.value).toBe("");
    serverSays({ home_dir: "/home/ann", demo: true });
    expect(field.value).toBe("/home/ann");
    expect((screen.getByRole("button", { name: "Start" }) as HTMLButtonElement).disabled).toBe(false);
  });

  it("keeps what the person typed when the server's info changes", () => {
    serverSays({ home_dir: "/home/ann" });
    const field = renderForm();
    fireEvent.change(field, { target: { value: "" } });
    expect(field.value).toBe("");
    fireEvent.change(field, { target: { value: "/tmp/x" } });
    serverSays({ home_dir: "/home/bob" });
    expect(field.value).toBe("/tmp/x");
  });

  it("starts a Docker sandbox's conversation in its folder inside, and remembers no host folder from it", async () => {
    localStorage.setItem("tandem.lastWorkspace", JSON.stringify("/work/project"));
    const sandbox: Backend = { id: "sandbox", name: "Docker sandbox", kind: "sandbox", baseUrl: "http://127.0.0.1:2", key: "k", workspaceInside: "/workspace" };
    act(() => useBackends.setState({ health: { sandbox: { status: "ok", demo: false, info: { home_dir: "/home/tandem" } } } }));
    const created = vi.fn();
    expect(renderForm(sandbox, created).value).toBe("/workspace");
    let dir: unknown = null;
    vi.stubGlobal("fetch", async (req: Request) => {
      dir = ((await req.json()) as { workspace?: { working_dir?: string } }).workspace?.working_dir;
      return new Response(JSON.stringify({ id: "c1" }), { status: 201, headers: { "content-type": "application/json" } });
    });
    fireEvent.click(screen.getByRole("button", { name: "Start" }));
    await waitFor(() => expect(created).toHaveBeenCalledWith("c1"));
    expect(dir).toBe("/workspace");
    vi.unstubAllGlobals();
    expect(JSON.parse(localStorage.getItem("tandem.lastWorkspace") ?? "null")).toBe("/work/project");
  });

  describe("browser tools", () => {
    afterEach(() => vi.unstubAllGlobals());

    /** Starts the conversation and returns the tools the request asked for. */
    async function startAndReadTools(): Promise<string[]> {
      let body: { agent?: { tools?: { name: string }[] } } | null = null;
      vi.stubGlobal("fetch", async (req: Request) => {
        body = (await req.json()) as typeof body;
        return new Response(JSON.stringify({ id: "c1" }), { status: 201, headers: { "content-type": "application/json" } });
      });
      fireEvent.click(screen.getByRole("button", { name: "Start" }));
      await waitFor(() => expect(body).not.toBeNull());
      return (body!.agent?.tools ?? []).map((t) => t.name);
    }

    it("are on by default when the server has them", async () => {
      serverSays({ home_dir: "/home/ann", usable_tools: ["terminal", "file_editor", "browser_tool_set"] });
      renderForm();
      expect((screen.getByLabelText(/Browser tools/) as HTMLInputElement).checked).toBe(true);
      expect(await startAndReadTools()).toEqual(["terminal", "file_editor", "task_tracker", "browser_tool_set"]);
    });

    it("include the handoff tool when the server lists it", async () => {
      serverSays({ home_dir: "/home/ann", usable_tools: ["terminal", "browser_tool_set", "browser_request_handoff"] });
      renderForm();
      expect(await startAndReadTools()).toEqual([
        "terminal",
        "file_editor",
        "task_tracker",
        "browser_tool_set",
        "browser_request_handoff",
      ]);
    });

    it("can be left out", async () => {
      serverSays({ home_dir: "/home/ann", usable_tools: ["terminal", "browser_tool_set"] });
      renderForm();
      fireEvent.click(screen.getByLabelText(/Browser tools/));
      expect(await startAndReadTools()).toEqual(["terminal", "file_editor", "task_tracker"]);
    });

    it("are not offered by a server that lists its tools without them", async () => {
      serverSays({ home_dir: "/home/ann", usable_tools: ["terminal", "file_editor"] });
      renderForm();
      expect(screen.queryByLabelText(/Browser tools/)).toBeNull();
      expect(await startAndReadTools()).toEqual(["terminal", "file_editor", "task_tracker"]);
      expect(offersBrowserTools(undefined)).toBe(true);
    });
  });

  describe("MCP servers", () => {
    afterEach(() => {
      vi.unstubAllGlobals();
      act(() => useMcp.setState({ byBackend: {} }));
    });

    async function startAndReadAgent(): Promise<Record<string, unknown>> {
      let body: { agent?: Record<string, unknown> } | null = null;
      vi.stubGlobal("fetch", async (req: Request) => {
        body = (await req.json()) as typeof body;
        return new Response(JSON.stringify({ id: "c1" }), { status: 201, headers: { "content-type": "application/json" } });
      });
      fireEvent.click(screen.getByRole("button", { name: "Start" }));
      await waitFor(() => expect(body).not.toBeNull());
      return body!.agent ?? {};
    }

    it("go into agent.mcp_config in upstream's form, secrets from the keyring included", async () => {
      useMcp.setState({ byBackend: {} });
      const io = parseDraft({ name: "everything", transport: "stdio", command: "node", args: "server.js stdio", env: '{"API_TOKEN": "tok"}', url: "", headers: "" }, []);
      await useMcp.getState().save("local", io.server, io.kept, null);
      const web = parseDraft({ name: "web", transport: "http", command: "", args: "", env: "", url: "http://127.0.0.1:3001/mcp", headers: "" }, ["everything"]);
      await useMcp.getState().save("local", web.server, web.kept, null);
      // Another backend's servers stay there.
      await useMcp.getState().save("r-9", parseDraft({ name: "elsewhere", transport: "stdio", command: "x", args: "", env: "", url: "", headers: "" }, []).server, [], null);
      serverSays({ home_dir: "/home/ann" });
      renderForm();
      expect(screen.getByText("MCP servers (from Settings): everything, web")).toBeTruthy();
      const agent = await startAndReadAgent();
      expect(agent.mcp_config).toEqual({
        mcpServers: {
          everything: { command: "node", args: ["server.js", "stdio"], env: { API_TOKEN: "tok" } },
          web: { url: "http://127.0.0.1:3001/mcp", transport: "http" },
        },
      });
    });

    it("leave mcp_config out when the backend has none", async () => {
      useMcp.setState({ byBackend: {} });
      serverSays({ home_dir: "/home/ann" });
      renderForm();
      expect("mcp_config" in (await startAndReadAgent())).toBe(false);
    });
  });

  describe("sub-agents", () => {
    afterEach(() => vi.unstubAllGlobals());

    async function startAndReadTools(): Promise<string[]> {
      let body: { agent?: { tools?: { name: string }[] } } | null = null;
      vi.stubGlobal("fetch", async (req: Request) => {
        body = (await req.json()) as typeof body;
        return new Response(JSON.stringify({ id: "c1" }), { status: 201, headers: { "content-type": "application/json" } });
      });
      fireEvent.click(screen.getByRole("button", { name: "Start" }));
      await waitFor(() => expect(body).not.toBeNull());
      return (body!.agent?.tools ?? []).map((t) => t.name);
    }

    it("give the agent the task tool set by default when the server has it", async () => {
      serverSays({ home_dir: "/home/ann", usable_tools: ["terminal", "task_tool_set"] });
      renderForm();
      expect((screen.getByLabelText(/Sub-agents/) as HTMLInputElement).checked).toBe(true);
      expect(await startAndReadTools()).toEqual(["terminal", "file_editor", "task_tracker", "task_tool_set"]);
    });

    it("can be left out, and are not offered by a server without them", async () => {
      serverSays({ home_dir: "/home/ann", usable_tools: ["terminal", "task_tool_set"] });
      renderForm();
      fireEvent.click(screen.getByLabelText(/Sub-agents/));
      expect(await startAndReadTools()).toEqual(["terminal", "file_editor", "task_tracker"]);
      cleanup();
      serverSays({ home_dir: "/home/ann", usable_tools: ["terminal"] });
      renderForm();
      expect(screen.queryByLabelText(/Sub-agents/)).toBeNull();
      expect(offersSubAgents(undefined)).toBe(true);
    });
  });

  describe("the default budget", () => {
    afterEach(() => {
      vi.unstubAllGlobals();
      act(() => useSettings.setState({ budget: {} }));
    });

    async function startAndReadBody(): Promise<Record<string, unknown>> {
      let body: Record<string, unknown> | null = null;
      vi.stubGlobal("fetch", async (req: Request) => {
        body = (await req.json()) as Record<string, unknown>;
        return new Response(JSON.stringify({ id: "c1" }), { status: 201, headers: { "content-type": "application/json" } });
      });
      fireEvent.click(screen.getByRole("button", { name: "Start" }));
      await waitFor(() => expect(body).not.toBeNull());
      return body!;
    }

    it("is sent as `budget` to a Tandem server, and said in the form", async () => {
      useSettings.setState({ budget: { max_cost: 0.5, max_tokens: 100000 } });
      serverSays({ home_dir: "/home/ann", capabilities: ["tandem_budget_v1"] });
      renderForm();
      expect(screen.getByText("Budget (from Settings): $0.50 · 100,000 tokens; the run pauses when it is reached.")).toBeTruthy();
      expect((await startAndReadBody()).budget).toEqual({ max_cost: 0.5, max_tokens: 100000 });
    });

    it("is left out without one, and on a server that has no budgets (saying so)", async () => {
      serverSays({ home_dir: "/home/ann", capabilities: ["tandem_budget_v1"] });
      renderForm();
      expect("budget" in (await startAndReadBody())).toBe(false);
      cleanup();
      useSettings.setState({ budget: { max_tokens: 1000 } });
      serverSays({ home_dir: "/home/ann", capabilities: [] });
      renderForm();
      expect(screen.getByText(/This server has no budgets/)).toBeTruthy();
      expect("budget" in (await startAndReadBody())).toBe(false);
    });
  });
});
