import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import * as E from "../test/events";
import { ApiError } from "./errors";
import { EventStream, type StreamState } from "./eventStream";
import { FakeSocket, fakeSocket } from "./fakeSocket";
import type { WireEvent } from "./types";

/** A server-side history that pages like events/search: page_id = first id of the page. */
function pager(history: WireEvent[], pageSize = 2) {
  const calls: (string | undefined)[] = [];
  const fetchPage = async (pageId?: string) => {
    calls.push(pageId);
    const start = pageId ? history.findIndex((e) => e.id === pageId) : 0;
    if (start < 0) throw new ApiError("invalid", "unknown page id", 400);
    const items = history.slice(start, start + pageSize);
    return { items, next_page_id: history[start + pageSize]?.id ?? null };
  };
  return { fetchPage, calls };
}

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("EventStream", () => {
  beforeEach(() => {
    FakeSocket.all = [];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function setup(history: WireEvent[], key: string | null = "sk-1") {
    const delivered: WireEvent[] = [];
    const states: StreamState["status"][] = [];
    let last: string | null = null;
    const p = pager(history);
    const stream = new EventStream({
      baseUrl: "http://127.0.0.1:8000",
      sessionKey: key,
      conversationId: "c1",
      fetchPage: p.fetchPage,
      lastSeenId: () => last,
      onEvents: (evs) => {
        delivered.push(...evs);
        last = evs[evs.length - 1]?.id ?? last;
      },
      onState: (s) => states.push(s.status),
      socketFactory: fakeSocket,
      backoffMs: () => 10,
    });
    return { stream, delivered, states, calls: p.calls };
  }

  it("shows the first page of a long history at once and hands the rest on in a few batches, in order", async () => {
    const h = Array.from({ length: 40 }, (_, i) => E.agentMessage(`m${i}`));
    const batches: number[] = [];
    const delivered: WireEvent[] = [];
    const p = pager(h);
    const stream = new EventStream({
      baseUrl: "http://127.0.0.1:8000",
      sessionKey: null,
      conversationId: "c1",
      fetchPage: p.fetchPage,
      lastSeenId: () => null,
      onEvents: (evs) => {
        batches.push(evs.length);
        delivered.push(...evs);
      },
      onState: () => {},
      socketFactory: fakeSocket,
    });
    stream.start();
    const s = FakeSocket.all[0]!;
    s.open();
    s.frame(E.status("idle"));
    for (let i = 0; i < 50 && delivered.length < 41; i++) await flush();
    // 20 pages of 2, the status frame last: the first page alone, then far fewer calls than pages.
    expect(batches[0]).toBe(2);
    expect(batches.length).toBeLessThan(5);
    expect(delivered.map((e) => e.id)).toEqual([...h.map((e) => e.id), delivered[40]!.id]);
    stream.stop();
  });

  it("authenticates with the first frame, never in the URL", async () => {
    const { stream } = setup([]);
    stream.start();
    const s = FakeSocket.all[0]!;
    expect(s.url).toBe("ws://127.0.0.1:8000/sockets/events/c1");
    s.open();
    expect(JSON.parse(s.sent[0] as string)).toEqual({ type: "auth", session_api_key: "sk-1" });
    stream.stop();
  });

  it("pages the history in after the first frame, then flushes live frames in order without duplicates", async () => {
    const h = [E.userMessage("a"), E.agentMessage("b"), E.userMessage("c")];
    const { stream, delivered, states } = setup(h);
    stream.start();
    const s = FakeSocket.all[0]!;
    s.open();
    const live = E.agentMessage("d");
    s.frame(E.status("idle"));
    s.frame(h[2]!); // also in history: must not be delivered twice
    s.frame(live);
    await flush();
    await flush();
    expect(delivered.map((e) => e.id)).toEqual([...h.map((e) => e.id), expect.any(String), live.id]);
    expect(new Set(delivered.map((e) => e.id)).size).toBe(delivered.length);
    expect(states).toContain("connected");
    stream.stop();
  });

  it("reconnects after a drop and catches up from the last seen id: no gap, no duplicate", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const running = E.status("running");
    const h = [E.userMessage("1"), E.agentMessage("2"), running];
    const { stream, delivered, calls, states } = setup(h);
    stream.start();
    FakeSocket.all[0]!.open();
    FakeSocket.all[0]!.frame(running); // persisted state update, also in the history
    await vi.runOnlyPendingTimersAsync();
    expect(delivered.map((e) => e.id)).toEqual(h.map((e) => e.id));
    // Events appended while we are disconnected.
    const missed = [E.agentMessage("3"), E.agentMessage("4"), E.agentMessage("5")];
    h.push(...missed);
    FakeSocket.all[0]!.drop(1006, "server restarted");
    expect(states[states.length - 1]).toBe("lost");
    const callsBefore = calls.length;
    await vi.advanceTimersByTimeAsync(10);
    const s2 = FakeSocket.all[1]!;
    s2.open();
    s2.frame(missed[2]!); // a live frame overlapping the catch-up pages
    await vi.runOnlyPendingTimersAsync();
    await Promise.resolve();
    // Catch-up started at the last event seen before the drop, and paged on from there.
    expect(calls.slice(callsBefore)).toEqual([running.id, missed[1]!.id]);
    expect(delivered.map((e) => e.id)).toEqual([...h.map((e) => e.id)]);
    expect(states[states.length - 1]).toBe("connected");
    stream.stop();
  });

  it("replays from the start when the server does not know the anchor", async () => {
    const h = [E.userMessage("1"), E.agentMessage("2")];
    const delivered: WireEvent[] = [];
    const p = pager(h);
    const stream = new EventStream({
      baseUrl: "http://x",
      sessionKey: null,
      conversationId: "c",
      fetchPage: p.fetchPage,
      lastSeenId: () => "gone",
      onEvents: (e) => delivered.push(...e),
      onState: () => {},
      socketFactory: fakeSocket,
    });
    stream.start();
    FakeSocket.all[0]!.open();
    expect(FakeSocket.all[0]!.sent).toEqual([]); // no key, no auth frame
    FakeSocket.all[0]!.frame(E.status("idle"));
    await flush();
    await flush();
    expect(p.calls.slice(0, 2)).toEqual(["gone", undefined]);
    expect(delivered.slice(0, 2).map((e) => e.id)).toEqual(h.map((e) => e.id));
    stream.stop();
  });

  it("reports unauthorized (close 4001) and does not retry", async () => {
    const { stream, states } = setup([]);
    stream.start();
    FakeSocket.all[0]!.open();
    FakeSocket.all[0]!.drop(4001, "Authentication failed");
    await flush();
    expect(states[states.length - 1]).toBe("unauthorized");
    expect(FakeSocket.all.length).toBe(1);
    stream.stop();
  });
});
