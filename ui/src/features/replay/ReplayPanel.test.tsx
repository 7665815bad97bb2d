import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createApi, type FetchLike } from "../../api/client";
import type { Checkpoint, ReplayState } from "../../api/tandemTypes";
import { ReplayPanel } from "./ReplayPanel";

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** A server's replay routes: `states` by event id (a Response for an error), any frame as a JPEG. */
function replayServer(states: Record<string, ReplayState | Response>) {
  const fetch: FetchLike = async (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/api/conversations/c1/replay") {
      const id = url.searchParams.get("event_id") ?? "";
      const s = states[id];
      if (s instanceof Response) return s;
      return s ? json(s) : json({ detail: `no event ${id} in this conversation` }, 422);
    }
    if (url.pathname.startsWith("/api/conversations/c1/replay/frames/")) {
      // Frames need the session key like every route.
      if (req.headers.get("X-Session-API-Key") !== "k") return json({ detail: "Unauthorized" }, 401);
      return new Response(new Blob(["jpeg"], { type: "image/jpeg" }), { status: 200, headers: { "content-type": "image/jpeg" } });
    }
    return json({ detail: "Not Found" }, 404);
  };
  return { api: createApi({ baseUrl: "http://h", key: "k" }, fetch), fetch };
}

function wrapper({ children }: { children: ReactNode }) {
  return <QueryClientProvider client={new QueryClient()}>{children}</QueryClientProvider>;
}

const checkpoint: Checkpoint = { id: "cp1", event_id: "obs1", tree: "abcdef0123456789", author: "agent", added: ["notes.txt"], timestamp: "2026-11-29T00:00:00Z" };

const full: ReplayState = {
  event_id: "obs1",
  terminal: { screen: "$ echo replay-one\nreplay-one\n$", cols: 80, rows: 24, at_event_id: "obs1" },
  browser: { frame_id: "f1", url: "https://example.com/" },
  workspace: {
    tree: "abcdef0123456789",
    checkpoint_id: "cp1",
    at_event_id: "obs1",
    diff: "diff --git a/notes.txt b/notes.txt\nnew file mode 100644\n--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1 @@\n+replay-one\n",
    diff_truncated: false,
  },
};

beforeEach(() => {
  URL.createObjectURL = vi.fn(() => "blob:frame");
  URL.revokeObjectURL = vi.fn();
});
afterEach(() => vi.restoreAllMocks());

describe("replay panel", () => {
  it("shows the terminal, the browser frame and the workspace as of the event", async () => {
    const server = replayServer({ obs1: full });
    const onFork = vi.fn();
    render(<ReplayPanel api={server.api} conversationId="c1" eventId="obs1" checkpoints={[checkpoint]} onFork={onFork} />, { wrapper });
    const screenText = await screen.findByLabelText("Terminal as of this event");
    expect(screenText.textContent).toContain("replay-one");
    expect(screen.getByText("80×24")).toBeTruthy();
    expect(screen.queryByText(/as of an earlier event/)).toBeNull();
    const img = await screen.findByRole("img", { name: "Browser as of this event" });
    expect(img.getAttribute("src")).toBe("blob:frame");
    expect(screen.getByText("https://example.com/")).toBeTruthy();
    expect(screen.getByText("abcdef012345")).toBeTruthy();
    expect(screen.getByRole("list", { name: "Files this action changed" }).textContent).toContain("notes.txt");
    // The checkpoint's diff against the one before, read-only.
    const diff = screen.getByLabelText("Changes to notes.txt");
    expect(diff.textContent).toContain("replay-one");
    fireEvent.click(screen.getByRole("button", { name: "Fork from here" }));
    expect(onFork).toHaveBeenCalledWith("obs1");
  });

  it("says which lanes have recorded nothing yet, and which are from an earlier event", async () => {
    const server = replayServer({
      e2: { event_id: "e2", terminal: { screen: "$", cols: 100, rows: 30, at_event_id: "e1" }, browser: null, workspace: null },
    });
    render(<ReplayPanel api={server.api} conversationId="c1" eventId="e2" checkpoints={[]} onFork={null} />, { wrapper });
    await screen.findByLabelText("Terminal as of this event");
    expect(screen.getByText(/as of an earlier event/)).toBeTruthy();
    expect(screen.getByText("No browser yet")).toBeTruthy();
    expect(screen.getByText("No checkpoint yet")).toBeTruthy();
    expect(screen.queryByRole("button", { name: "Fork from here" })).toBeNull();
  });

  it("says there is no terminal yet", async () => {
    const server = replayServer({ e0: { event_id: "e0", terminal: null, browser: null, workspace: null } });
    render(<ReplayPanel api={server.api} conversationId="c1" eventId="e0" checkpoints={[]} onFork={null} />, { wrapper });
    expect(await screen.findByText("No terminal yet")).toBeTruthy();
  });

  it("lists the notes of a damaged recording as warnings", async () => {
    const server = replayServer({ obs1: { ...full, browser: null, notes: ["the terminal recording is cut short after event 12"] } });
    render(<ReplayPanel api={server.api} conversationId="c1" eventId="obs1" checkpoints={[]} onFork={null} />, { wrapper });
    const notes = await screen.findByRole("list", { name: "Replay notes" });
    expect(notes.textContent).toContain("cut short");
  });

  it("shows an error in the panel instead of throwing", async () => {
    const server = replayServer({});
    render(<ReplayPanel api={server.api} conversationId="c1" eventId="gone" checkpoints={[]} onFork={null} />, { wrapper });
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("no event gone in this conversation");
  });

  it("keeps the previous state on screen until the next event's arrives", async () => {
    let release = () => undefined as void;
    const slow = new Promise<void>((r) => (release = r));
    const next: ReplayState = { event_id: "obs2", terminal: { screen: "replay-two", cols: 80, rows: 24, at_event_id: "obs2" }, browser: null, workspace: null };
    const server = replayServer({ obs1: { ...full, browser: null }, obs2: next });
    const fetch: FetchLike = async (req) => {
      if (new URL(req.url).searchParams.get("event_id") === "obs2") await slow;
      return server.fetch(req);
    };
    const api = createApi({ baseUrl: "http://h", key: "k" }, fetch);
    const { rerender } = render(<ReplayPanel api={api} conversationId="c1" eventId="obs1" checkpoints={[]} onFork={null} />, { wrapper });
    expect((await screen.findByLabelText("Terminal as of this event")).textContent).toContain("replay-one");
    rerender(<ReplayPanel api={api} conversationId="c1" eventId="obs2" checkpoints={[]} onFork={null} />);
    expect(screen.getByLabelText("Terminal as of this event").textContent).toContain("replay-one");
    release();
    await waitFor(() => expect(screen.getByLabelText("Terminal as of this event").textContent).toContain("replay-two"));
  });
});
