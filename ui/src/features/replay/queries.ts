// What the panes showed as of an event, fetched from the server's replay routes. While the
// person scrubs, the previous answer stays on screen until the next one arrives (no flicker);
// answers are cached per event, so stepping back is instant.
import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useEffect, useState } from "react";
import type { Api } from "../../api/client";

export type ReplayApi = Pick<Api, "baseUrl" | "replay" | "replayFrame">;

export function useReplayState(api: ReplayApi, conversationId: string, eventId: string | null) {
  return useQuery({
    queryKey: ["replay", api.baseUrl, conversationId, eventId],
    queryFn: () => api.replay(conversationId, eventId ?? ""),
    enabled: eventId !== null,
    placeholderData: keepPreviousData,
    // A past event's panes do not change.
    staleTime: Infinity,
    retry: false,
    refetchOnWindowFocus: false,
  });
}

/**
 * An object URL of a recorded browser frame, or null before the first one is loaded; the
 * previous frame stays until the next is loaded, and each URL is revoked once replaced.
 */
export function useFrameUrl(api: ReplayApi, conversationId: string, frameId: string | null) {
  const query = useQuery({
    queryKey: ["replay-frame", api.baseUrl, conversationId, frameId],
    queryFn: () => api.replayFrame(conversationId, frameId ?? ""),
    enabled: frameId !== null,
    placeholderData: keepPreviousData,
    staleTime: Infinity,
    retry: false,
    refetchOnWindowFocus: false,
  });
  const blob = frameId === null ? undefined : query.data;
  const [url, setUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!blob) {
      setUrl(null);
      return;
    }
    const u = URL.createObjectURL(blob);
    setUrl(u);
    return () => URL.revokeObjectURL(u);
  }, [blob]);
  return { url, error: query.error };
}
