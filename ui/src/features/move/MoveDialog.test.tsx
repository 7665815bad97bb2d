import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { createApi, type FetchLike } from "../../api/client";
import { ApiError } from "../../api/errors";
import type { ImportedConversation } from "../../api/tandemTypes";
import type { Backend } from "../backends/backendStore";
import { MoveDialog } from "./MoveDialog";
import { moveConversation } from "./move";

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** Two servers' move routes: the source exports and is fenced (or refuses with `keep`), the target imports (or refuses with `refuse`) and takes the arrival. */
function servers(o: { refuse?: string; keep?: string; base?: string } = {}) {
  const calls: string[] = [];
  let importOptions: unknown = null;
  let fence: unknown = null;
  let exportBody: unknown = null;
  const source: FetchLike = async (req) => {
    const path = new URL(req.url).pathname;
    calls.push(`source ${req.method} ${path}`);
    if (path === "/api/conversations/c1/export") {
      exportBody = await req.json();
      return new Response("capsule-bytes", { status: 200 });
    }
    if (path === "/api/conversations/c1/moved") {
      if (o.keep) return json({ detail: o.keep, code: "conflict" }, 409);
      fence = await req.json();
      return json(fence);
    }
    return json({ detail: "Not Found" }, 404);
  };
  // The target's import, at the API's boundary (the multipart request itself is the
  // browser's; the Playwright spec and the server's tests cover the wire).
  const target = {
    baseUrl: "http://b",
    async importCapsule(capsule: Blob, options: unknown) {
      calls.push("target POST /api/conversations/import");
      importOptions = options;
      if ((await capsule.text()) !== "capsule-bytes") throw new ApiError("invalid", "no capsule", 422, "no capsule");
      if (o.refuse) throw new ApiError("invalid", o.refuse, 422, o.refuse);
      return { conversation: { id: "c1" }, working_dir: "/t/ws", events: 12, last_event_id: "e12", workspace_tree: "t", execution_status: "paused" } as unknown as ImportedConversation;
    },
    async arrival(id: string, accept: boolean) {
      calls.push(`target arrival ${id} ${accept ? "accept" : "reject"}`);
    },
    async movedRecord(id: string) {
      calls.push(`target record ${id}`);
      if (!o.base) throw new ApiError("not_found", "Not Found", 404, "Not Found");
      return { url: "http://a", conversation_id: id, workspace_base: o.base };
    },
  };
  return {
    source: createApi({ baseUrl: "http://a", key: "ka" }, source),
    target,
    calls,
    importOptions: () => importOptions,
    fence: () => fence,
    exportBody: () => exportBody,
  };
}

const backendB: Backend = { id: "b", name: "Big machine", kind: "remote", baseUrl: "http://b", key: "kb" };

describe("moving a conversation", () => {
  it("exports, imports as arriving, fences the source, then accepts the arrival, in that order", async () => {
    const s = servers();
    const steps: string[] = [];
    const imported = await moveConversation({ source: s.source, target: s.target, conversationId: "c1", force: true, workingDir: " /t/ws ", onStep: (x) => steps.push(x) });
    expect(imported.events).toBe(12);
    expect(steps).toEqual(["export", "import", "fence", "arrival"]);
    expect(s.calls).toEqual([
      "source POST /api/conversations/c1/export",
      "target POST /api/conversations/import",
      "source POST /api/conversations/c1/moved",
      "target arrival c1 accept",
    ]);
    expect(s.importOptions()).toEqual({ working_dir: "/t/ws", pending: true });
    expect(s.fence()).toEqual({ url: "http://b", conversation_id: "c1", last_event_id: "e12" });
  });

  it("moving back onto the record the target keeps, asks only for what changed", async () => {
    const s = servers({ base: "c0ffee" });
    await moveConversation({ source: s.source, target: s.target, conversationId: "c1", force: false });
    expect(s.exportBody()).toEqual({ force: false, base_commit: "c0ffee" });
    expect(s.importOptions()).toEqual({ pending: true });
    const fresh = servers();
    await moveConversation({ source: fresh.source, target: fresh.target, conversationId: "c1", force: false });
    expect(fresh.exportBody()).toEqual({ force: false, base_commit: null });
  });

  it("abandons the target's copy when the source does not let go", async () => {
    const s = servers({ keep: "the conversation went on here since it was exported" });
    await expect(moveConversation({ source: s.source, target: s.target, conversationId: "c1", force: false })).rejects.toThrow(
      /did not let the conversation go: the conversation went on here.*It stays where it is/,
    );
    expect(s.calls.at(-1)).toBe("target arrival c1 reject");
  });

  it("names the step and the target's reason, and never fences the source when the import fails", async () => {
    const s = servers({ refuse: "this server cannot run the conversation's LLM openai/x" });
    await expect(moveConversation({ source: s.source, target: s.target, conversationId: "c1", force: false })).rejects.toThrow(
      /The target refused the conversation: .*cannot run the conversation's LLM openai\/x.*It stays where it is/,
    );
    expect(s.calls.some((c) => c.includes("/moved"))).toBe(false);
  });

  it("the dialog moves to the chosen backend, or shows why not", async () => {
    const ok = servers();
    const onMoved = vi.fn();
    const { unmount } = render(<MoveDialog source={ok.source} conversationId="c1" targets={[{ backend: backendB, api: ok.target }]} onClose={() => undefined} onMoved={onMoved} />);
    expect(screen.getByRole("radio", { name: /Big machine/ })).toHaveProperty("checked", true);
    fireEvent.click(screen.getByRole("button", { name: "Move" }));
    await waitFor(() => expect(onMoved).toHaveBeenCalledTimes(1));
    expect(onMoved.mock.calls[0]?.[0]).toBe(backendB);
    unmount();

    const refused = servers({ refuse: "no profile for openai/x" });
    const onMoved2 = vi.fn();
    render(<MoveDialog source={refused.source} conversationId="c1" targets={[{ backend: backendB, api: refused.target }]} onClose={() => undefined} onMoved={onMoved2} />);
    fireEvent.click(screen.getByRole("button", { name: "Move" }));
    expect((await screen.findByRole("alert")).textContent).toMatch(/no profile for openai\/x/);
    expect(onMoved2).not.toHaveBeenCalled();
  });

  it("says when no backend can take it", () => {
    const s = servers();
    render(<MoveDialog source={s.source} conversationId="c1" targets={[]} onClose={() => undefined} onMoved={() => undefined} />);
    expect(screen.getByRole("note").textContent).toMatch(/No other backend/);
    expect(screen.getByRole("button", { name: "Move" })).toHaveProperty("disabled", true);
  });
});
