import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { createApi, type FetchLike } from "../../api/client";
import type { ConversationInfo, ForkConversationRequest } from "../../api/tandemTypes";
import { ForkDialog, forkRequest } from "./ForkDialog";

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

function isForkRequest(v: unknown): v is ForkConversationRequest {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A server's fork route: answers with `answer(request)`, remembers every request body. */
function forkServer(answer: (req: ForkConversationRequest) => Response) {
  const bodies: ForkConversationRequest[] = [];
  const fetch: FetchLike = async (req) => {
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/api/conversations/c1/fork") return json({ detail: "Not Found" }, 404);
    const body: unknown = await req.json();
    if (!isForkRequest(body)) return json({ detail: "bad body" }, 400);
    bodies.push(body);
    return answer(body);
  };
  return { api: createApi({ baseUrl: "http://h", key: null }, fetch), bodies };
}

/** The fork's info as the server answers it (test boundary: only the fields the dialog reads). */
const forked = (o: Record<string, unknown> = {}) => ({ id: "c2", title: "Fork", execution_status: "idle", ...o }) as unknown as ConversationInfo;

function renderDialog(server: ReturnType<typeof forkServer>, o: { onForked?: (info: ConversationInfo) => void; onClose?: () => void; canRestoreFiles?: boolean } = {}) {
  return render(
    <ForkDialog
      api={server.api}
      conversationId="c1"
      eventId="obs1"
      canRestoreFiles={o.canRestoreFiles ?? true}
      onClose={o.onClose ?? (() => undefined)}
      onForked={o.onForked ?? (() => undefined)}
    />,
  );
}

describe("fork from here", () => {
  it("forks from the event keeping the files, and hands on the new conversation", async () => {
    const server = forkServer(() => json(forked(), 201));
    const onForked = vi.fn();
    renderDialog(server, { onForked });
    expect(screen.getByRole("radio", { name: "Keep the files as they are now" })).toHaveProperty("checked", true);
    fireEvent.click(screen.getByRole("button", { name: "Fork" }));
    await waitFor(() => expect(onForked).toHaveBeenCalledTimes(1));
    expect(onForked.mock.calls[0]?.[0]).toMatchObject({ id: "c2" });
    // No `workspace` for keep: what an upstream server understands too.
    expect(server.bodies).toEqual([{ from_event_id: "obs1" }]);
  });

  it("restores the files to that moment and names the fork when asked", async () => {
    const server = forkServer(() => json(forked(), 201));
    renderDialog(server);
    fireEvent.click(screen.getByRole("radio", { name: "Restore the files to this moment" }));
    fireEvent.change(screen.getByLabelText("Title (optional)"), { target: { value: "  Try it the other way  " } });
    fireEvent.submit(screen.getByLabelText("Title (optional)").closest("form")!);
    await waitFor(() => expect(server.bodies).toEqual([{ from_event_id: "obs1", workspace: "restore", title: "Try it the other way" }]));
  });

  it("offers no restore of the files on a server without checkpoints", () => {
    renderDialog(forkServer(() => json(forked(), 201)), { canRestoreFiles: false });
    expect(screen.getByRole("radio", { name: /Restore the files to this moment/ })).toHaveProperty("disabled", true);
  });

  it("shows the server's words for an unknown event (404) or a bad field (422), and stays open", async () => {
    const server = forkServer((req) =>
      req.title
        ? json({ detail: [{ loc: ["body", "title"], msg: "at most 200 characters", type: "value_error" }] }, 422)
        : json({ detail: "no event obs1 in this conversation" }, 404),
    );
    const onForked = vi.fn();
    renderDialog(server, { onForked });
    fireEvent.click(screen.getByRole("button", { name: "Fork" }));
    expect((await screen.findByRole("alert")).textContent).toBe("Cannot fork: no event obs1 in this conversation");
    fireEvent.change(screen.getByLabelText("Title (optional)"), { target: { value: "x" } });
    fireEvent.click(screen.getByRole("button", { name: "Fork" }));
    await waitFor(() => expect(screen.getByRole("alert").textContent).toBe("Cannot fork: body.title: at most 200 characters"));
    expect(onForked).not.toHaveBeenCalled();
  });

  it("closes on Cancel and on Escape", () => {
    const onClose = vi.fn();
    renderDialog(forkServer(() => json(forked(), 201)), { onClose });
    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    fireEvent.keyDown(screen.getByRole("dialog", { name: "Fork from here" }), { key: "Escape" });
    expect(onClose).toHaveBeenCalledTimes(2);
  });

  it("builds the request without empty fields", () => {
    expect(forkRequest("e", "keep", "   ")).toEqual({ from_event_id: "e" });
    expect(forkRequest("e", "restore", "t")).toEqual({ from_event_id: "e", workspace: "restore", title: "t" });
    expect(forkRequest("e", "worktree", "")).toEqual({ from_event_id: "e", workspace: "worktree" });
  });
});
