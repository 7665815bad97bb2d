// Test-only: the one fake WebSocket every socket test plays the server through. Nothing happens
// by itself: the test opens it, sends frames in, and ends it (a close from the client is only
// recorded, as the server has not answered yet), so each step of a test is explicit.
import { CLOSED, CONNECTING, OPEN, type SocketFactory, type WebSocketLike } from "./socket";

export class FakeSocket implements WebSocketLike {
  /** Every socket made since the test reset this (`FakeSocket.all = []`), oldest first. */
  static all: FakeSocket[] = [];
  readyState = CONNECTING;
  binaryType = "blob";
  /** Every frame the client sent, as it sent it. */
  sent: unknown[] = [];
  /** The code the client closed with; null while it has not. */
  closed: number | null = null;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;

  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }

  /** The socket made last. */
  static last(): FakeSocket {
    const s = FakeSocket.all[FakeSocket.all.length - 1];
    if (!s) throw new Error("no socket was opened");
    return s;
  }

  send(data: unknown) {
    this.sent.push(data);
  }

  close(code = 1000) {
    this.closed = code;
    this.readyState = CLOSED;
  }

  /** The connection is up. */
  open() {
    this.readyState = OPEN;
    this.onopen?.({});
  }

  /** A text frame from the server: a string as it is, anything else as JSON. */
  frame(v: unknown) {
    this.onmessage?.({ data: typeof v === "string" ? v : JSON.stringify(v) });
  }

  /** A binary frame from the server. */
  bytes(b: number[]) {
    this.onmessage?.({ data: new Uint8Array(b).buffer });
  }

  /** The server (or the network) ends the connection. */
  drop(code = 1006, reason = "") {
    this.readyState = CLOSED;
    this.onclose?.({ code, reason });
  }

  /** The JSON text frames the client sent, parsed (binary frames left out). */
  frames(): Record<string, unknown>[] {
    return this.sent.filter((d): d is string => typeof d === "string").map((d) => JSON.parse(d) as Record<string, unknown>);
  }
}

/** A socket factory making fakes. */
export const fakeSocket: SocketFactory = (url) => new FakeSocket(url);
