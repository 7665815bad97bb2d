import { useEffect, useState } from "react";

/**
 * `value` once it has stopped changing for `ms`. The editor refreshes the file tree and the
 * Changes diff when events arrive; catching up a long conversation delivers a batch of events
 * a frame, which would otherwise send a tree request (and a diff request) for each batch.
 */
export function useSettled<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}
