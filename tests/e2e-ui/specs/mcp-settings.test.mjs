// @ts-check
// MCP servers in Settings against `tandem serve`: the real `@modelcontextprotocol/server-everything`
// (installed by scripts/setup.sh into ~/.cache/tandem/mcp-servers, started by the server over
// stdio) is added with a token in its environment, tested (its tool names show), its token never
// shown again; a command that does not exist fails its test with a reason; a new conversation
// carries the server in its agent's mcp_config; removing it empties the list.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { shot, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { startConversation } from "../lib/ui.mjs";

const EVERYTHING = join(homedir(), ".cache/tandem/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const TOKEN = "e2e-token-4c0ffee";

describe("MCP servers in Settings", () => {
  const session = stackSession(() => {
    assert.ok(existsSync(EVERYTHING), `${EVERYTHING} is missing: scripts/setup.sh installs the MCP test servers`);
    return { name: "mcp-settings" };
  });

  const section = () => session.page.getByRole("region", { name: "MCP servers" });

  async function openSettings() {
    await session.page.getByRole("button", { name: "Settings", exact: true }).click();
    await visible(section(), "the MCP servers section of Settings");
  }

  it("adds a stdio server, tests it and lists its tools, and keeps its token out of sight", async () => {
    const { page } = session;
    await openSettings();
    const s = section();
    await visible(s.getByText("No MCP servers on this backend."), "an empty list");
    await s.getByLabel("MCP server name").fill("everything");
    await s.getByLabel("Command").fill(process.execPath);
    await s.getByLabel("Arguments").fill(`${EVERYTHING} stdio`);
    await s.getByLabel("Environment").fill(JSON.stringify({ EVERYTHING_TOKEN: TOKEN }));
    await s.getByRole("button", { name: "Add server" }).click();

    const row = await visible(s.getByRole("listitem", { name: "MCP server everything" }), "the server in the list");
    await visible(row.getByText("1 secret in keyring"), "its token counted as a kept secret");
    await row.getByRole("button", { name: "test", exact: true }).click();
    const result = await visible(row.getByRole("status").filter({ hasText: /Connected: \d+ tools/ }), "the test's tool list", 60_000);
    const tools = await result.getByRole("list", { name: "Tools" }).getByRole("listitem").allInnerTexts();
    for (const t of ["echo", "get-sum"]) assert.ok(tools.includes(t), `the server's tools include ${t}: ${tools.join(", ")}`);
    await shot(page, "settings-mcp");

    await row.getByRole("button", { name: "edit" }).click();
    const env = await s.getByLabel("Environment").inputValue();
    assert.deepEqual(JSON.parse(env), { EVERYTHING_TOKEN: "<saved>" });
    assert.doesNotMatch(await page.locator("body").innerText(), new RegExp(TOKEN), "the token is not on the page");
    await s.getByRole("button", { name: "Cancel" }).click();
  });

  it("tests a command that does not exist and says why it failed", async () => {
    const { page } = session;
    const s = section();
    await s.getByLabel("MCP server name").fill("missing");
    await s.getByLabel("Command").fill("/nonexistent/mcp-server");
    await s.getByRole("button", { name: "Test", exact: true }).click();
    const alert = await visible(s.getByRole("alert").filter({ hasText: "Could not connect" }), "the failed test's reason", 60_000);
    const text = await alert.innerText();
    assert.match(text, /connection/, "the error kind shows");
    assert.match(text, /`missing`.*\/nonexistent\/mcp-server/, "the reason names the server and its command");
    await shot(page, "settings-mcp-failed");
    await s.getByLabel("MCP server name").fill("");
    await s.getByLabel("Command").fill("");
    await page.getByRole("button", { name: "Close settings" }).click();
  });

  it("gives a new conversation the server in its agent's mcp_config", async () => {
    const { stack, page } = session;
    await startConversation(page, { folder: stack.workspace, policy: "never" });
    const res = await fetch(`${stack.baseUrl}/api/conversations/search?limit=10`, { headers: { "X-Session-API-Key": stack.key } });
    assert.equal(res.status, 200);
    const page1 = /** @type {{ items: { agent?: { mcp_config?: { mcpServers?: Record<string, { command?: string, args?: string[], env?: Record<string, string> }> } } }[] }} */ (await res.json());
    const server = page1.items[0]?.agent?.mcp_config?.mcpServers?.everything;
    assert.ok(server, `the conversation's agent has the everything server: ${JSON.stringify(page1.items[0]?.agent?.mcp_config)}`);
    assert.equal(server.command, process.execPath);
    assert.deepEqual(server.args, [EVERYTHING, "stdio"]);
  });

  it("removes the server", async () => {
    const { page } = session;
    await openSettings();
    const s = section();
    await s.getByRole("listitem", { name: "MCP server everything" }).getByRole("button", { name: "remove" }).click();
    await visible(s.getByText("No MCP servers on this backend."), "the empty list again");
    await page.getByRole("button", { name: "Close settings" }).click();
  });

  it("raised no page errors", () => {
    assert.deepEqual(session.errors, []);
  });
});
