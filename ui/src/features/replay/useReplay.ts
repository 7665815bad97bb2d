// The replay of one conversation: on or off, the cursor (store/replay), the play timer, and the
// keys (ArrowLeft/ArrowRight step, Space play/pause, Home the first event, End live) while it is on.
import { useCallback, useEffect, useRef, useState } from "react";
import { cursorIndex, initialCursor, replayStep, tickMs, type ReplayCursor, type ReplayInput } from "../../store/replay";
import { setReplayKeyHandler } from "../../shell/shortcuts";

export interface ReplayView {
  on: boolean;
  toggle(): void;
  cursor: ReplayCursor;
  /** The selected event's index among `count`; -1 when off or with no events. */
  index: number;
  send(input: ReplayInput): void;
}

const KEY_INPUTS: Record<string, ReplayInput> = {
  ArrowLeft: { type: "step", by: -1 },
  ArrowRight: { type: "step", by: 1 },
  " ": { type: "toggle-play" },
  Home: { type: "seek", index: 0 },
  End: { type: "live" },
};

/** `count`: how many events the replay steps through (it may grow while it is on); `startOn`:
 * on from the start (a replay link). */
export function useReplay(count: number, startOn = false): ReplayView {
  const [on, setOn] = useState(startOn);
  const [cursor, setCursor] = useState<ReplayCursor>(initialCursor);
  // The timer and the keys read the count when they fire, not when they were set up.
  const countRef = useRef(count);
  countRef.current = count;
  const send = useCallback((input: ReplayInput) => setCursor((c) => replayStep(c, input, countRef.current)), []);
  // Each time it is turned on, it starts at the newest event.
  const toggle = useCallback(() => {
    setOn((was) => !was);
    setCursor(initialCursor);
  }, []);

  const { playing, speed } = cursor;
  useEffect(() => {
    if (!on || !playing) return;
    const timer = setInterval(() => send({ type: "tick" }), tickMs(speed));
    return () => clearInterval(timer);
  }, [on, playing, speed, send]);

  useEffect(() => {
    if (!on) return;
    setReplayKeyHandler((key) => {
      const input = KEY_INPUTS[key];
      if (!input) return false;
      send(input);
      return true;
    });
    return () => setReplayKeyHandler(null);
  }, [on, send]);

  return { on, toggle, cursor, index: on ? cursorIndex(cursor, count) : -1, send };
}
