// Wires an EventStream to the live store: events are collected and applied once per frame, so a
// burst (catch-up pages, fast tool output) costs one reducer pass and one render.
import { useEffect } from "react";
import { EventStream } from "../api/eventStream";
import type { SocketFactory } from "../api/socket";
import type { WireEvent } from "../api/types";
import { apiFor, type Backend } from "../features/backends/backendStore";
import { convKey, useLive } from "./live";

export function connectConversation(b: Backend, conversationId: string, socketFactory?: SocketFactory): () => void {
  const key = convKey(b.id, conversationId);
  const api = apiFor(b);
  const live = useLive.getState();
  let pending: WireEvent[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    const batch = pending;
    pending = [];
    if (batch.length) useLive.getState().dispatch(key, { type: "events", events: batch });
  };
  const stream = new EventStream({
    baseUrl: b.baseUrl,
    sessionKey: b.key,
    conversationId,
    fetchPage: (pageId) => api.searchEvents(conversationId, pageId),
    // Pending (unflushed) events count as seen: resume after the newest one we hold.
    lastSeenId: () => {
      flush();
      return useLive.getState().timelines[key]?.lastPersistedId ?? null;
    },
    onEvents: (events) => {
      pending.push(...events);
      if (!scheduled) {
        scheduled = true;
        if (typeof requestAnimationFrame === "function") requestAnimationFrame(flush);
        else setTimeout(flush, 16);
      }
    },
    onState: (s) => live.setStream(key, s),
    ...(socketFactory ? { socketFactory } : {}),
  });
  stream.start();
  const onOnline = () => stream.reconnectNow();
  window.addEventListener("online", onOnline);
  return () => {
    window.removeEventListener("online", onOnline);
    stream.stop();
    flush();
  };
}

/** Keeps the conversation's stream open while a component showing it is mounted. */
export function useConversationStream(b: Backend | null, conversationId: string | null): void {
  const baseUrl = b?.baseUrl;
  const keyValue = b?.key;
  useEffect(() => {
    if (!b || !conversationId) return;
    return connectConversation(b, conversationId);
    // Reconnect only when where or how we connect changes.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [b?.id, baseUrl, keyValue, conversationId]);
}
