// `POST /api/mcp/test` on a backend: upstream's route, which our server has too, typed from our
// server's generated OpenAPI (tandem.gen.ts). The route answers 200 for both outcomes (`ok` true
// or false); other statuses are errors of the request itself (wrong key, 422 naming a malformed
// field, no such route on an old server).
import createClient from "openapi-fetch";
import { errorFromStatus, networkError } from "../../api/errors";
import type { components, paths } from "../../api/tandem.gen";
import type { Backend } from "../backends/backendStore";

export type McpTestRequest = components["schemas"]["MCPTestRequest"];
export type McpTestResponse = components["schemas"]["McpTestResponse"];
export type McpErrorKind = "timeout" | "connection" | "unknown";

/** What a test found: the server's tool names, or why it failed. */
export type McpTestResult = { ok: true; tools: string[] } | { ok: false; error: string; errorKind: McpErrorKind };

/** Seconds the server waits for the MCP server to start and list its tools (upstream's bound is 120). */
export const MCP_TEST_TIMEOUT_S = 30;

/**
 * Reads the route's answer defensively (another server may answer loosely): an unknown
 * `error_kind` reads as `unknown`, non-string tool names are dropped.
 */
export function readTestAnswer(body: McpTestResponse | unknown): McpTestResult {
  if (typeof body !== "object" || body === null) return { ok: false, error: "The server's answer was not JSON", errorKind: "unknown" };
  const b = body as { ok?: unknown; tools?: unknown; error?: unknown; error_kind?: unknown };
  if (b.ok === true) {
    const tools = Array.isArray(b.tools) ? b.tools.filter((t): t is string => typeof t === "string") : [];
    return { ok: true, tools };
  }
  const kind = b.error_kind === "timeout" || b.error_kind === "connection" ? b.error_kind : "unknown";
  return { ok: false, error: typeof b.error === "string" && b.error ? b.error : "The test failed without a message", errorKind: kind };
}

/** Asks `backend` to start the server described by `server` and list its tools. */
export async function testMcpServer(backend: Backend, name: string, server: Record<string, unknown>): Promise<McpTestResult> {
  const baseUrl = backend.baseUrl;
  // A sandbox that is not running has no address yet; a relative URL would reach another server.
  if (!baseUrl) throw new Error(`${backend.name} is not connected: start it first`);
  const client = createClient<paths>({
    baseUrl,
    headers: backend.key ? { "X-Session-API-Key": backend.key } : {},
    fetch: async (req: Request) => {
      try {
        return await globalThis.fetch(req);
      } catch (e) {
        throw networkError(baseUrl, e);
      }
    },
  });
  // Boundary: the schema leaves `server` open (one mcpServers entry); testSpec builds it.
  const body = { name, server, timeout: MCP_TEST_TIMEOUT_S } as unknown as McpTestRequest;
  const { data, error, response } = await client.POST("/api/mcp/test", { body });
  if (!response.ok) throw errorFromStatus(response.status, error, "test the MCP server");
  return readTestAnswer(data);
}
