// The sandbox's desktop, live (`/sockets/vnc/{id}` → noVNC): view-only until the person takes
// control, scaled to the pane, the desktop's clipboard to copy and a field to put text on it,
// an honest status, and Reconnect once it ends (no automatic retry: a desktop that went away
// rarely comes back by itself).
import { useCallback, useEffect, useRef, useState } from "react";
import type { SocketFactory } from "../../api/socket";
import type { Backend } from "../backends/backendStore";
import { DesktopSession, type DesktopConn, type DesktopSnapshot, type RfbFactory } from "./session";

/** noVNC, loaded when a Desktop pane first opens (ESM with top-level await; kept out of start-up). */
export async function loadNoVnc(): Promise<RfbFactory> {
  const { default: RFB } = await import("@novnc/novnc");
  return (target, channel) => new RFB(target, channel, { shared: true });
}

export function connLabel(c: DesktopConn): { text: string; tone: "ok" | "warn" | "bad" } {
  switch (c.status) {
    case "connecting":
      return { text: "connecting…", tone: "warn" };
    case "connected":
      return { text: c.name ? `connected: ${c.name}` : "connected", tone: "ok" };
    case "disconnected":
      return { text: "disconnected", tone: "bad" };
    case "no_desktop":
      return { text: "no desktop", tone: "warn" };
  }
}

export interface DesktopPaneProps {
  backend: Pick<Backend, "baseUrl" | "key">;
  conversationId: string;
  /** Tests put a fake noVNC and socket here. */
  loadRfb?: () => Promise<RfbFactory>;
  socketFactory?: SocketFactory;
}

export function DesktopPane({ backend, conversationId, loadRfb = loadNoVnc, socketFactory }: DesktopPaneProps) {
  const screen = useRef<HTMLDivElement>(null);
  const [session, setSession] = useState<DesktopSession | null>(null);
  const [snap, setSnap] = useState<DesktopSnapshot>({ conn: { status: "connecting" }, viewOnly: true, clipboard: null });
  const [outgoing, setOutgoing] = useState("");
  const [copied, setCopied] = useState(false);

  useEffect(() => {
    const target = screen.current;
    if (!target) return;
    const s = new DesktopSession({
      baseUrl: backend.baseUrl,
      sessionKey: backend.key,
      conversationId,
      target,
      onChange: setSnap,
      loadRfb,
      ...(socketFactory ? { socketFactory } : {}),
    });
    setSession(s);
    setSnap(s.snapshot);
    void s.start();
    return () => s.stop();
  }, [backend.baseUrl, backend.key, conversationId, loadRfb, socketFactory]);

  const { conn, viewOnly, clipboard } = snap;
  const connected = conn.status === "connected";
  const label = connLabel(conn);
  const copy = useCallback(() => {
    if (clipboard === null) return;
    void navigator.clipboard?.writeText(clipboard).then(() => setCopied(true), () => setCopied(false));
  }, [clipboard]);
  useEffect(() => setCopied(false), [clipboard]);

  return (
    <div className="desktop-pane">
      <div className="toolbar" role="toolbar" aria-label="Desktop">
        <span className={`driver driver-${viewOnly ? "none" : "person"}`} role="status" aria-label="Who controls the desktop">
          {viewOnly ? "View only" : "You control the desktop"}
        </span>
        <button
          type="button"
          className={viewOnly ? "" : "primary"}
          aria-pressed={!viewOnly}
          disabled={!connected}
          onClick={() => session?.setViewOnly(!viewOnly)}
          title={viewOnly ? "Send your mouse and keyboard to the desktop" : "Back to watching only"}
        >
          {viewOnly ? "Take control" : "Release"}
        </button>
        {(conn.status === "disconnected" || conn.status === "no_desktop") && (
          <button type="button" onClick={() => void session?.start()}>
            Reconnect
          </button>
        )}
        <span className={`conn conn-${label.tone}`}>
          <span className="dot" aria-hidden /> {label.text}
        </span>
      </div>
      <Status conn={conn} />
      <div
        ref={screen}
        className={`desktop-screen${viewOnly ? "" : " driving"}`}
        data-view-only={viewOnly}
        aria-label="The sandbox's desktop"
        hidden={conn.status === "no_desktop"}
      />
      <details className="desktop-clipboard">
        <summary>Clipboard</summary>
        <label>
          From the desktop
          <textarea className="mono" aria-label="The desktop's clipboard" readOnly rows={2} value={clipboard ?? ""} placeholder="Nothing copied on the desktop yet" />
        </label>
        <button type="button" disabled={clipboard === null} onClick={copy}>
          {copied ? "Copied" : "Copy"}
        </button>
        <form
          className="desktop-paste"
          onSubmit={(e) => {
            e.preventDefault();
            if (session?.paste(outgoing)) setOutgoing("");
          }}
        >
          <input
            aria-label="Text for the desktop's clipboard"
            placeholder={viewOnly ? "Take control to send text" : "Text to put on the desktop's clipboard"}
            value={outgoing}
            onChange={(e) => setOutgoing(e.target.value)}
          />
          <button type="submit" disabled={!connected || viewOnly || outgoing === ""}>
            Send to desktop
          </button>
        </form>
      </details>
    </div>
  );
}

/** Why there is no picture, when there is none. */
function Status({ conn }: { conn: DesktopConn }) {
  switch (conn.status) {
    case "connecting":
      return (
        <div className="hint desktop-status" role="status">
          Connecting to the desktop…
        </div>
      );
    case "connected":
      return null;
    case "disconnected":
      return (
        <div className="error-text desktop-status" role="alert">
          Disconnected: {conn.reason}
        </div>
      );
    case "no_desktop":
      return (
        <div className="empty live-empty" role="note">
          This server has no desktop. Only a Docker sandbox has one.
          <div className="hint">{conn.message}</div>
        </div>
      );
  }
}
