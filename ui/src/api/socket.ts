// One WebSocket to a Tandem server, the way every live pane talks to one (the event stream,
// the browser's live view, the desktop, the terminal): the session key goes in the first frame
// (never in the URL: logs, proxies, history), nothing from a superseded socket is reported (a
// generation guard), and a dropped connection comes back after a capped exponential backoff,
// unless the close code says retrying cannot help or the owner turned reconnecting off.
//
// What counts as "connected" is the owner's call (the server's first frame, a finished
// catch-up, the open itself), so the owner resets the backoff with `resetBackoff()`.

/** The server refused the session key (or none came within its auth timeout). */
export const CLOSE_UNAUTHORIZED = 4001;
/** The server does not know the conversation (or, after an error frame, lacks the feature). */
export const CLOSE_NOT_FOUND = 4004;
/** What a browser reports for a connection that ended without a close frame; also ours for a socket that could not be made. */
export const CLOSE_ABNORMAL = 1006;

/** A WebSocket's `readyState` values. */
export const CONNECTING = 0;
export const OPEN = 1;
export const CLOSING = 2;
export const CLOSED = 3;

/** The members of a browser WebSocket this module uses (a fake implements them in tests). */
export interface WebSocketLike {
  readyState: number;
  binaryType: string;
  send(data: string | ArrayBufferLike | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}
export type SocketFactory = (url: string) => WebSocketLike;

/** How a connection ended. */
export interface SocketClose {
  code: number;
  /** The server's reason (or why the socket could not be made); empty when there is none. */
  reason: string;
  /** When the next attempt starts; null when none follows (a final code, or reconnect is off). */
  retryInMs: number | null;
}

export interface AuthedSocketOptions {
  url: string;
  /** Sent as `{"type":"auth","session_api_key"}` once the socket opens; null: a server without keys. */
  sessionKey: string | null;
  /** Binary frames as ArrayBuffers (terminal output, RFB bytes); otherwise the browser's default. */
  binary?: boolean;
  /** Reconnect after a drop (the default). Off for an owner that offers its own Reconnect. */
  reconnect?: boolean;
  /** Close codes that end the connection for good: retrying cannot help. Default 4001 and 4004. */
  finalCodes?: readonly number[];
  /** Delay before reconnect attempt `n` (1-based, counted from the last `resetBackoff`). */
  backoffMs?: ((attempt: number) => number) | undefined;
  socketFactory?: SocketFactory | undefined;
  /** A new attempt begins (`attempt` counts from 1 since the last `resetBackoff`). */
  onConnecting?: (attempt: number) => void;
  /** The socket opened and the auth frame is out: the owner may send. */
  onOpen?: () => void;
  /** A frame: a string, or with `binary` an ArrayBuffer for binary frames. */
  onMessage: (data: unknown) => void;
  /** The browser's error event; a close with the code always follows. */
  onError?: (ev: unknown) => void;
  /** The connection ended (see `SocketClose.retryInMs` for what happens next). */
  onClose?: (close: SocketClose) => void;
}

const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 10_000;

/** 0.5 s, 1 s, 2 s, … up to 10 s. */
export const defaultBackoff = (attempt: number): number => Math.min(MAX_DELAY_MS, FIRST_DELAY_MS * 2 ** Math.min(Math.max(attempt, 1) - 1, 20));

const DEFAULT_FINAL_CODES = [CLOSE_UNAUTHORIZED, CLOSE_NOT_FOUND];
const browserSocket: SocketFactory = (url) => new WebSocket(url) as unknown as WebSocketLike;

/** The close's reason for a person: the server's, else the code. */
export function closeReason(c: Pick<SocketClose, "code" | "reason">): string {
  return c.reason || `socket closed (${c.code})`;
}

export class AuthedSocket {
  private ws: WebSocketLike | null = null;
  private gen = 0;
  private attempt = 0;
  private authed = false;
  /** Set by `close`/`end`: no reconnect follows. */
  private ended = false;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly o: AuthedSocketOptions) {}

  /** Moves on with every attempt and every socket forgotten; work begun for one connection checks it is still current. */
  get generation(): number {
    return this.gen;
  }

  /** The socket's state, held at "connecting" until the auth frame is out; closed when there is no socket. */
  get readyState(): number {
    if (!this.ws) return CLOSED;
    const s = this.ws.readyState;
    return s === OPEN && !this.authed ? CONNECTING : s;
  }

  /** Connects (a socket already up is forgotten first); later attempts follow by themselves unless reconnect is off. */
  connect(): void {
    this.ended = false;
    this.clearTimer();
    this.forget(1000, "reconnecting");
    this.attemptNow();
  }

  /** Sends a frame once the auth frame is out; returns whether it was sent. */
  send(data: string | ArrayBufferLike | ArrayBufferView): boolean {
    if (!this.ws || this.readyState !== OPEN) return false;
    this.ws.send(data);
    return true;
  }

  /** Sends `frame` as a JSON text frame; returns whether it was sent. */
  sendJson(frame: object): boolean {
    return this.send(JSON.stringify(frame));
  }

  /** The connection proved good: the next drop waits the first delay again. */
  resetBackoff(): void {
    this.attempt = 0;
  }

  /** Connects again at once (the person asked, or the network came back); the old socket is forgotten. */
  reconnectNow(): void {
    if (!this.ended) this.connect();
  }

  /**
   * The owner found the connection unusable (e.g. its catch-up failed): forgets it and connects
   * again after the backoff. Returns the wait, or null when the socket was closed.
   */
  restart(): number | null {
    if (this.ended) return null;
    this.clearTimer();
    this.forget(1000, "reconnecting");
    return this.scheduleReconnect();
  }

  /** Closes for good: no reconnect, and nothing more of this socket is reported. */
  close(code = 1000, reason = "client closed"): void {
    this.ended = true;
    this.clearTimer();
    this.forget(code, reason);
  }

  /**
   * Closes without reconnecting, but the close is still reported through `onClose` when it
   * arrives: for an owner (noVNC) that waits for it to finish disconnecting.
   */
  end(code = 1000, reason = "client closed"): void {
    this.ended = true;
    this.clearTimer();
    this.ws?.close(code, reason);
  }

  private attemptNow(): void {
    const gen = ++this.gen;
    this.attempt++;
    this.authed = false;
    this.o.onConnecting?.(this.attempt);
    let ws: WebSocketLike;
    try {
      ws = (this.o.socketFactory ?? browserSocket)(this.o.url);
    } catch (e) {
      this.closed(gen, CLOSE_ABNORMAL, e instanceof Error ? e.message : "cannot open the socket");
      return;
    }
    this.ws = ws;
    if (this.o.binary) ws.binaryType = "arraybuffer";
    ws.onopen = () => {
      if (gen !== this.gen) return;
      if (this.o.sessionKey) ws.send(JSON.stringify({ type: "auth", session_api_key: this.o.sessionKey }));
      this.authed = true;
      this.o.onOpen?.();
    };
    ws.onmessage = (ev) => {
      if (gen === this.gen) this.o.onMessage(ev.data);
    };
    ws.onerror = (ev) => {
      if (gen === this.gen) this.o.onError?.(ev);
    };
    ws.onclose = (ev) => this.closed(gen, ev.code, ev.reason);
  }

  private closed(gen: number, code: number, reason: string): void {
    if (gen !== this.gen) return;
    this.ws = null;
    this.authed = false;
    const final = this.ended || this.o.reconnect === false || (this.o.finalCodes ?? DEFAULT_FINAL_CODES).includes(code);
    const retryInMs = final ? null : this.scheduleReconnect();
    this.o.onClose?.({ code, reason, retryInMs });
  }

  private scheduleReconnect(): number {
    const wait = (this.o.backoffMs ?? defaultBackoff)(Math.max(1, this.attempt));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.attemptNow();
    }, wait);
    return wait;
  }

  /** Moves the generation on (the socket's events no longer count) and closes the socket if it is still up. */
  private forget(code: number, reason: string): void {
    this.gen++;
    const ws = this.ws;
    this.ws = null;
    this.authed = false;
    if (!ws) return;
    ws.onopen = null;
    ws.onmessage = null;
    ws.onerror = null;
    ws.onclose = null;
    if (ws.readyState === CONNECTING || ws.readyState === OPEN) ws.close(code, reason);
  }

  private clearTimer(): void {
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }
}
