// The socket noVNC talks through. `/sockets/vnc/{id}` wants a first-frame auth before any RFB
// byte, and it says why it refuses in a JSON text frame; noVNC knows neither. So noVNC gets
// this stand-in for a WebSocket (noVNC 1.4+ accepts any object with a WebSocket's members, see
// Websock.attach): it looks "connecting" until the auth frame is out, passes binary frames
// through unbuffered, and hands text frames and the close code to the session instead.

/** The members of a browser WebSocket the channel uses. */
export interface RawSocket {
  readyState: number;
  binaryType: string;
  send(data: string | ArrayBufferLike | ArrayBufferView): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

/** What the channel reports to its owner, besides the RFB bytes it gives noVNC. */
export interface ChannelEvents {
  /** The socket opened and the auth frame was sent. */
  onOpen(): void;
  /** A text frame (the server's error frames). */
  onText(text: string): void;
  /** The socket closed (before noVNC hears of it). */
  onClose(code: number, reason: string): void;
}

const CONNECTING = 0;
const OPEN = 1;

export class RfbChannel {
  // noVNC sets these; they are own fields so its property check finds them.
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  private authed = false;

  constructor(
    private readonly socket: RawSocket,
    sessionKey: string | null,
    events: ChannelEvents,
  ) {
    socket.binaryType = "arraybuffer";
    socket.onopen = () => {
      // The key goes in the first frame, never in the URL.
      if (sessionKey) socket.send(JSON.stringify({ type: "auth", session_api_key: sessionKey }));
      this.authed = true;
      events.onOpen();
      this.onopen?.({});
    };
    socket.onmessage = (ev) => {
      if (typeof ev.data === "string") events.onText(ev.data);
      else this.onmessage?.({ data: ev.data });
    };
    socket.onerror = (ev) => this.onerror?.(ev);
    socket.onclose = (ev) => {
      events.onClose(ev.code, ev.reason);
      this.onclose?.(ev);
    };
  }

  /** The socket's state, held at "connecting" until the auth frame is out. */
  get readyState(): number {
    const s = this.socket.readyState;
    return s === OPEN && !this.authed ? CONNECTING : s;
  }

  get protocol(): string {
    return "";
  }

  get binaryType(): string {
    return "arraybuffer";
  }

  set binaryType(_type: string) {
    // Always array buffers: text frames are the server's, not noVNC's.
  }

  send(data: string | ArrayBufferLike | ArrayBufferView): void {
    if (this.socket.readyState === OPEN) this.socket.send(data);
  }

  close(): void {
    this.socket.close(1000, "viewer closed");
  }

  /** Stops reporting anything (the session moved on); closes the socket. */
  detach(): void {
    this.socket.onopen = null;
    this.socket.onmessage = null;
    this.socket.onerror = null;
    this.socket.onclose = null;
    if (this.socket.readyState === CONNECTING || this.socket.readyState === OPEN) this.socket.close(1000, "viewer closed");
  }
}
