// MCP servers as the Settings pane edits them, and the wire forms they turn into: the agent's
// `mcp_config` (upstream's `{"mcpServers": {name: …}}`) and the body of `POST /api/mcp/test`.
// Values that look like secrets (tokens in env or headers) are split off before saving: the
// store keeps them in the host keyring, never in preferences, and the form never shows them again.

export type McpTransport = "stdio" | "http" | "sse";

/** One saved MCP server. Secret values are absent here; `secretNames` lists which ones exist. */
export interface McpServer {
  name: string;
  transport: McpTransport;
  /** stdio */
  command: string;
  args: string[];
  env: Record<string, string>;
  /** http / sse */
  url: string;
  headers: Record<string, string>;
  /** `env:NAME` / `headers:NAME` entries whose values are kept in the keyring. */
  secretNames: string[];
}

/** The secret values of one server, as the keyring holds them (JSON). */
export interface McpSecrets {
  env: Record<string, string>;
  headers: Record<string, string>;
}

/** What the form holds: text fields, parsed by `parseDraft`. */
export interface McpDraft {
  name: string;
  transport: McpTransport;
  command: string;
  args: string;
  env: string;
  url: string;
  headers: string;
}

/** Shown in place of a saved secret when editing; left as is, the saved value is kept. */
export const KEEP_SECRET = "<saved>";

export const emptyDraft: McpDraft = { name: "", transport: "stdio", command: "", args: "", env: "", url: "", headers: "" };

const SECRET_NAME = /(key|token|secret|passw|pwd|auth|credential|cookie|session|bearer|private)/i;
const SECRET_VALUE = /^(bearer|basic|token)\s+\S+/i;
// Long single words of letters and digits (API keys, JWTs); paths and URLs are not.
const TOKEN_LIKE = /^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_\-.=+]{24,}$/;

/** Whether an env variable or header value should go to the keyring rather than preferences. */
export function looksSecret(name: string, value: string): boolean {
  return SECRET_NAME.test(name) || SECRET_VALUE.test(value) || TOKEN_LIKE.test(value);
}

/** Splits a command line into words: whitespace separates, '…' and "…" group, \ escapes. */
export function splitArgs(line: string): string[] {
  const out: string[] = [];
  let cur = "";
  let quote: string | null = null;
  let has = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] ?? "";
    if (quote) {
      if (c === quote) quote = null;
      else if (c === "\\" && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      has = true;
    } else if (c === "\\" && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) out.push(cur);
      cur = "";
      has = false;
    } else {
      cur += c;
    }
  }
  if (quote) throw new Error(`Arguments: the ${quote === '"' ? "double" : "single"} quote is not closed`);
  if (has || cur) out.push(cur);
  return out;
}

/** The inverse of `splitArgs`, for editing a saved server. */
export function joinArgs(args: string[]): string {
  return args.map((a) => (a === "" || /[\s'"\\]/.test(a) ? `'${a.replace(/'/g, `'"'"'`)}'` : a)).join(" ");
}

function parseMap(label: string, text: string): Record<string, string> {
  if (!text.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    throw new Error(`${label}: not valid JSON (${e instanceof Error ? e.message : String(e)}); write an object like {"NAME": "value"}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error(`${label}: must be a JSON object like {"NAME": "value"}`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (typeof v !== "string") throw new Error(`${label}: the value of ${k} must be a string`);
    out[k] = v;
  }
  return out;
}

/**
 * Checks and parses the form. Throws an Error whose message names the field that is wrong.
 * `existing` are the other servers' names (a name is unique per backend).
 */
export function parseDraft(d: McpDraft, existing: string[]): { server: Omit<McpServer, "secretNames">; kept: string[] } {
  const name = d.name.trim();
  if (!name) throw new Error("Name: enter a name for the server");
  if (name.length > 128) throw new Error("Name: at most 128 characters");
  if (existing.includes(name)) throw new Error(`Name: a server named ${name} already exists on this backend`);
  const base = { name, transport: d.transport, command: "", args: [] as string[], env: {}, url: "", headers: {} };
  const kept: string[] = [];
  const note = (kind: "env" | "headers", map: Record<string, string>) => {
    for (const [k, v] of Object.entries(map)) if (v === KEEP_SECRET) kept.push(`${kind}:${k}`);
  };
  if (d.transport === "stdio") {
    const command = d.command.trim();
    if (!command) throw new Error("Command: enter the program that starts the server (e.g. npx)");
    const env = parseMap("Environment", d.env);
    note("env", env);
    return { server: { ...base, command, args: splitArgs(d.args), env }, kept };
  }
  const url = d.url.trim();
  if (!url) throw new Error("URL: enter the server's address (e.g. http://127.0.0.1:3001/mcp)");
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error(`URL: ${url} is not a valid URL`);
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("URL: must start with http:// or https://");
  const headers = parseMap("Headers", d.headers);
  note("headers", headers);
  return { server: { ...base, url, headers }, kept };
}

/** Moves secret-looking values out of a parsed server; `kept` names values to keep from `old`. */
export function splitSecrets(server: Omit<McpServer, "secretNames">, kept: string[], old: McpSecrets | null): { server: McpServer; secrets: McpSecrets } {
  const secrets: McpSecrets = { env: {}, headers: {} };
  const secretNames: string[] = [];
  const split = (kind: "env" | "headers") => {
    const plain: Record<string, string> = {};
    for (const [k, v] of Object.entries(server[kind])) {
      if (kept.includes(`${kind}:${k}`)) {
        const was = old?.[kind][k];
        if (was === undefined) throw new Error(`${kind === "env" ? "Environment" : "Headers"}: ${k} has no saved value to keep; enter it again`);
        secrets[kind][k] = was;
        secretNames.push(`${kind}:${k}`);
      } else if (looksSecret(k, v)) {
        secrets[kind][k] = v;
        secretNames.push(`${kind}:${k}`);
      } else {
        plain[k] = v;
      }
    }
    return plain;
  };
  const env = split("env");
  const headers = split("headers");
  return { server: { ...server, env, headers, secretNames }, secrets };
}

/** The form for editing a saved server: secrets appear as `KEEP_SECRET`. */
export function draftOf(s: McpServer): McpDraft {
  const withKept = (kind: "env" | "headers") => {
    const m: Record<string, string> = { ...s[kind] };
    for (const n of s.secretNames) if (n.startsWith(`${kind}:`)) m[n.slice(kind.length + 1)] = KEEP_SECRET;
    return Object.keys(m).length ? JSON.stringify(m, null, 1) : "";
  };
  return {
    name: s.name,
    transport: s.transport,
    command: s.command,
    args: joinArgs(s.args),
    env: withKept("env"),
    url: s.url,
    headers: withKept("headers"),
  };
}

/** A server's entry in `mcp_config.mcpServers`, with its secrets put back. */
export function configEntry(s: McpServer, secrets: McpSecrets | null): Record<string, unknown> {
  if (s.transport === "stdio") {
    const env = { ...s.env, ...(secrets?.env ?? {}) };
    return { command: s.command, args: s.args, ...(Object.keys(env).length ? { env } : {}) };
  }
  const headers = { ...s.headers, ...(secrets?.headers ?? {}) };
  return { url: s.url, transport: s.transport, ...(Object.keys(headers).length ? { headers } : {}) };
}

/** The `server` of a `POST /api/mcp/test` body (upstream's `_StdioMCPServerSpec` / `_RemoteMCPServerSpec`). */
export function testSpec(s: McpServer, secrets: McpSecrets | null): Record<string, unknown> {
  const e = configEntry(s, secrets);
  if (s.transport === "stdio") return { type: "stdio", ...e };
  const { transport: _t, ...rest } = e;
  return { type: s.transport, ...rest };
}

/** `{"mcpServers": {...}}` for the agent, or null when the backend has no servers. */
export function mcpConfig(entries: [McpServer, McpSecrets | null][]): { mcpServers: Record<string, Record<string, unknown>> } | null {
  if (entries.length === 0) return null;
  const mcpServers: Record<string, Record<string, unknown>> = {};
  for (const [s, sec] of entries) mcpServers[s.name] = configEntry(s, sec);
  return { mcpServers };
}

/** One line describing a saved server for its list row. */
export function serverSummary(s: McpServer): string {
  if (s.transport === "stdio") return [s.command, ...s.args].map((a) => (/\s/.test(a) ? JSON.stringify(a) : a)).join(" ");
  return `${s.transport === "sse" ? "SSE" : "HTTP"} ${s.url}`;
}
