import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Api } from "../../api/client";
import { ApiError } from "../../api/errors";
import type { Checkpoint } from "../../api/tandemTypes";
import { useSettled } from "../editor/useSettled";
import { agentChangesByEvent } from "./attribution";

export interface CheckpointsView {
  /**
   * The server keeps checkpoints of this conversation's workspace and there is one to rewind
   * to. False on a host without the route (an upstream OpenHands server answers 404), while the
   * first answer is awaited, and before the first action that is not read-only.
   */
  canRewind: boolean;
  /** The agent's changes, by the id of the observation of the action that made them. */
  byObservation: ReadonlyMap<string, Checkpoint>;
  /** Every checkpoint, oldest first (empty until answered, or on a host without them). */
  list: readonly Checkpoint[];
  /** Fetch the list again (after a rewind, which adds checkpoints without an event). */
  refresh(): void;
}

const NONE: ReadonlyMap<string, Checkpoint> = new Map();
const NO_LIST: readonly Checkpoint[] = [];

/** A route the host does not serve: asking again will not help. */
function unserved(e: unknown): boolean {
  return e instanceof ApiError && (e.status === 404 || e.status === 405);
}

/**
 * The checkpoints of a conversation's workspace: fetched when the conversation opens and again
 * when `observations` (the number of ObservationEvents) grows, debounced, with at most one
 * request in flight; a change that arrives during a request is fetched once it is answered.
 */
export function useCheckpoints(api: Api, conversationId: string, observations: number): CheckpointsView {
  const settled = useSettled(observations, 400);
  const [refreshes, setRefreshes] = useState(0);
  // What the list should reflect, and what the last request started from.
  const wanted = settled + refreshes;
  const wantedRef = useRef(wanted);
  wantedRef.current = wanted;
  const asked = useRef(-1);
  const query = useQuery({
    queryKey: ["checkpoints", api.baseUrl, conversationId],
    queryFn: () => {
      asked.current = wantedRef.current;
      return api.checkpoints(conversationId);
    },
    retry: false,
    refetchOnWindowFocus: false,
  });
  const served = !unserved(query.error);
  const { isFetching, refetch } = query;
  useEffect(() => {
    if (served && !isFetching && asked.current < wanted) void refetch({ cancelRefetch: false });
  }, [served, isFetching, wanted, refetch]);
  const checkpoints = query.data?.checkpoints;
  const byObservation = useMemo(() => (checkpoints ? agentChangesByEvent(checkpoints) : NONE), [checkpoints]);
  const refresh = useCallback(() => setRefreshes((n) => n + 1), []);
  return { canRewind: served && (checkpoints?.length ?? 0) > 0, byObservation, list: checkpoints ?? NO_LIST, refresh };
}
