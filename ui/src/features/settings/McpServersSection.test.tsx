import { act, cleanup, fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { setHostForTests } from "../../host";
import { createBrowserHost } from "../../host/browser";
import { useBackends, type Backend } from "../backends/backendStore";
import { McpServersSection, McpTestResultView } from "./McpServersSection";
import { readTestAnswer } from "./mcpApi";
import { useMcp } from "./mcpStore";

const local: Backend = { id: "local", name: "Local", kind: "local", baseUrl: "http://127.0.0.1:1", key: "k" };
const remote: Backend = { id: "r-1", name: "Build box", kind: "remote", baseUrl: "http://10.0.0.5:8000", key: "rk" };

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

function fill(label: string, value: string) {
  fireEvent.change(screen.getByLabelText(label), { target: { value } });
}

describe("McpTestResultView", () => {
  afterEach(cleanup);

  it("lists the tool names of a server that answered", () => {
    render(<McpTestResultView state={{ status: "done", result: readTestAnswer({ ok: true, tools: ["echo", "add"] }) }} />);
    expect(screen.getByRole("status").textContent).toContain("Connected: 2 tools");
    expect(within(screen.getByRole("list", { name: "Tools" })).getAllByRole("listitem").map((li) => li.textContent)).toEqual(["echo", "add"]);
  });

  it("shows the kind of failure and the server's message", () => {
    render(<McpTestResultView state={{ status: "done", result: readTestAnswer({ ok: false, error: "spawn nope ENOENT", error_kind: "connection" }) }} />);
    const alert = screen.getByRole("alert");
    expect(alert.textContent).toContain("Could not connect");
    expect(alert.textContent).toContain("connection");
    expect(alert.textContent).toContain("spawn nope ENOENT");
    cleanup();
    render(<McpTestResultView state={{ status: "done", result: readTestAnswer({ ok: false, error: "no answer in 30 s", error_kind: "timeout" }) }} />);
    expect(screen.getByRole("alert").textContent).toContain("Timed out");
  });

  it("reads odd answers without throwing", () => {
    expect(readTestAnswer("x")).toEqual({ ok: false, error: "The server's answer was not JSON", errorKind: "unknown" });
    expect(readTestAnswer({ ok: false, error_kind: "weird" })).toEqual({ ok: false, error: "The test failed without a message", errorKind: "unknown" });
    expect(readTestAnswer({ ok: true, tools: ["a", 3] })).toEqual({ ok: true, tools: ["a"] });
  });
});

describe("McpServersSection", () => {
  beforeEach(() => {
    localStorage.clear();
    setHostForTests(createBrowserHost());
    useMcp.setState({ byBackend: {} });
    useBackends.setState({ backends: [local, remote], activeId: "local" });
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
    setHostForTests(null);
    useBackends.setState({ backends: [], activeId: null });
  });

  it("names an empty command and bad environment JSON, and saves nothing then", async () => {
    render(<McpServersSection />);
    fill("MCP server name", "everything");
    fireEvent.click(screen.getByRole("button", { name: "Add server" }));
    expect((await screen.findByRole("alert")).textContent).toMatch(/^Command: enter the program/);
    fill("Command", "npx");
    fill("Environment", "{DEBUG: 1}");
    fireEvent.click(screen.getByRole("button", { name: "Add server" }));
    await waitFor(() => expect(screen.getByRole("alert").textContent).toMatch(/^Environment: not valid JSON/));
    expect(useMcp.getState().list("local")).toEqual([]);
  });

  it("adds a server, tests it on the active backend and shows its tools, never shows its token again, removes it", async () => {
    const requests: { url: string; key: string | null; body: unknown }[] = [];
    vi.stubGlobal("fetch", async (req: Request) => {
      requests.push({ url: req.url, key: req.headers.get("X-Session-API-Key"), body: await req.json() });
      return json({ ok: true, tools: ["echo", "get-sum"] });
    });
    render(<McpServersSection />);
    expect(screen.getByRole("heading").textContent).toContain("on the local engine");
    fill("MCP server name", "everything");
    fill("Command", "npx");
    fill("Arguments", "-y @modelcontextprotocol/server-everything");
    fill("Environment", '{"API_TOKEN": "tok-123", "DEBUG": "1"}');
    fireEvent.click(screen.getByRole("button", { name: "Add server" }));
    const row = await screen.findByRole("listitem", { name: "MCP server everything" });
    expect(row.textContent).toContain("npx -y @modelcontextprotocol/server-everything");
    expect(row.textContent).toContain("1 secret in keyring");

    fireEvent.click(within(row).getByRole("button", { name: "test" }));
    await waitFor(() => expect(within(row).getByRole("status").textContent).toContain("Connected: 2 tools"));
    expect(within(row).getByText("get-sum")).toBeTruthy();
    expect(requests).toEqual([
      {
        url: "http://127.0.0.1:1/api/mcp/test",
        key: "k",
        body: { name: "everything", server: { type: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"], env: { DEBUG: "1", API_TOKEN: "tok-123" } }, timeout: 30 },
      },
    ]);

    fireEvent.click(within(row).getByRole("button", { name: "edit" }));
    const env = screen.getByLabelText("Environment") as HTMLTextAreaElement;
    expect(env.value).not.toContain("tok-123");
    expect(JSON.parse(env.value)).toEqual({ DEBUG: "1", API_TOKEN: "<saved>" });
    expect(screen.queryByText(/tok-123/)).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));

    fireEvent.click(within(row).getByRole("button", { name: "remove" }));
    await waitFor(() => expect(screen.queryByRole("listitem", { name: "MCP server everything" })).toBeNull());
    expect(localStorage.getItem("tandem.secret.mcp:local:everything")).toBeNull();
  });

  it("tests the form's remote server before saving and shows a failure's kind", async () => {
    vi.stubGlobal("fetch", async () => json({ ok: false, error: "connection refused", error_kind: "connection" }));
    render(<McpServersSection />);
    fill("MCP server name", "web");
    fireEvent.change(screen.getByLabelText("Transport"), { target: { value: "sse" } });
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    expect((await screen.findByRole("alert")).textContent).toMatch(/^URL: enter the server's address/);
    fill("URL", "http://127.0.0.1:9/sse");
    fill("Headers", "not json");
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    await waitFor(() => expect(screen.getByRole("alert").textContent).toMatch(/^Headers: not valid JSON/));
    fill("Headers", '{"X-Team": "core"}');
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    await waitFor(() => expect(screen.getByRole("alert").textContent).toContain("Could not connect"));
    expect(useMcp.getState().list("local")).toEqual([]);
  });

  it("shows the servers of the backend in use", async () => {
    const { server } = (await import("./mcpServers")).parseDraft({ name: "remote-only", transport: "http", command: "", args: "", env: "", url: "http://x:1/mcp", headers: "" }, []);
    await useMcp.getState().save("r-1", server, [], null);
    render(<McpServersSection />);
    expect(screen.getByText("No MCP servers on this backend.")).toBeTruthy();
    act(() => useBackends.setState({ activeId: "r-1" }));
    expect(screen.getByRole("heading").textContent).toContain("on Build box");
    expect(screen.getByRole("listitem", { name: "MCP server remote-only" })).toBeTruthy();
  });

  it("says when the backend has no such route", async () => {
    vi.stubGlobal("fetch", async () => json({ detail: "Not Found" }, 404));
    render(<McpServersSection />);
    fill("MCP server name", "x");
    fill("Command", "x");
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    await waitFor(() => expect(screen.getByRole("alert").textContent).toContain("This backend has no MCP test route"));
  });
});
