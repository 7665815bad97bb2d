// The socket noVNC talks through. `/sockets/vnc/{id}` wants a first-frame auth before any RFB
// byte, and it says why it refuses in a JSON text frame; noVNC knows neither. So noVNC gets
// this stand-in for a WebSocket (noVNC 1.4+ accepts any object with a WebSocket's members, see
// Websock.attach) over an `AuthedSocket` that never reconnects (the pane offers Reconnect, and
// each noVNC RFB wants a socket of its own): it looks "connecting" until the auth frame is out,
// passes binary frames through unbuffered, and hands text frames and the close code to the
// session instead.
import { AuthedSocket, type SocketFactory } from "../../api/socket";

/** Where the channel connects. */
export interface ChannelOptions {
  url: string;
  sessionKey: string | null;
  socketFactory?: SocketFactory | undefined;
}

/** What the channel reports to its owner, besides the RFB bytes it gives noVNC. */
export interface ChannelEvents {
  /** A text frame (the server's error frames). */
  onText(text: string): void;
  /** The socket closed (before noVNC hears of it), or could not be made. */
  onClose(code: number, reason: string): void;
}

export class RfbChannel {
  // noVNC sets these; they are own fields so its property check finds them.
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  private readonly socket: AuthedSocket;

  constructor(o: ChannelOptions, events: ChannelEvents) {
    this.socket = new AuthedSocket({
      url: o.url,
      sessionKey: o.sessionKey,
      socketFactory: o.socketFactory,
      binary: true,
      reconnect: false,
      onOpen: () => this.onopen?.({}),
      onMessage: (data) => {
        if (typeof data === "string") events.onText(data);
        else this.onmessage?.({ data });
      },
      onError: (ev) => this.onerror?.(ev),
      onClose: ({ code, reason }) => {
        events.onClose(code, reason);
        this.onclose?.({ code, reason });
      },
    });
  }

  /** Opens the socket; one that cannot be made is reported through `onClose` at once. */
  connect(): void {
    this.socket.connect();
  }

  /** The socket's state, held at "connecting" until the auth frame is out. */
  get readyState(): number {
    return this.socket.readyState;
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
    this.socket.send(data);
  }

  /** noVNC's close: it waits for the close event to finish disconnecting, so that still comes. */
  close(): void {
    this.socket.end(1000, "viewer closed");
  }

  /** Stops reporting anything (the session moved on); closes the socket. */
  detach(): void {
    this.socket.close(1000, "viewer closed");
  }
}
