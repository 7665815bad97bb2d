// Test-only: a WebSocket the tests play the server through (frames in, sent frames recorded).
import type { SocketLike } from "../../api/eventStream";

export class FakeSocket implements SocketLike {
  static all: FakeSocket[] = [];
  readyState = 0;
  sent: string[] = [];
  closed: number | null = null;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  static last(): FakeSocket {
    const s = FakeSocket.all[FakeSocket.all.length - 1];
    if (!s) throw new Error("no socket was opened");
    return s;
  }
  send(d: string) {
    this.sent.push(d);
  }
  close(code = 1000) {
    this.closed = code;
    this.readyState = 3;
  }
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  frame(v: unknown) {
    this.onmessage?.({ data: typeof v === "string" ? v : JSON.stringify(v) });
  }
  drop(code = 1006, reason = "") {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
  /** The JSON frames the client sent. */
  frames(): Record<string, unknown>[] {
    return this.sent.map((s) => JSON.parse(s) as Record<string, unknown>);
  }
}

export const agentState = (over: Record<string, unknown> = {}) => ({
  type: "state",
  driver: "agent",
  url: "http://127.0.0.1:9/index.html",
  title: "Index",
  tabs: [{ id: "T1", url: "http://127.0.0.1:9/index.html", title: "Index", active: true }],
  handoff: null,
  running: true,
  ...over,
});

/** A 1×1 JPEG is enough: nothing decodes it in jsdom. */
export const jpegFrame = (width = 1280, height = 720) => ({ type: "frame", format: "jpeg", data: "/9j/4AAQSkZJRg==", width, height });
