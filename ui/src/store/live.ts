// The one store of live event state: per conversation (keyed by backend and conversation id)
// the timeline state the pure reducer builds, and the honest state of its event stream.
// Server state that is fetched (conversation lists, files) lives in TanStack Query instead.
import { create } from "zustand";
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
