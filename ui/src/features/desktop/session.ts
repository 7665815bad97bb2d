// The Desktop pane's connection, free of React and of noVNC itself (both come in through
// factories) so it can be tested with the fake socket and a fake RFB: one socket per attempt,
// view-only until the person takes control, the desktop's clipboard kept for the pane, and an
// honest status. No automatic retry: the pane offers Reconnect.
//
// Close codes of `/sockets/vnc/{id}`: 4001 the key was refused; 4004 the conversation is unknown,
// or (after an error frame) the server has no desktop; 1011 (after an error frame) its VNC
// server does not answer; 1000 the VNC server ended the session.
import { socketUrl } from "../../api/client";
import { CLOSE_NOT_FOUND, CLOSE_UNAUTHORIZED, type SocketFactory } from "../../api/socket";
import { RfbChannel } from "./channel";

export type DesktopConn =
  | { status: "connecting" }
  | { status: "connected"; name: string | null }
  | { status: "disconnected"; reason: string }
  | { status: "no_desktop"; message: string };

export interface DesktopSnapshot {
  conn: DesktopConn;
  /** Mouse and keyboard stay in the pane (the default) until the person takes control. */
  viewOnly: boolean;
  /** The last text the desktop put on its clipboard, null before any. */
  clipboard: string | null;
}

/** The part of noVNC's RFB the session uses. */
export interface RfbLike {
  viewOnly: boolean;
  scaleViewport: boolean;
  disconnect(): void;
  clipboardPasteFrom(text: string): void;
  focus(): void;
  addEventListener(type: string, listener: (ev: Event) => void): void;
}

/** Makes an RFB showing the desktop in `target`, talking through `channel`. */
export type RfbFactory = (target: HTMLElement, channel: RfbChannel) => RfbLike;

export interface DesktopSessionOptions {
  baseUrl: string;
  sessionKey: string | null;
  conversationId: string;
  /** Where noVNC puts its canvas. */
  target: HTMLElement;
  onChange: (s: DesktopSnapshot) => void;
  /** noVNC, loaded on first use (it is big and only sandboxes have a desktop). */
  loadRfb: () => Promise<RfbFactory>;
  socketFactory?: SocketFactory;
}

/** What the status says after the socket closed with `code`, given the server's error frame. */
export function closedStatus(code: number, reason: string, error: string | null): DesktopConn {
  if (code === CLOSE_UNAUTHORIZED) return { status: "disconnected", reason: "The server refused the session key." };
  if (code === CLOSE_NOT_FOUND) {
    return error !== null ? { status: "no_desktop", message: error } : { status: "disconnected", reason: "The server does not know this conversation." };
  }
  if (error !== null) return { status: "disconnected", reason: error };
  if (reason) return { status: "disconnected", reason };
  return { status: "disconnected", reason: code === 1000 ? "The desktop session ended." : `The connection was lost (code ${code}).` };
}

/** The message of a server error frame `{"type":"error","message"}`, else null. */
export function errorMessage(text: string): string | null {
  try {
    const v = JSON.parse(text) as { type?: unknown; message?: unknown };
    return v.type === "error" && typeof v.message === "string" ? v.message : null;
  } catch {
    return null;
  }
}

export class DesktopSession {
  private rfb: RfbLike | null = null;
  private channel: RfbChannel | null = null;
  private generation = 0;
  private rfbRunning = false;
  private snap: DesktopSnapshot = { conn: { status: "connecting" }, viewOnly: true, clipboard: null };

  constructor(private readonly o: DesktopSessionOptions) {}

  get snapshot(): DesktopSnapshot {
    return this.snap;
  }

  /** Connects (again): any earlier connection is dropped first. */
  async start(): Promise<void> {
    const gen = ++this.generation;
    this.drop();
    this.update({ conn: { status: "connecting" } });
    let factory: RfbFactory;
    try {
      factory = await this.o.loadRfb();
    } catch (e) {
      if (gen === this.generation) this.update({ conn: { status: "disconnected", reason: `Cannot load the VNC viewer: ${String(e)}` } });
      return;
    }
    if (gen !== this.generation) return;
    this.connect(gen, factory);
  }

  /** Closes the connection for good (the pane went away). */
  stop(): void {
    this.generation++;
    this.drop();
  }

  /** View only (true) or the person's mouse and keyboard go to the desktop (false). */
  setViewOnly(viewOnly: boolean): void {
    if (this.rfb) {
      this.rfb.viewOnly = viewOnly;
      if (!viewOnly) this.rfb.focus();
    }
    this.update({ viewOnly });
  }

  /** Puts `text` on the desktop's clipboard; only while connected and in control. */
  paste(text: string): boolean {
    if (!this.rfb || this.snap.conn.status !== "connected" || this.snap.viewOnly) return false;
    this.rfb.clipboardPasteFrom(text);
    return true;
  }

  private update(patch: Partial<DesktopSnapshot>): void {
    this.snap = { ...this.snap, ...patch };
    this.o.onChange(this.snap);
  }

  /** Ends the current connection; its events no longer count (the generation moved on). */
  private drop(): void {
    const { rfb, channel } = this;
    this.rfb = null;
    this.channel = null;
    // noVNC closes the socket itself and hears its close; one that already ended, or never
    // started, leaves only the socket to close.
    if (rfb && this.rfbRunning) rfb.disconnect();
    else channel?.detach();
    this.rfbRunning = false;
  }

  private connect(gen: number, factory: RfbFactory): void {
    const url = socketUrl(this.o.baseUrl, `/sockets/vnc/${encodeURIComponent(this.o.conversationId)}`);
    let serverError: string | null = null;
    let closed = false;
    const live = () => gen === this.generation;
    const channel = new RfbChannel(
      { url, sessionKey: this.o.sessionKey, socketFactory: this.o.socketFactory },
      {
        onText: (text) => {
          const message = errorMessage(text);
          if (message !== null && live()) serverError = message;
        },
        onClose: (code, reason) => {
          closed = true;
          if (live()) this.update({ conn: closedStatus(code, reason, serverError) });
        },
      },
    );
    channel.connect();
    // A socket that could not be made has said why (onClose); noVNC would refuse a closed one.
    if (closed) return;
    this.channel = channel;
    let rfb: RfbLike;
    try {
      rfb = factory(this.o.target, channel);
    } catch (e) {
      channel.detach();
      this.channel = null;
      this.update({ conn: { status: "disconnected", reason: `The VNC viewer failed to start: ${String(e)}` } });
      return;
    }
    this.rfb = rfb;
    this.rfbRunning = true;
    rfb.viewOnly = this.snap.viewOnly;
    rfb.scaleViewport = true;
    rfb.addEventListener("connect", () => {
      if (live()) this.update({ conn: { status: "connected", name: null } });
    });
    rfb.addEventListener("desktopname", (ev) => {
      const name = (ev as CustomEvent<{ name?: string }>).detail?.name ?? null;
      if (live() && this.snap.conn.status === "connected") this.update({ conn: { status: "connected", name } });
    });
    rfb.addEventListener("clipboard", (ev) => {
      const text = (ev as CustomEvent<{ text?: string }>).detail?.text;
      if (live() && typeof text === "string") this.update({ clipboard: text });
    });
    rfb.addEventListener("securityfailure", (ev) => {
      const d = (ev as CustomEvent<{ status?: number; reason?: string }>).detail;
      serverError = `The VNC server refused the connection${d?.reason ? `: ${d.reason}` : ""}.`;
    });
    rfb.addEventListener("credentialsrequired", () => {
      // The sandbox's VNC server has no password (the socket's session key guards it).
      serverError = "The VNC server asks for a password; Tandem's desktop never has one.";
      rfb.disconnect();
    });
    rfb.addEventListener("disconnect", () => {
      if (!live()) return;
      this.rfbRunning = false;
      // The socket's close (handled above) says why; this covers noVNC ending it itself.
      if (!closed) this.update({ conn: { status: "disconnected", reason: serverError ?? "The desktop connection failed." } });
    });
  }
}
