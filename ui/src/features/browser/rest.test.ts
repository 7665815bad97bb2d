import { describe, expect, it } from "vitest";
import { ApiError } from "../../api/errors";
import { createBrowserApi } from "./rest";

function recorder(answer: (req: Request) => Response) {
  const seen: { method: string; url: string; key: string | null; body: string }[] = [];
  const fetchImpl = async (req: Request) => {
    seen.push({ method: req.method, url: req.url, key: req.headers.get("X-Session-API-Key"), body: await req.text() });
    return answer(req);
  };
  return { seen, fetchImpl };
}

describe("createBrowserApi", () => {
  it("calls the REST mirror with the session key", async () => {
    const state = { driver: "person", url: "http://x/", title: "X", tabs: [], handoff: null, running: true, loading: true };
    const r = recorder((req) => new Response(req.method === "GET" ? JSON.stringify(state) : "{}", { status: 200 }));
    const api = createBrowserApi({ baseUrl: "http://127.0.0.1:8000/", key: "sk-1" }, r.fetchImpl);
    await api.takeControl("c1");
    await api.handBack("c1", "done");
    expect(await api.state("c1")).toEqual(state);
    expect(r.seen).toEqual([
      { method: "POST", url: "http://127.0.0.1:8000/api/conversations/c1/browser/take_control", key: "sk-1", body: "" },
      { method: "POST", url: "http://127.0.0.1:8000/api/conversations/c1/browser/hand_back", key: "sk-1", body: '{"note":"done"}' },
      { method: "GET", url: "http://127.0.0.1:8000/api/conversations/c1/browser/state", key: "sk-1", body: "" },
    ]);
  });

  it("turns refusals into ApiErrors with the server's detail", async () => {
    const r = recorder(() => new Response(JSON.stringify({ detail: "the conversation has no browser tools" }), { status: 409 }));
    const api = createBrowserApi({ baseUrl: "http://127.0.0.1:8000", key: null }, r.fetchImpl);
    const err = await api.takeControl("c1").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toContain("the conversation has no browser tools");
    expect(r.seen[0]?.key).toBeNull();
  });
});
