// The REST mirror of the browser socket: take control and hand back without a socket (the
// handoff notice outside the pane uses it), and the state. Same key header and error mapping
// as the app's REST client.
import { trimBase, type Connection, type FetchLike } from "../../api/client";
import { ApiError, errorFromStatus, networkError } from "../../api/errors";
import { readState, type BrowserState, type HandBackRequest } from "./wire";

export function createBrowserApi(conn: Connection, fetchImpl?: FetchLike) {
  const baseUrl = trimBase(conn.baseUrl);
  const doFetch: FetchLike = fetchImpl ?? ((r) => globalThis.fetch(r));
  const enc = encodeURIComponent;

  async function call(what: string, method: string, path: string, body?: unknown): Promise<unknown> {
    const headers: Record<string, string> = conn.key ? { "X-Session-API-Key": conn.key } : {};
    const init: RequestInit = { method, headers };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      headers["Content-Type"] = "application/json";
    }
    let res: Response;
    try {
      res = await doFetch(new Request(`${baseUrl}${path}`, init));
    } catch (e) {
      throw networkError(baseUrl, e);
    }
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: keep the text for the error message.
    }
    if (!res.ok) throw errorFromStatus(res.status, parsed, what);
    return parsed;
  }

  const base = (id: string) => `/api/conversations/${enc(id)}/browser`;

  return {
    takeControl(id: string): Promise<unknown> {
      return call("take control of the browser", "POST", `${base(id)}/take_control`);
    },
    handBack(id: string, note: string): Promise<unknown> {
      const body: HandBackRequest = { note };
      return call("hand the browser back", "POST", `${base(id)}/hand_back`, body);
    },
    async state(id: string): Promise<BrowserState> {
      const body = await call("browser state", "GET", `${base(id)}/state`);
      const s = readState(body);
      if (!s) throw new ApiError("not_agent_server", "The server's browser state is malformed");
      return s;
    },
  };
}

export type BrowserApi = ReturnType<typeof createBrowserApi>;
