// The live event stream of one conversation: `/sockets/events/{id}` with first-frame auth,
// automatic reconnect, and catch-up through `events/search` so a reconnect leaves no gap and
// delivers no duplicate.
//
// Why this order: the socket is opened first and its frames are buffered; once the server has
// answered the auth frame (its first frame, a state update, proves we are subscribed) the
// history since the last event we saw is paged in over REST, then the buffer is flushed. Any
// event appended while paging is in the buffer, any event before it is in the pages; the two
// can overlap, and ids that were already delivered are dropped here (and again by the reducer).
import { isEventLike, socketUrl } from "./client";
import { ApiError } from "./errors";
import type { WireEvent } from "./types";

export type StreamState =
  | { status: "connecting"; attempt: number }
  | { status: "syncing" }
  | { status: "connected" }
  | { status: "lost"; retryInMs: number; reason: string }
  | { status: "unauthorized" }
  | { status: "not_found" }
  | { status: "closed" };

/** The parts of the browser WebSocket this client uses (a fake implements them in tests). */
export interface SocketLike {
  readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}
export type SocketFactory = (url: string) => SocketLike;

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

const defaultBackoff = (n: number) => Math.min(10_000, 500 * 2 ** Math.min(n - 1, 5));
const browserSocket: SocketFactory = (url) => new WebSocket(url) as unknown as SocketLike;

export class EventStream {
  private socket: SocketLike | null = null;
  private stopped = false;
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private buffer: WireEvent[] | null = null;
  /** Ids delivered by this stream instance (bounded dedupe across catch-up and live frames). */
  private delivered = new Set<string>();
  private generation = 0;

  constructor(private readonly o: EventStreamOptions) {}

  start(): void {
    this.stopped = false;
    this.connect();
  }

  stop(): void {
    this.stopped = true;
    this.generation++;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const s = this.socket;
    this.socket = null;
    if (s) {
      s.onclose = null;
      s.onmessage = null;
      s.close(1000, "client closed");
    }
    this.o.onState({ status: "closed" });
  }

  /** Reconnect now (e.g. the person clicked "retry" or the network came back). */
  reconnectNow(): void {
    if (this.stopped) return;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    this.dropSocket();
    this.connect();
  }

  private dropSocket(): void {
    const s = this.socket;
    this.socket = null;
    if (s) {
      s.onclose = null;
      s.onmessage = null;
      s.onerror = null;
      s.close(1000, "reconnecting");
    }
  }

  private connect(): void {
    const gen = ++this.generation;
    this.attempt++;
    this.o.onState({ status: "connecting", attempt: this.attempt });
    const url = socketUrl(this.o.baseUrl, `/sockets/events/${encodeURIComponent(this.o.conversationId)}`);
    let socket: SocketLike;
    try {
      socket = (this.o.socketFactory ?? browserSocket)(url);
    } catch (e) {
      this.scheduleReconnect(e instanceof Error ? e.message : "cannot open socket");
      return;
    }
    this.socket = socket;
    this.buffer = [];
    let ready = false;

    socket.onopen = () => {
      // First-frame auth: the key never appears in a URL (logs, proxies, history).
      if (this.o.sessionKey) socket.send(JSON.stringify({ type: "auth", session_api_key: this.o.sessionKey }));
    };
    socket.onmessage = (msg) => {
      if (gen !== this.generation) return;
      const ev = parseFrame(msg.data);
      if (!ev) return;
      if (this.buffer) this.buffer.push(ev);
      else this.deliver([ev]);
      if (!ready) {
        ready = true;
        void this.catchUp(gen);
      }
    };
    socket.onerror = () => {
      // onclose follows with the code; nothing to do here.
    };
    socket.onclose = (ev) => {
      if (gen !== this.generation) return;
      this.socket = null;
      this.buffer = null;
      if (this.stopped) return;
      if (ev.code === 4001) {
        this.o.onState({ status: "unauthorized" });
        return;
      }
      if (ev.code === 4004) {
        this.o.onState({ status: "not_found" });
        return;
      }
      this.scheduleReconnect(ev.reason || `socket closed (${ev.code})`);
    };
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
        if (gen !== this.generation) return;
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
      this.attempt = 0;
      this.o.onState({ status: "connected" });
    } catch (e) {
      if (gen !== this.generation) return;
      // Catch-up failed (server restarting, 5xx): start over so nothing is missed.
      this.dropSocket();
      this.scheduleReconnect(e instanceof Error ? e.message : "catch-up failed");
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

  private scheduleReconnect(reason: string): void {
    if (this.stopped) return;
    const wait = (this.o.backoffMs ?? defaultBackoff)(Math.max(1, this.attempt));
    this.o.onState({ status: "lost", retryInMs: wait, reason });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (!this.stopped) this.connect();
    }, wait);
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
  return isEventLike(v) ? (v as WireEvent) : null;
}
