import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeSocket, fakeSocket } from "../../api/fakeSocket";
import { agentState, jpegFrame } from "./testFrames";
import { BrowserSession, type BrowserSnapshot } from "./session";
import type { BrowserFrame } from "./wire";

function setup(key: string | null = "sk-1") {
  const snaps: BrowserSnapshot[] = [];
  const frames: BrowserFrame[] = [];
  const session = new BrowserSession({
    baseUrl: "http://127.0.0.1:8000",
    sessionKey: key,
    conversationId: "c 1",
    onChange: (s) => snaps.push(s),
    onFrame: (f) => frames.push(f),
    socketFactory: fakeSocket,
    backoffMs: (n) => 100 * n,
  });
  session.start();
  return { session, snaps, frames, last: () => snaps[snaps.length - 1]! };
}

describe("BrowserSession", () => {
  beforeEach(() => {
    FakeSocket.all = [];
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("authenticates with its first frame, then shows the state and the frames", () => {
    const { session, frames, last } = setup();
    const ws = FakeSocket.last();
    expect(ws.url).toBe("ws://127.0.0.1:8000/sockets/browser/c%201");
    expect(last().conn).toEqual({ status: "connecting", attempt: 1 });
    ws.open();
    expect(ws.frames()).toEqual([{ type: "auth", session_api_key: "sk-1" }]);
    // Nothing goes out before the server has answered.
    expect(session.takeControl()).toBe(false);

    ws.frame(agentState({ running: false, url: "", tabs: [] }));
    expect(last().conn).toEqual({ status: "open" });
    expect(last().state).toMatchObject({ driver: "agent", running: false, handoff: null });
    expect(last().frameSize).toBeNull();

    ws.frame(agentState());
    ws.frame(jpegFrame());
    expect(last().state?.running).toBe(true);
    expect(last().frameSize).toEqual({ width: 1280, height: 720 });
    expect(frames).toHaveLength(1);
    expect(frames[0]).toMatchObject({ format: "jpeg", width: 1280, height: 720 });
  });

  it("sends no auth frame to a server that needs no key", () => {
    setup(null);
    FakeSocket.last().open();
    expect(FakeSocket.last().sent).toEqual([]);
  });

  it("sends input only while the person drives, and shows the server's refusals", () => {
    const { session, last } = setup();
    const ws = FakeSocket.last();
    ws.open();
    ws.frame(agentState({ handoff: { reason: "Please log in" } }));
    expect(last().state?.handoff).toEqual({ reason: "Please log in" });

    const click = { type: "mouse", action: "click", x: 10, y: 20, button: "left", delta_x: 0, delta_y: 0, modifiers: 0 } as const;
    expect(session.send(click)).toBe(false);
    expect(session.send({ type: "text", text: "x" })).toBe(false);
    expect(session.takeControl()).toBe(true);

    ws.frame(agentState({ driver: "person", handoff: { reason: "Please log in" } }));
    expect(session.send(click)).toBe(true);
    expect(session.send({ type: "key", key: "Enter", modifiers: 0 })).toBe(true);
    expect(session.send({ type: "navigate", url: "http://127.0.0.1:9/x" })).toBe(true);

    // A refusal the server sends anyway is shown, and goes when the driver changes.
    ws.frame({ type: "error", message: "the agent drives the browser" });
    expect(last().error).toBe("the agent drives the browser");
    expect(session.handBack("logged in")).toBe(true);
    ws.frame(agentState());
    expect(last().error).toBeNull();
    expect(ws.frames().map((f) => f.type)).toEqual(["auth", "take_control", "mouse", "key", "navigate", "hand_back"]);
    expect(ws.frames()[5]).toEqual({ type: "hand_back", note: "logged in" });
  });

  it("ignores frames it does not understand", () => {
    const { last, frames } = setup();
    const ws = FakeSocket.last();
    ws.open();
    ws.frame("not json");
    ws.frame({ type: "frame", data: "", width: 10, height: 10 });
    ws.frame({ type: "frame", data: "abc", width: -1, height: 10 });
    ws.frame({ type: "state", driver: "robot" });
    ws.frame({ type: "mystery" });
    expect(frames).toEqual([]);
    expect(last().conn.status).toBe("connecting");
  });

  it("reconnects with growing backoff when the socket drops, keeping the last state", () => {
    vi.useFakeTimers();
    const { last } = setup();
    let ws = FakeSocket.last();
    ws.open();
    ws.frame(agentState());
    ws.drop(1006, "server went away");
    expect(last().conn).toEqual({ status: "lost", retryInMs: 100, reason: "server went away" });
    expect(last().state?.url).toBe("http://127.0.0.1:9/index.html");
    vi.advanceTimersByTime(100);
    expect(FakeSocket.all).toHaveLength(2);
    expect(last().conn).toEqual({ status: "connecting", attempt: 1 });
    FakeSocket.last().drop(1006);
    expect(last().conn).toMatchObject({ status: "lost", retryInMs: 100 });
    vi.advanceTimersByTime(100);
    expect(last().conn).toEqual({ status: "connecting", attempt: 2 });
    FakeSocket.last().drop(1006);
    expect(last().conn).toMatchObject({ status: "lost", retryInMs: 200 });
    vi.advanceTimersByTime(200);
    expect(FakeSocket.all).toHaveLength(4);
    ws = FakeSocket.last();
    ws.open();
    ws.frame(agentState());
    expect(last().conn).toEqual({ status: "open" });
    // A drop after a good connection starts the backoff again.
    ws.drop(1006);
    expect(last().conn).toMatchObject({ status: "lost", retryInMs: 100 });
  });

  it("stops on a refused key, an unknown conversation, and a conversation without browser tools", () => {
    vi.useFakeTimers();
    let s = setup();
    FakeSocket.last().open();
    FakeSocket.last().drop(4001, "unauthorized");
    expect(s.last().conn).toEqual({ status: "unauthorized" });
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(1);

    s = setup();
    FakeSocket.last().open();
    FakeSocket.last().drop(4004);
    expect(s.last().conn).toEqual({ status: "not_found" });

    s = setup();
    FakeSocket.last().open();
    FakeSocket.last().frame({ type: "error", message: "conversation c1 has no browser tools" });
    FakeSocket.last().drop(4004);
    expect(s.last().conn).toEqual({ status: "no_browser_tools", message: "conversation c1 has no browser tools" });
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(3);
  });

  it("closes its socket when stopped and does not come back", () => {
    vi.useFakeTimers();
    const { session, last } = setup();
    const ws = FakeSocket.last();
    ws.open();
    session.stop();
    expect(ws.closed).toBe(1000);
    expect(last().conn).toEqual({ status: "closed" });
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(1);
  });
});
