import { useEffect } from "react";
import type { Api } from "../../api/client";
import { infoQueuedAhead } from "./queue";

/** How often a waiting run's place is asked for. */
export const QUEUE_POLL_MS = 2000;

/**
 * While the open conversation's run waits for a slot, asks the server for its place every
 * `everyMs` and hands each answer to `onPlace`: the log records only entering and leaving the
 * queue, the place in between changes without an event. At most one request is in flight.
 */
export function useQueuePlace(
  api: Pick<Api, "getConversation">,
  conversationId: string,
  queued: boolean,
  onPlace: (ahead: number) => void,
  everyMs = QUEUE_POLL_MS,
): void {
  useEffect(() => {
    if (!queued) return;
    let mounted = true;
    let asking = false;
    const timer = setInterval(() => {
      if (asking) return;
      asking = true;
      api
        .getConversation(conversationId)
        .then((info) => {
          const ahead = infoQueuedAhead(info);
          if (mounted && ahead !== null) onPlace(ahead);
        })
        // The next tick asks again; the event stream says when the run gets its slot.
        .catch(() => undefined)
        .finally(() => {
          asking = false;
        });
    }, everyMs);
    return () => {
      mounted = false;
      clearInterval(timer);
    };
  }, [api, conversationId, queued, onPlace, everyMs]);
}
