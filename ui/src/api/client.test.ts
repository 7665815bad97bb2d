import { describe, expect, it } from "vitest";
import { probeBackend } from "../features/backends/backendStore";
import { createApi, type FetchLike } from "./client";
import { ApiError } from "./errors";

type Route = (req: Request) => Response | Promise<Response>;
function fakeFetch(routes: Record<string, Route>): { fetch: FetchLike; seen: Request[] } {
  const seen: Request[] = [];
  return {
    seen,
    fetch: async (req) => {
      seen.push(req);
      const u = new URL(req.url);
      const r = routes[`${req.method} ${u.pathname}`];
      return r ? r(req) : new Response(JSON.stringify({ detail: "Not Found" }), { status: 404 });
    },
  };
}
const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

async function failure(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error("expected a failure");
}

describe("API client", () => {
  it("sends the session key header and unwraps the body", async () => {
    const f = fakeFetch({ "GET /api/conversations/search": () => json({ items: [], next_page_id: null }) });
    const api = createApi({ baseUrl: "http://h:1/", key: "sk" }, f.fetch);
    expect(await api.searchConversations(5)).toEqual({ items: [], next_page_id: null });
    expect(f.seen[0]?.headers.get("X-Session-API-Key")).toBe("sk");
    expect(new URL(f.seen[0]!.url).searchParams.get("limit")).toBe("5");
  });

  it("maps 401 to unauthorized", async () => {
    const f = fakeFetch({ "GET /api/conversations/search": () => json({ detail: "Unauthorized" }, 401) });
    const e = await failure(createApi({ baseUrl: "http://h", key: "bad" }, f.fetch).searchConversations());
    expect(e.kind).toBe("unauthorized");
    expect(e.message).toMatch(/^Unauthorized/);
  });

  it("maps 404 to not found with the server's detail", async () => {
    const f = fakeFetch({});
    const e = await failure(createApi({ baseUrl: "http://h", key: null }, f.fetch).getConversation("x"));
    expect(e.kind).toBe("not_found");
    expect(e.message).toContain("Not Found");
  });

  it("maps 409 and 422 bodies", async () => {
    const f = fakeFetch({
      "POST /api/conversations/c/run": () => json({ detail: "Conversation already running." }, 409),
      "PATCH /api/conversations/c": () => json({ detail: [{ loc: ["body", "title"], msg: "too long" }] }, 422),
    });
    const api = createApi({ baseUrl: "http://h", key: null }, f.fetch);
    expect((await failure(api.run("c"))).kind).toBe("conflict");
    const e = await failure(api.renameConversation("c", "x"));
    expect([e.kind, e.detail]).toEqual(["invalid", "body.title: too long"]);
  });

  it("maps a network failure to a clear message", async () => {
    const api = createApi({ baseUrl: "http://127.0.0.1:9", key: null }, async () => {
      throw new TypeError("Failed to fetch");
    });
    const e = await failure(api.searchConversations());
    expect(e.kind).toBe("network");
    expect(e.message).toMatch(/Cannot reach http:\/\/127\.0\.0\.1:9/);
  });

  it("posts respond_to_confirmation with the reason and workspace writes with the mtime", async () => {
    const bodies: unknown[] = [];
    const f = fakeFetch({
      "POST /api/conversations/c/events/respond_to_confirmation": async (r) => (bodies.push(await r.json()), json({ success: true })),
      "PUT /api/conversations/c/workspace/file": async (r) => (bodies.push(await r.json()), json({ detail: "changed on disk" }, 409)),
    });
    const api = createApi({ baseUrl: "http://h", key: null }, f.fetch);
    await api.respondToConfirmation("c", false, "too risky");
    expect((await failure(api.writeFile("c", "a.txt", "x", 42))).kind).toBe("conflict");
    expect(bodies).toEqual([{ accept: false, reason: "too risky" }, { path: "a.txt", content: "x", expected_mtime_ms: 42 }]);
  });
});

describe("backend probe", () => {
  it("says down, not an agent server, unauthorized, or ok", async () => {
    const down = createApi({ baseUrl: "http://h", key: null }, async () => {
      throw new TypeError("refused");
    });
    expect((await probeBackend(down)).status).toBe("down");

    const web = createApi({ baseUrl: "http://h", key: null }, fakeFetch({}).fetch);
    expect((await probeBackend(web)).status).toBe("not_agent_server");

    const html = createApi({ baseUrl: "http://h", key: null }, fakeFetch({ "GET /server_info": () => new Response("<html>", { status: 200 }) }).fetch);
    expect((await probeBackend(html)).status).toBe("not_agent_server");

    const locked = fakeFetch({
      "GET /server_info": () => json({ title: "OpenHands Agent Server" }),
      "GET /api/conversations/search": () => json({ detail: "Unauthorized" }, 401),
    });
    const probe = await probeBackend(createApi({ baseUrl: "http://h", key: "wrong" }, locked.fetch));
    expect([probe.status, probe.message]).toEqual(["unauthorized", "Unauthorized: the session key was refused"]);

    const ok = fakeFetch({
      "GET /server_info": () => json({ title: "Tandem", llm_model: "openai/tandem-demo" }),
      "GET /api/conversations/search": () => json({ items: [], next_page_id: null }),
    });
    const good = await probeBackend(createApi({ baseUrl: "http://h", key: "k" }, ok.fetch));
    expect([good.status, good.demo]).toEqual(["ok", true]);
  });
});
