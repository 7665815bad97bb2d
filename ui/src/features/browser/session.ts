// The live view's socket (`/sockets/browser/{id}`) as a small state machine, free of React so it
// can be tested with a fake socket: first-frame auth, state and frames in, the person's input
// out (only while the person drives), refusals shown, reconnect with backoff.
//
// Close codes: 4001 the key was refused; 4004 the conversation is unknown, or (after an error
// frame, before any state) it has no browser tools. Neither is retried: retrying cannot help.
import { socketUrl } from "../../api/client";
import type { SocketFactory, SocketLike } from "../../api/eventStream";
import { INPUT_FRAMES, parseServerFrame, toWire, type BrowserFrame, type BrowserState, type ClientFrame } from "./wire";

export type BrowserConn =
  | { status: "connecting"; attempt: number }
  | { status: "open" }
  | { status: "lost"; retryInMs: number; reason: string }
  | { status: "unauthorized" }
  | { status: "not_found" }
  | { status: "no_browser_tools"; message: string }
  | { status: "closed" };

/** What the pane shows, apart from the frames themselves (they arrive through `onFrame`). */
export interface BrowserSnapshot {
  conn: BrowserConn;
  /** The last state the server sent (kept across reconnects, so the pane does not flicker). */
  state: BrowserState | null;
  /** The page size of the last frame, null before the first. */
  frameSize: { width: number; height: number } | null;
  /** The server's last refusal (or a local one), until dismissed or the driver changes. */
  error: string | null;
}

export interface BrowserSessionOptions {
  baseUrl: string;
  sessionKey: string | null;
  conversationId: string;
  onChange: (s: BrowserSnapshot) => void;
  onFrame?: (f: BrowserFrame) => void;
  socketFactory?: SocketFactory;
  /** Delay before reconnect attempt `n` (1-based). */
  backoffMs?: (attempt: number) => number;
}

const defaultBackoff = (n: number) => Math.min(10_000, 500 * 2 ** Math.min(n - 1, 5));
const browserSocket: SocketFactory = (url) => new WebSocket(url) as unknown as SocketLike;
const OPEN = 1;

export class BrowserSession {
  private socket: SocketLike | null = null;
  private stopped = false;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private generation = 0;
  private snap: BrowserSnapshot = { conn: { status: "connecting", attempt: 1 }, state: null, frameSize: null, error: null };

  constructor(private readonly o: BrowserSessionOptions) {}

  get snapshot(): BrowserSnapshot {
    return this.snap;
  }

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.generation++;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.dropSocket("client closed");
    this.update({ conn: { status: "closed" } });
  }

  /** Ask for the wheel. Always allowed: the server decides. */
  takeControl(): boolean {
    this.update({ error: null });
    return this.sendRaw({ type: "take_control" });
  }

  /** Give the wheel back to the agent with a note it reads. */
  handBack(note: string): boolean {
    this.update({ error: null });
    return this.sendRaw({ type: "hand_back", note });
  }

  /**
   * Sends the person's input. Input frames go only while the person drives (the server would
   * refuse them anyway); returns whether the frame was sent.
   */
  send(frame: ClientFrame): boolean {
    if (INPUT_FRAMES.has(frame.type) && this.snap.state?.driver !== "person") return false;
    return this.sendRaw(frame);
  }

  dismissError(): void {
    this.update({ error: null });
  }

  private sendRaw(frame: ClientFrame): boolean {
    const s = this.socket;
    if (!s || s.readyState !== OPEN || this.snap.conn.status !== "open") return false;
    s.send(JSON.stringify(toWire(frame)));
    return true;
  }

  private update(patch: Partial<BrowserSnapshot>): void {
    this.snap = { ...this.snap, ...patch };
    this.o.onChange(this.snap);
  }

  private dropSocket(reason: string): void {
    const s = this.socket;
    this.socket = null;
    if (s) {
      s.onclose = null;
      s.onmessage = null;
      s.onerror = null;
      s.onopen = null;
      s.close(1000, reason);
    }
  }

  private connect(): void {
    const gen = ++this.generation;
    this.attempt++;
    this.update({ conn: { status: "connecting", attempt: this.attempt } });
    const url = socketUrl(this.o.baseUrl, `/sockets/browser/${encodeURIComponent(this.o.conversationId)}`);
    let socket: SocketLike;
    try {
      socket = (this.o.socketFactory ?? browserSocket)(url);
    } catch (e) {
      this.scheduleReconnect(e instanceof Error ? e.message : "cannot open the socket");
      return;
    }
    this.socket = socket;
    // An error frame before any state, then 4004: the conversation has no browser tools.
    let refusedAtStart: string | null = null;
    let sawState = false;

    socket.onopen = () => {
      // First-frame auth: the key never appears in a URL.
      if (this.o.sessionKey) socket.send(JSON.stringify({ type: "auth", session_api_key: this.o.sessionKey }));
    };
    socket.onmessage = (msg) => {
      if (gen !== this.generation) return;
      const f = parseServerFrame(msg.data);
      if (!f) return;
      if (f.type === "error") {
        if (!sawState) refusedAtStart = f.message;
        this.update({ error: f.message });
        return;
      }
      // Anything but an error proves the server took our auth.
      const opened = this.snap.conn.status !== "open";
      if (opened) this.attempt = 0;
      if (f.type === "state") {
        sawState = true;
        const { type: _t, ...state } = f;
        const driverChanged = this.snap.state?.driver !== state.driver;
        this.update({ state, ...(opened ? { conn: { status: "open" } as const } : {}), ...(driverChanged ? { error: null } : {}) });
        return;
      }
      const { type: _t, ...frame } = f;
      const size = this.snap.frameSize;
      if (opened || !size || size.width !== frame.width || size.height !== frame.height) {
        this.update({ frameSize: { width: frame.width, height: frame.height }, ...(opened ? { conn: { status: "open" } as const } : {}) });
      }
      this.o.onFrame?.(frame);
    };
    socket.onerror = () => {
      // onclose follows with the code.
    };
    socket.onclose = (ev) => {
      if (gen !== this.generation) return;
      this.socket = null;
      if (this.stopped) return;
      if (ev.code === 4001) {
        this.update({ conn: { status: "unauthorized" } });
        return;
      }
      if (ev.code === 4004) {
        this.update(
          refusedAtStart !== null
            ? { conn: { status: "no_browser_tools", message: refusedAtStart }, error: null }
            : { conn: { status: "not_found" } },
        );
        return;
      }
      this.scheduleReconnect(ev.reason || `socket closed (${ev.code})`);
    };
  }

  private scheduleReconnect(reason: string): void {
    if (this.stopped) return;
    const wait = (this.o.backoffMs ?? defaultBackoff)(Math.max(1, this.attempt));
    this.update({ conn: { status: "lost", retryInMs: wait, reason } });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) this.connect();
    }, wait);
  }
}
