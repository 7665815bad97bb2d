// The live event stream of one conversation: `/sockets/events/{id}` (an `AuthedSocket`: first-frame
// auth, reconnect with backoff) with catch-up through `events/search` so a reconnect leaves no
// gap and delivers no duplicate.
//
// Why this order: the socket is opened first and its frames are buffered; once the server has
// answered the auth frame (its first frame, a state update, proves we are subscribed) the
// history since the last event we saw is paged in over REST, then the buffer is flushed. Any
// event appended while paging is in the buffer, any event before it is in the pages; the two
// can overlap, and ids that were already delivered are dropped here (and again by the reducer).
import { isEventLike, socketUrl } from "./client";
import { ApiError } from "./errors";
import { AuthedSocket, CLOSE_NOT_FOUND, CLOSE_UNAUTHORIZED, closeReason, type SocketClose, type SocketFactory } from "./socket";
import type { WireEvent } from "./types";

export type StreamState =
  | { status: "connecting"; attempt: number }
  | { status: "syncing" }
  | { status: "connected" }
  | { status: "lost"; retryInMs: number; reason: string }
  | { status: "unauthorized" }
  | { status: "not_found" }
  | { status: "closed" };

export interface EventStreamOptions {
  baseUrl: string;
  sessionKey: string | null;
  conversationId: string;
  /** One page of `events/search` starting at `pageId` (inclusive), oldest first. */
  fetchPage: (pageId?: string) => Promise<{ items: WireEvent[]; next_page_id: string | null }>;
  /** Where to resume: the last persisted event id already applied (null: from the start). */
  lastSeenId: () => string | null;
  onEvents: (events: WireEvent[]) => void;
  onState: (state: StreamState) => void;
  socketFactory?: SocketFactory;
  /** Delay before reconnect attempt `n` (1-based). */
  backoffMs?: (attempt: number) => number;
}

/** How often a long catch-up hands its pages on to the timeline. */
const CATCH_UP_FLUSH_MS = 250;

export class EventStream {
  private readonly socket: AuthedSocket;
  /** Frames of the current connection held back until its catch-up is done; null: deliver at once. */
  private buffer: WireEvent[] | null = null;
  /** Whether the current connection has had its first frame (which starts the catch-up). */
  private ready = false;
  /** Ids delivered by this stream instance (bounded dedupe across catch-up and live frames). */
  private delivered = new Set<string>();

  constructor(private readonly o: EventStreamOptions) {
    this.socket = new AuthedSocket({
      url: socketUrl(o.baseUrl, `/sockets/events/${encodeURIComponent(o.conversationId)}`),
      sessionKey: o.sessionKey,
      socketFactory: o.socketFactory,
      backoffMs: o.backoffMs,
      onConnecting: (attempt) => {
        this.buffer = [];
        this.ready = false;
        this.o.onState({ status: "connecting", attempt });
      },
      onMessage: (data) => this.onFrame(data),
      onClose: (c) => this.onClose(c),
    });
  }

  start(): void {
    this.socket.connect();
  }

  stop(): void {
    this.socket.close(1000, "client closed");
    this.o.onState({ status: "closed" });
  }

  /** Reconnect now (e.g. the person clicked "retry" or the network came back). */
  reconnectNow(): void {
    this.socket.reconnectNow();
  }

  private onFrame(data: unknown): void {
    const ev = parseFrame(data);
    if (!ev) return;
    if (this.buffer) this.buffer.push(ev);
    else this.deliver([ev]);
    if (!this.ready) {
      this.ready = true;
      void this.catchUp(this.socket.generation);
    }
  }

  private onClose(c: SocketClose): void {
    this.buffer = null;
    if (c.code === CLOSE_UNAUTHORIZED) this.o.onState({ status: "unauthorized" });
    else if (c.code === CLOSE_NOT_FOUND) this.o.onState({ status: "not_found" });
    else if (c.retryInMs !== null) this.o.onState({ status: "lost", retryInMs: c.retryInMs, reason: closeReason(c) });
  }

  private async catchUp(gen: number): Promise<void> {
    this.o.onState({ status: "syncing" });
    try {
      const anchor = this.o.lastSeenId();
      let pageId: string | undefined = anchor ?? undefined;
      let first = true;
      let held: WireEvent[] = [];
      let flushedOnce = false;
      let lastFlush = 0;
      for (;;) {
        let page: { items: WireEvent[]; next_page_id: string | null };
        try {
          page = await this.o.fetchPage(pageId);
        } catch (e) {
          // A server that rejects the anchor as a page id (unknown id → 4xx): replay from the start.
          const kind = e instanceof ApiError ? e.kind : null;
          if (first && pageId !== undefined && (kind === "invalid" || kind === "not_found")) {
            pageId = undefined;
            first = false;
            continue;
          }
          throw e;
        }
        if (gen !== this.socket.generation) return;
        let items = page.items;
        if (first && anchor) {
          // The page starts at the anchor itself; if it does not, the server does not know
          // that id (history rewritten, other server): replay everything, dedupe drops repeats.
          if (items[0]?.id === anchor) items = items.slice(1);
          else if (pageId !== undefined) {
            pageId = undefined;
            first = false;
            continue;
          }
        }
        first = false;
        // The first page shows at once; later pages are handed on in batches (every
        // CATCH_UP_FLUSH_MS), so a long history costs a few renders, not one per page.
        held.push(...items);
        if (!flushedOnce || Date.now() - lastFlush >= CATCH_UP_FLUSH_MS) {
          this.deliver(held);
          held = [];
          flushedOnce = true;
          lastFlush = Date.now();
        }
        if (!page.next_page_id) break;
        pageId = page.next_page_id;
      }
      this.deliver(held);
      const buffered = this.buffer ?? [];
      this.buffer = null;
      this.deliver(buffered);
      this.socket.resetBackoff();
      this.o.onState({ status: "connected" });
    } catch (e) {
      if (gen !== this.socket.generation) return;
      // Catch-up failed (server restarting, 5xx): start over so nothing is missed.
      const wait = this.socket.restart();
      if (wait !== null) this.o.onState({ status: "lost", retryInMs: wait, reason: e instanceof Error ? e.message : "catch-up failed" });
    }
  }

  private deliver(events: WireEvent[]): void {
    const fresh = events.filter((e) => {
      const id = e.id;
      if (!id || this.delivered.has(id)) return false;
      this.delivered.add(id);
      return true;
    });
    if (fresh.length > 0) this.o.onEvents(fresh);
  }
}

/** One socket frame → an event, or null for anything else (pings, garbage, non-events). */
export function parseFrame(data: unknown): WireEvent | null {
  if (typeof data !== "string") return null;
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    return null;
  }
  // Boundary: untrusted JSON becomes a WireEvent once it has an id and a kind.
  return isEventLike(v) ? v : null;
}
