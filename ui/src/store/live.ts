// The one store of live event state: per conversation (keyed by backend and conversation id)
// the timeline state the pure reducer builds, and the honest state of its event stream.
// Server state that is fetched (conversation lists, files) lives in TanStack Query instead.
import { create } from "zustand";
import { useShallow } from "zustand/react/shallow";
import type { StreamState } from "../api/eventStream";
import { initialTimeline, timelineReducer, type TimelineInput, type TimelineState } from "./timeline";

export const convKey = (backendId: string, conversationId: string) => `${backendId}/${conversationId}`;

interface LiveStore {
  timelines: Record<string, TimelineState>;
  streams: Record<string, StreamState>;
  dispatch(key: string, input: TimelineInput): void;
  setStream(key: string, state: StreamState): void;
  forget(key: string): void;
}

export const useLive = create<LiveStore>()((set) => ({
  timelines: {},
  streams: {},
  dispatch: (key, input) =>
    set((s) => {
      const prev = s.timelines[key] ?? initialTimeline();
      const next = timelineReducer(prev, input);
      return next === prev ? s : { timelines: { ...s.timelines, [key]: next } };
    }),
  setStream: (key, state) => set((s) => ({ streams: { ...s.streams, [key]: state } })),
  forget: (key) =>
    set((s) => {
      const timelines = { ...s.timelines };
      const streams = { ...s.streams };
      delete timelines[key];
      delete streams[key];
      return { timelines, streams };
    }),
}));

const empty = initialTimeline();

export function useTimeline(key: string | null): TimelineState {
  return useLive((s) => (key ? s.timelines[key] : undefined) ?? empty);
}

export function useStreamState(key: string | null): StreamState | null {
  return useLive((s) => (key ? s.streams[key] : undefined) ?? null);
}

/** What the open event streams of a backend know now, per conversation id: status and cost
 * (`"<status>|<cost>"`), fresher than the polled conversation list. */
export function useLiveSummaries(backendId: string | null): Record<string, string> {
  return useLive(
    useShallow((s) => {
      const out: Record<string, string> = {};
      if (!backendId) return out;
      const prefix = `${backendId}/`;
      for (const [key, t] of Object.entries(s.timelines)) {
        if (key.startsWith(prefix) && t.status) out[key.slice(prefix.length)] = `${t.status}|${t.usage.cost}`;
      }
      return out;
    }),
  );
}
