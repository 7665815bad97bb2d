import { describe, expect, it } from "vitest";
import {
  draftOf,
  emptyDraft,
  joinArgs,
  KEEP_SECRET,
  looksSecret,
  mcpConfig,
  parseDraft,
  splitArgs,
  splitSecrets,
  testSpec,
  type McpDraft,
} from "./mcpServers";

const stdio = (over: Partial<McpDraft> = {}): McpDraft => ({ ...emptyDraft, name: "everything", command: "npx", args: "-y @modelcontextprotocol/server-everything", ...over });
const remote = (over: Partial<McpDraft> = {}): McpDraft => ({ ...emptyDraft, name: "web", transport: "http", url: "http://127.0.0.1:3001/mcp", ...over });

describe("parseDraft names what is wrong", () => {
  it("an empty name, command or URL", () => {
    expect(() => parseDraft(stdio({ name: "  " }), [])).toThrow(/^Name: enter a name/);
    expect(() => parseDraft(stdio({ command: " " }), [])).toThrow(/^Command: enter the program/);
    expect(() => parseDraft(remote({ url: "" }), [])).toThrow(/^URL: enter the server's address/);
  });

  it("a URL that is not one, or not http(s)", () => {
    expect(() => parseDraft(remote({ url: "127.0.0.1:3001" }), [])).toThrow(/^URL: (127.0.0.1:3001 is not a valid URL|must start with http)/);
    expect(() => parseDraft(remote({ url: "not a url" }), [])).toThrow("URL: not a url is not a valid URL");
    expect(() => parseDraft(remote({ url: "ftp://host/x" }), [])).toThrow("URL: must start with http:// or https://");
  });

  it("bad JSON in the environment or headers", () => {
    expect(() => parseDraft(stdio({ env: '{"A": 1' }), [])).toThrow(/^Environment: not valid JSON/);
    expect(() => parseDraft(remote({ headers: "Authorization: Bearer x" }), [])).toThrow(/^Headers: not valid JSON/);
    expect(() => parseDraft(stdio({ env: '["A"]' }), [])).toThrow("Environment: must be a JSON object");
    expect(() => parseDraft(remote({ headers: '{"X-Count": 3}' }), [])).toThrow("Headers: the value of X-Count must be a string");
  });

  it("a name another server of the backend has", () => {
    expect(() => parseDraft(stdio(), ["everything"])).toThrow("Name: a server named everything already exists on this backend");
  });

  it("an unclosed quote in the arguments", () => {
    expect(() => parseDraft(stdio({ args: "--root '/tmp/x" }), [])).toThrow("Arguments: the single quote is not closed");
  });
});

describe("parseDraft parses", () => {
  it("a stdio server with arguments and environment", () => {
    const { server, kept } = parseDraft(stdio({ args: `-y pkg --dir "/tmp/my dir" ''`, env: '{"DEBUG": "1"}' }), []);
    expect(server).toMatchObject({ name: "everything", transport: "stdio", command: "npx", args: ["-y", "pkg", "--dir", "/tmp/my dir", ""], env: { DEBUG: "1" } });
    expect(kept).toEqual([]);
  });

  it("a remote server; empty JSON fields are empty maps", () => {
    const { server } = parseDraft(remote({ transport: "sse" }), []);
    expect(server).toMatchObject({ transport: "sse", url: "http://127.0.0.1:3001/mcp", headers: {}, env: {}, args: [] });
  });

  it("arguments round-trip through joinArgs", () => {
    const args = ["-y", "a b", "it's", "", 'q"x'];
    expect(splitArgs(joinArgs(args))).toEqual(args);
  });
});

describe("secrets", () => {
  it("are recognised by name or by value", () => {
    expect(looksSecret("GITHUB_TOKEN", "x")).toBe(true);
    expect(looksSecret("Authorization", "x")).toBe(true);
    expect(looksSecret("X-Thing", "Bearer abc")).toBe(true);
    expect(looksSecret("OTHER", "sk1234567890abcdefghijklmnop")).toBe(true);
    expect(looksSecret("ROOT", "/home/ann/projects/some-long-folder-name1")).toBe(false);
    expect(looksSecret("DEBUG", "1")).toBe(false);
  });

  it("are split off, shown as the keep marker when editing, and kept when left as is", () => {
    const { server, kept } = parseDraft(stdio({ env: '{"API_TOKEN": "t0ps3cret", "DEBUG": "1"}' }), []);
    const first = splitSecrets(server, kept, null);
    expect(first.server.env).toEqual({ DEBUG: "1" });
    expect(first.server.secretNames).toEqual(["env:API_TOKEN"]);
    expect(first.secrets.env).toEqual({ API_TOKEN: "t0ps3cret" });

    const draft = draftOf(first.server);
    expect(draft.env).not.toContain("t0ps3cret");
    expect(JSON.parse(draft.env)).toEqual({ DEBUG: "1", API_TOKEN: KEEP_SECRET });

    const again = parseDraft(draft, []);
    expect(again.kept).toEqual(["env:API_TOKEN"]);
    expect(splitSecrets(again.server, again.kept, first.secrets).secrets.env).toEqual({ API_TOKEN: "t0ps3cret" });
    expect(() => splitSecrets(again.server, again.kept, null)).toThrow("Environment: API_TOKEN has no saved value to keep; enter it again");
  });
});

describe("wire forms", () => {
  const s = splitSecrets(parseDraft(remote({ headers: '{"Authorization": "Bearer abc", "X-Team": "core"}' }), []).server, [], null);
  const io = splitSecrets(parseDraft(stdio({ env: '{"API_KEY": "k"}' }), []).server, [], null);

  it("the test body's server is upstream's typed spec, secrets included", () => {
    expect(testSpec(s.server, s.secrets)).toEqual({ type: "http", url: "http://127.0.0.1:3001/mcp", headers: { "X-Team": "core", Authorization: "Bearer abc" } });
    expect(testSpec(io.server, io.secrets)).toEqual({ type: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"], env: { API_KEY: "k" } });
  });

  it("mcp_config is upstream's mcpServers map", () => {
    expect(mcpConfig([])).toBeNull();
    expect(mcpConfig([[io.server, io.secrets], [s.server, s.secrets]])).toEqual({
      mcpServers: {
        everything: { command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"], env: { API_KEY: "k" } },
        web: { url: "http://127.0.0.1:3001/mcp", transport: "http", headers: { "X-Team": "core", Authorization: "Bearer abc" } },
      },
    });
  });
});
