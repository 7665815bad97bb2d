// xterm.js on the server's PTY socket (`/sockets/pty/{id}`, an `AuthedSocket`): attach to the
// agent's own shell (see its commands live and type into it) or open a separate shell
// (`?mode=shell`). DOM renderer (WebGL janks on WebKitGTK). Frames: first `{"type":"auth"}`, then
// the server sends output bytes; we send `{"type":"input","data"}` and
// `{"type":"resize","rows","cols"}`. Reconnects with backoff on any close but 4001.
import { FitAddon } from "@xterm/addon-fit";
import { WebLinksAddon } from "@xterm/addon-web-links";
import { Terminal } from "@xterm/xterm";
import "@xterm/xterm/css/xterm.css";
import { useEffect, useRef, useState } from "react";
import { socketUrl } from "../../api/client";
import { AuthedSocket, CLOSE_NOT_FOUND, CLOSE_UNAUTHORIZED } from "../../api/socket";
import { terminalFont } from "./font";
import type { Backend } from "../backends/backendStore";

type Mode = "agent" | "shell";

/** Text frames are either output or `{"type":"error","detail"}` from the server: show errors in red. */
function textFrame(data: string): string {
  if (data.startsWith("{")) {
    try {
      const f = JSON.parse(data) as { type?: unknown; detail?: unknown };
      if (f.type === "error") return `\r\n\x1b[31m[terminal] ${String(f.detail ?? "error")}\x1b[0m\r\n`;
    } catch {
      // Not JSON: plain output that starts with a brace.
    }
  }
  return data;
}
type Conn = "connecting" | "open" | "closed" | "unauthorized" | "not found";

function themeColors(): { background: string; foreground: string; cursor: string } {
  const s = getComputedStyle(document.documentElement);
  return {
    background: s.getPropertyValue("--term-bg").trim() || "#111",
    foreground: s.getPropertyValue("--term-fg").trim() || "#ddd",
    cursor: s.getPropertyValue("--accent").trim() || "#6af",
  };
}

export function TerminalPane({ backend, conversationId }: { backend: Backend; conversationId: string }) {
  const [mode, setMode] = useState<Mode>("agent");
  const [conn, setConn] = useState<Conn>("connecting");
  const host = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const term = new Terminal({
      fontFamily: terminalFont(getComputedStyle(document.documentElement)),
      fontSize: 13,
      cursorBlink: true,
      scrollback: 5000,
      theme: themeColors(),
      allowProposedApi: false,
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.loadAddon(new WebLinksAddon((_e, uri) => window.open(uri, "_blank", "noopener")));
    term.open(el);
    fit.fit();

    // Copy/paste: Ctrl+Shift+C / Ctrl+Shift+V (plain Ctrl+C must reach the shell).
    term.attachCustomKeyEventHandler((e) => {
      if (e.type !== "keydown" || !e.ctrlKey || !e.shiftKey) return true;
      if (e.code === "KeyC") {
        void navigator.clipboard?.writeText(term.getSelection());
        return false;
      }
      if (e.code === "KeyV") {
        void navigator.clipboard?.readText().then((t) => term.paste(t));
        return false;
      }
      return true;
    });

    const path = `/sockets/pty/${encodeURIComponent(conversationId)}${mode === "shell" ? "?mode=shell" : ""}`;
    const socket: AuthedSocket = new AuthedSocket({
      url: socketUrl(backend.baseUrl, path),
      sessionKey: backend.key,
      binary: true,
      // A refused key and an unknown conversation end it (the default final codes); a drop retries.
      onConnecting: () => setConn("connecting"),
      onOpen: () => {
        socket.resetBackoff();
        socket.sendJson({ type: "resize", rows: term.rows, cols: term.cols });
        setConn("open");
      },
      onMessage: (data) => {
        if (data instanceof ArrayBuffer) term.write(new Uint8Array(data));
        else if (typeof data === "string") term.write(textFrame(data));
      },
      onClose: (c) => setConn(c.code === CLOSE_UNAUTHORIZED ? "unauthorized" : c.code === CLOSE_NOT_FOUND ? "not found" : "closed"),
    });
    socket.connect();

    const onData = term.onData((data) => socket.sendJson({ type: "input", data }));
    const onResize = term.onResize(({ rows, cols }) => socket.sendJson({ type: "resize", rows, cols }));
    const ro = new ResizeObserver(() => {
      try {
        fit.fit();
      } catch {
        // Hidden pane (zero size): nothing to fit.
      }
    });
    ro.observe(el);

    return () => {
      ro.disconnect();
      onData.dispose();
      onResize.dispose();
      socket.close(1000, "client closed");
      term.dispose();
    };
  }, [backend.baseUrl, backend.key, conversationId, mode]);

  return (
    <div className="terminal-pane">
      <div className="toolbar">
        <div role="radiogroup" aria-label="Terminal">
          <button type="button" role="radio" aria-checked={mode === "agent"} className={`tab${mode === "agent" ? " on" : ""}`} onClick={() => setMode("agent")}>
            Agent's shell
          </button>
          <button type="button" role="radio" aria-checked={mode === "shell"} className={`tab${mode === "shell" ? " on" : ""}`} onClick={() => setMode("shell")}>
            My shell
          </button>
        </div>
        <span className={`conn conn-${conn === "open" ? "ok" : conn === "connecting" ? "warn" : "bad"}`}>
          <span className="dot" aria-hidden />
          {conn === "open" ? "attached" : conn === "connecting" ? "connecting…" : conn === "unauthorized" ? "unauthorized" : conn === "not found" ? "no such conversation on this server" : "disconnected — retrying"}
        </span>
        <span className="hint">Ctrl+Shift+C / V to copy / paste</span>
      </div>
      <div className="xterm-host" ref={host} data-autofocus tabIndex={-1} onFocus={() => host.current?.querySelector<HTMLElement>("textarea")?.focus()} />
    </div>
  );
}
