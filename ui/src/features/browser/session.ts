// The live view's socket (`/sockets/browser/{id}`, an `AuthedSocket`: first-frame auth, reconnect
// with backoff) as a small state machine, free of React so it can be tested with the fake
// socket: state and frames in, the person's input out (only while the person drives), refusals
// shown.
//
// Close codes: 4001 the key was refused; 4004 the conversation is unknown, or (after an error
// frame, before any state) it has no browser tools. Neither is retried: retrying cannot help.
import { socketUrl } from "../../api/client";
import { AuthedSocket, CLOSE_NOT_FOUND, CLOSE_UNAUTHORIZED, closeReason, type SocketClose, type SocketFactory } from "../../api/socket";
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

export class BrowserSession {
  private readonly socket: AuthedSocket;
  private snap: BrowserSnapshot = { conn: { status: "connecting", attempt: 1 }, state: null, frameSize: null, error: null };
  /** The current connection's error frame before any state (then 4004: no browser tools). */
  private refusedAtStart: string | null = null;
  private sawState = false;

  constructor(private readonly o: BrowserSessionOptions) {
    this.socket = new AuthedSocket({
      url: socketUrl(o.baseUrl, `/sockets/browser/${encodeURIComponent(o.conversationId)}`),
      sessionKey: o.sessionKey,
      socketFactory: o.socketFactory,
      backoffMs: o.backoffMs,
      onConnecting: (attempt) => {
        this.refusedAtStart = null;
        this.sawState = false;
        this.update({ conn: { status: "connecting", attempt } });
      },
      onMessage: (data) => this.onFrame(data),
      onClose: (c) => this.onClose(c),
    });
  }

  get snapshot(): BrowserSnapshot {
    return this.snap;
  }

  start(): void {
    this.socket.connect();
  }

  stop(): void {
    this.socket.close(1000, "client closed");
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
    if (this.snap.conn.status !== "open") return false;
    return this.socket.sendJson(toWire(frame));
  }

  private update(patch: Partial<BrowserSnapshot>): void {
    this.snap = { ...this.snap, ...patch };
    this.o.onChange(this.snap);
  }

  private onFrame(data: unknown): void {
    const f = parseServerFrame(data);
    if (!f) return;
    if (f.type === "error") {
      if (!this.sawState) this.refusedAtStart = f.message;
      this.update({ error: f.message });
      return;
    }
    // Anything but an error proves the server took our auth.
    const opened = this.snap.conn.status !== "open";
    if (opened) this.socket.resetBackoff();
    if (f.type === "state") {
      this.sawState = true;
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
  }

  private onClose(c: SocketClose): void {
    if (c.code === CLOSE_UNAUTHORIZED) {
      this.update({ conn: { status: "unauthorized" } });
    } else if (c.code === CLOSE_NOT_FOUND) {
      this.update(
        this.refusedAtStart !== null
          ? { conn: { status: "no_browser_tools", message: this.refusedAtStart }, error: null }
          : { conn: { status: "not_found" } },
      );
    } else if (c.retryInMs !== null) {
      this.update({ conn: { status: "lost", retryInMs: c.retryInMs, reason: closeReason(c) } });
    }
  }
}
