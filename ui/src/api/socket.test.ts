import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FakeSocket, fakeSocket } from "./fakeSocket";
import { AuthedSocket, CONNECTING, defaultBackoff, OPEN, type AuthedSocketOptions, type SocketClose } from "./socket";

/** An AuthedSocket on fake sockets, recording everything it reports. */
function setup(over: Partial<AuthedSocketOptions> = {}) {
  const messages: unknown[] = [];
  const closes: SocketClose[] = [];
  const attempts: number[] = [];
  let opened = 0;
  const socket = new AuthedSocket({
    url: "ws://127.0.0.1:8000/sockets/x/c1",
    sessionKey: "sk-1",
    socketFactory: fakeSocket,
    onConnecting: (n) => attempts.push(n),
    onOpen: () => opened++,
    onMessage: (d) => messages.push(d),
    onClose: (c) => closes.push(c),
    ...over,
  });
  return { socket, messages, closes, attempts, opened: () => opened };
}

describe("AuthedSocket", () => {
  beforeEach(() => {
    FakeSocket.all = [];
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("sends the session key as its first frame, never in the URL, and nothing before it", () => {
    const { socket, opened } = setup();
    socket.connect();
    const ws = FakeSocket.last();
    expect(ws.url).toBe("ws://127.0.0.1:8000/sockets/x/c1");
    expect(socket.sendJson({ type: "early" })).toBe(false);
    // Up but not yet told: still "connecting" to the owner (noVNC must not speak yet).
    ws.readyState = OPEN;
    expect(socket.readyState).toBe(CONNECTING);
    ws.open();
    expect(ws.sent[0]).toBe(JSON.stringify({ type: "auth", session_api_key: "sk-1" }));
    expect(opened()).toBe(1);
    expect(socket.readyState).toBe(OPEN);
    expect(socket.sendJson({ type: "resize", rows: 24, cols: 80 })).toBe(true);
    expect(socket.send(new Uint8Array([1, 2]))).toBe(true);
    expect(ws.sent).toHaveLength(3);
    expect(ws.frames()).toEqual([
      { type: "auth", session_api_key: "sk-1" },
      { type: "resize", rows: 24, cols: 80 },
    ]);
  });

  it("sends no auth frame to a server without keys", () => {
    const { socket, opened } = setup({ sessionKey: null });
    socket.connect();
    FakeSocket.last().open();
    expect(FakeSocket.last().sent).toEqual([]);
    expect(opened()).toBe(1);
  });

  it("asks for binary frames as array buffers only when told to", () => {
    setup().socket.connect();
    expect(FakeSocket.last().binaryType).toBe("blob");
    const { socket, messages } = setup({ binary: true });
    socket.connect();
    const ws = FakeSocket.last();
    expect(ws.binaryType).toBe("arraybuffer");
    ws.open();
    ws.bytes([1, 2, 3]);
    ws.frame("text");
    expect(messages).toEqual([new Uint8Array([1, 2, 3]).buffer, "text"]);
  });

  it("ignores everything a superseded socket still does", () => {
    const { socket, messages, closes, opened } = setup();
    socket.connect();
    const old = FakeSocket.last();
    old.open();
    // Its handlers as the browser would still hold them.
    const late = { open: old.onopen, message: old.onmessage, close: old.onclose };
    const gen = socket.generation;
    socket.reconnectNow();
    expect(old.closed).toBe(1000);
    expect(socket.generation).not.toBe(gen);
    const current = FakeSocket.last();
    expect(current).not.toBe(old);
    // The old socket's late frames, errors, open and close change nothing.
    late.message?.({ data: "late" });
    late.open?.({});
    late.close?.({ code: 1006, reason: "late" });
    expect(messages).toEqual([]);
    expect(closes).toEqual([]);
    expect(opened()).toBe(1);
    expect(old.sent).toHaveLength(1);
    current.open();
    current.frame("fresh");
    expect(messages).toEqual(["fresh"]);
  });

  it("ignores a socket that was dropped and replaced by the backoff's attempt", () => {
    const { socket, messages, closes } = setup();
    socket.connect();
    const first = FakeSocket.last();
    const handlers = { message: first.onmessage, close: first.onclose };
    first.drop(1006, "gone");
    vi.advanceTimersByTime(defaultBackoff(1));
    expect(FakeSocket.all).toHaveLength(2);
    handlers.message?.({ data: "stale" });
    handlers.close?.({ code: 1006, reason: "again" });
    expect(messages).toEqual([]);
    expect(closes).toHaveLength(1);
  });

  it("backs off exponentially up to a cap, and starts over after a good connection", () => {
    const { socket, closes, attempts } = setup();
    socket.connect();
    const waits = () => closes.map((c) => c.retryInMs);
    for (let i = 0; i < 7; i++) {
      FakeSocket.last().drop(1006);
      vi.advanceTimersByTime(closes[closes.length - 1]!.retryInMs!);
    }
    expect(waits()).toEqual([500, 1000, 2000, 4000, 8000, 10_000, 10_000]);
    expect(attempts).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(FakeSocket.all).toHaveLength(8);

    // The owner says the connection proved good: the next drop waits the first delay again.
    FakeSocket.last().open();
    socket.resetBackoff();
    FakeSocket.last().drop(1011, "restarting");
    expect(closes[closes.length - 1]).toEqual({ code: 1011, reason: "restarting", retryInMs: 500 });
    vi.advanceTimersByTime(499);
    expect(FakeSocket.all).toHaveLength(8);
    vi.advanceTimersByTime(1);
    expect(FakeSocket.all).toHaveLength(9);
    expect(attempts[attempts.length - 1]).toBe(1);
  });

  it("takes the owner's backoff", () => {
    const { socket, closes } = setup({ backoffMs: (n) => 100 * n });
    socket.connect();
    FakeSocket.last().drop();
    vi.advanceTimersByTime(100);
    FakeSocket.last().drop();
    expect(closes.map((c) => c.retryInMs)).toEqual([100, 200]);
  });

  it("does not reconnect after close(), nor report the socket it closed", () => {
    const { socket, closes } = setup();
    socket.connect();
    const ws = FakeSocket.last();
    ws.open();
    const lateClose = ws.onclose;
    socket.close();
    expect(ws.closed).toBe(1000);
    lateClose?.({ code: 1000, reason: "" });
    expect(closes).toEqual([]);
    expect(socket.sendJson({ type: "x" })).toBe(false);
    socket.reconnectNow();
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(1);

    // Closed while waiting to retry: the retry never comes.
    const second = setup();
    second.socket.connect();
    FakeSocket.last().drop(1006);
    expect(second.closes[0]!.retryInMs).toBe(500);
    second.socket.close();
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(2);
  });

  it("stops for good on a refused key or an unknown conversation, or any close when reconnect is off", () => {
    for (const code of [4001, 4004]) {
      const { socket, closes } = setup();
      socket.connect();
      FakeSocket.last().drop(code, "no");
      expect(closes).toEqual([{ code, reason: "no", retryInMs: null }]);
    }
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(2);

    const noRetry = setup({ reconnect: false });
    noRetry.socket.connect();
    FakeSocket.last().drop(1006);
    expect(noRetry.closes).toEqual([{ code: 1006, reason: "", retryInMs: null }]);
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(3);

    // An owner can narrow the final codes.
    const narrow = setup({ finalCodes: [4001] });
    narrow.socket.connect();
    FakeSocket.last().drop(4004);
    expect(narrow.closes[0]!.retryInMs).toBe(500);
  });

  it("reports a socket that cannot be made as an abnormal close, and retries it", () => {
    let fail = true;
    const { socket, closes } = setup({
      socketFactory: (url) => {
        if (fail) throw new Error("bad url");
        return fakeSocket(url);
      },
    });
    socket.connect();
    expect(closes).toEqual([{ code: 1006, reason: "bad url", retryInMs: 500 }]);
    fail = false;
    vi.advanceTimersByTime(500);
    expect(FakeSocket.all).toHaveLength(1);
  });

  it("end() closes without reconnecting but still reports the close", () => {
    const { socket, closes } = setup();
    socket.connect();
    const ws = FakeSocket.last();
    ws.open();
    socket.end(1000, "viewer closed");
    expect(ws.closed).toBe(1000);
    ws.drop(1000);
    expect(closes).toEqual([{ code: 1000, reason: "", retryInMs: null }]);
    vi.advanceTimersByTime(60_000);
    expect(FakeSocket.all).toHaveLength(1);
  });

  it("restart() forgets the connection and tries again after the backoff", () => {
    const { socket, closes } = setup();
    socket.connect();
    const ws = FakeSocket.last();
    ws.open();
    const lateClose = ws.onclose;
    expect(socket.restart()).toBe(500);
    expect(ws.closed).toBe(1000);
    lateClose?.({ code: 1000, reason: "" });
    expect(closes).toEqual([]);
    vi.advanceTimersByTime(500);
    expect(FakeSocket.all).toHaveLength(2);
    socket.close();
    expect(socket.restart()).toBeNull();
  });
});
