import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setHostForTests } from "../../host";
import { createBrowserHost } from "../../host/browser";
import { parseDraft, emptyDraft, type McpDraft } from "./mcpServers";
import { mcpConfigFor, useMcp, withMcpConfig } from "./mcpStore";

const draft = (over: Partial<McpDraft>) => parseDraft({ ...emptyDraft, name: "gh", command: "gh-mcp", ...over }, []);

describe("the MCP store", () => {
  beforeEach(() => {
    localStorage.clear();
    setHostForTests(createBrowserHost());
    useMcp.setState({ byBackend: {} });
  });
  afterEach(() => setHostForTests(null));

  it("keeps each backend's servers apart, in preferences without their secrets", async () => {
    const { server, kept } = draft({ env: '{"GITHUB_TOKEN": "ghp_secret", "DEBUG": "1"}' });
    await useMcp.getState().save("local", server, kept, null);
    await useMcp.getState().save("r-1", draft({ name: "other" }).server, [], null);

    const prefs = localStorage.getItem("tandem.mcpServers.local") ?? "";
    expect(prefs).not.toContain("ghp_secret");
    expect(JSON.parse(prefs)).toMatchObject([{ name: "gh", env: { DEBUG: "1" }, secretNames: ["env:GITHUB_TOKEN"] }]);
    expect(JSON.parse(localStorage.getItem("tandem.secret.mcp:local:gh") ?? "{}")).toEqual({ env: { GITHUB_TOKEN: "ghp_secret" }, headers: {} });

    // A fresh store (a reload) reads the lists back per backend.
    useMcp.setState({ byBackend: {} });
    expect(useMcp.getState().list("local").map((s) => s.name)).toEqual(["gh"]);
    expect(useMcp.getState().list("r-1").map((s) => s.name)).toEqual(["other"]);
    expect(useMcp.getState().list("sandbox")).toEqual([]);
  });

  it("puts the secrets back for mcp_config, and none when the backend has no servers", async () => {
    const { server, kept } = draft({ env: '{"GITHUB_TOKEN": "ghp_secret", "DEBUG": "1"}' });
    await useMcp.getState().save("local", server, kept, null);
    expect(await mcpConfigFor("local")).toEqual({ mcpServers: { gh: { command: "gh-mcp", args: [], env: { DEBUG: "1", GITHUB_TOKEN: "ghp_secret" } } } });
    expect(await mcpConfigFor("r-2")).toBeNull();
    const agent = { kind: "Agent", tools: [] };
    expect(await withMcpConfig(agent, "r-2")).toBe(agent);
    expect(await withMcpConfig(agent, "local")).toMatchObject({ kind: "Agent", mcp_config: { mcpServers: { gh: {} } } });
  });

  it("keeps a saved secret across an edit that renames the server, and forgets it on removal", async () => {
    const first = draft({ env: '{"GITHUB_TOKEN": "ghp_secret"}' });
    await useMcp.getState().save("local", first.server, first.kept, null);
    const edit = draft({ name: "github", env: '{"GITHUB_TOKEN": "<saved>"}' });
    await useMcp.getState().save("local", edit.server, edit.kept, "gh");
    expect(useMcp.getState().list("local").map((s) => s.name)).toEqual(["github"]);
    expect(localStorage.getItem("tandem.secret.mcp:local:gh")).toBeNull();
    expect((await mcpConfigFor("local"))?.mcpServers.github).toMatchObject({ env: { GITHUB_TOKEN: "ghp_secret" } });

    await useMcp.getState().remove("local", "github");
    expect(useMcp.getState().list("local")).toEqual([]);
    expect(localStorage.getItem("tandem.secret.mcp:local:github")).toBeNull();
    expect(JSON.parse(localStorage.getItem("tandem.mcpServers.local") ?? "null")).toEqual([]);
  });
});
