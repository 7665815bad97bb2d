// A BrowserSession for the pane's lifetime. Frames bypass React: each one is written straight
// into the <img> (`attachImage`), so a 25 fps screencast does not re-render the pane; the
// snapshot (state, connection, refusals) changes rarely and is React state.
import { useCallback, useEffect, useRef, useState } from "react";
import type { SocketFactory } from "../../api/socket";
import type { Backend } from "../backends/backendStore";
import { BrowserSession, type BrowserSnapshot } from "./session";
import { frameSrc, type BrowserFrame } from "./wire";

export function useBrowserSession(backend: Pick<Backend, "baseUrl" | "key">, conversationId: string, socketFactory?: SocketFactory) {
  const [session, setSession] = useState<BrowserSession | null>(null);
  const [snap, setSnap] = useState<BrowserSnapshot | null>(null);
  const img = useRef<HTMLImageElement | null>(null);
  const latest = useRef<BrowserFrame | null>(null);

  useEffect(() => {
    latest.current = null;
    const s = new BrowserSession({
      baseUrl: backend.baseUrl,
      sessionKey: backend.key,
      conversationId,
      onChange: setSnap,
      onFrame: (f) => {
        latest.current = f;
        if (img.current) img.current.src = frameSrc(f);
      },
      ...(socketFactory ? { socketFactory } : {}),
    });
    setSession(s);
    setSnap(s.snapshot);
    s.start();
    return () => s.stop();
  }, [backend.baseUrl, backend.key, conversationId, socketFactory]);

  /** Ref callback for the live <img>: shows the latest frame as soon as it mounts. */
  const attachImage = useCallback((el: HTMLImageElement | null) => {
    img.current = el;
    if (el && latest.current) el.src = frameSrc(latest.current);
  }, []);

  return { session, snap, attachImage };
}
