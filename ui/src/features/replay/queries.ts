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
 * An object URL of a recorded browser frame and the frame's id, or null before the first one is
 * loaded; the previous frame stays until the next is loaded, and each URL is revoked once
 * replaced.
 */
export function useFrameUrl(api: ReplayApi, conversationId: string, frameId: string | null) {
  const query = useQuery({
    queryKey: ["replay-frame", api.baseUrl, conversationId, frameId],
    queryFn: async () => ({ id: frameId ?? "", blob: await api.replayFrame(conversationId, frameId ?? "") }),
    enabled: frameId !== null,
    placeholderData: keepPreviousData,
    staleTime: Infinity,
    retry: false,
    refetchOnWindowFocus: false,
  });
  const data = frameId === null ? undefined : query.data;
  // The URL with the frame it shows (the previous one while the next loads).
  const [shown, setShown] = useState<{ url: string; id: string } | null>(null);
  useEffect(() => {
    if (!data) {
      setShown(null);
      return;
    }
    const u = URL.createObjectURL(data.blob);
    setShown({ url: u, id: data.id });
    return () => URL.revokeObjectURL(u);
  }, [data]);
  return { url: shown?.url ?? null, shownId: shown?.id ?? null, error: query.error };
}
