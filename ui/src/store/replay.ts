// Where the replay is in a conversation's events: the selected index, whether it follows the
// newest event ("live"), and whether it plays. Pure (cursor, input, count) → cursor, so stepping,
// playing and live are tested without a server or a timer; the hook (features/replay/useReplay)
// owns the timer that sends `tick`.

/** Playback speeds: one event per 500 ms divided by the speed. */
export const SPEEDS = [1, 2, 4, 8] as const;
export type Speed = (typeof SPEEDS)[number];

/** How long one event is shown while playing at `speed`. */
export const tickMs = (speed: Speed) => 500 / speed;

export interface ReplayCursor {
  /** The selected event's index; ignored while `live`. */
  index: number;
  /** Pinned to the newest event, following new ones as they arrive. */
  live: boolean;
  playing: boolean;
  speed: Speed;
}

export type ReplayInput =
  /** The scrubber was moved, or a timeline row chosen. */
  | { type: "seek"; index: number }
  | { type: "step"; by: 1 | -1 }
  /** Pin to the newest event. */
  | { type: "live" }
  | { type: "play" }
  | { type: "pause" }
  | { type: "toggle-play" }
  | { type: "speed"; speed: Speed }
  /** The play timer fired: the next event. */
  | { type: "tick" };

export const initialCursor: ReplayCursor = { index: 0, live: true, playing: false, speed: 1 };

const clamp = (i: number, count: number) => Math.min(Math.max(0, Math.trunc(i)), count - 1);

/** The selected event's index among `count` events; -1 when there is none. */
export function cursorIndex(c: ReplayCursor, count: number): number {
  if (count <= 0) return -1;
  return c.live ? count - 1 : clamp(c.index, count);
}

export function replayStep(c: ReplayCursor, input: ReplayInput, count: number): ReplayCursor {
  const at = cursorIndex(c, count);
  switch (input.type) {
    case "seek":
      if (count <= 0) return c;
      return { ...c, index: clamp(input.index, count), live: false };
    case "step":
      // Stepping is looking closely: it stops playback.
      if (count <= 0) return { ...c, playing: false };
      return { ...c, index: clamp(at + input.by, count), live: false, playing: false };
    case "live":
      return { ...c, live: true, playing: false };
    case "play":
      if (count <= 1) return c;
      // Played to the end (or live): start again from the first event.
      return { ...c, index: at >= count - 1 ? 0 : at, live: false, playing: true };
    case "pause":
      return c.playing ? { ...c, playing: false } : c;
    case "toggle-play":
      return replayStep(c, { type: c.playing ? "pause" : "play" }, count);
    case "speed":
      return { ...c, speed: input.speed };
    case "tick": {
      if (!c.playing || count <= 0) return c;
      const next = clamp(at + 1, count);
      // The end stops playback there; it does not turn into live.
      return { ...c, index: next, live: false, playing: next < count - 1 };
    }
  }
}
