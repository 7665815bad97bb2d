// Which files each action changed, read from the workspace's checkpoints, and where a rewind
// started from a timeline row goes. Pure functions: the timeline and its tests share them.
import type { Checkpoint } from "../../api/tandemTypes";
import type { TimelineItem } from "../../store/timeline";

/** The paths a checkpoint lists, by kind of change. */
export type PathLists = Pick<Checkpoint, "added" | "modified" | "deleted" | "outside">;

/** `1 file`, `3 files`. */
export function fileCount(n: number): string {
  return `${n} ${n === 1 ? "file" : "files"}`;
}

/** How many paths a checkpoint lists as added, modified or deleted. */
export function changeCount(c: PathLists): number {
  return (c.added?.length ?? 0) + (c.modified?.length ?? 0) + (c.deleted?.length ?? 0);
}

/**
 * The attribution line of an action: "changed 3 files: 1 added, 1 modified, 1 deleted",
 * naming only the kinds present; null when the checkpoint lists no change.
 */
export function changeSummary(c: PathLists): string | null {
  const total = changeCount(c);
  const outside = outsideSummary(c);
  if (total === 0) return outside ? `changed ${outside}` : null;
  const kinds: [number, string][] = [
    [c.added?.length ?? 0, "added"],
    [c.modified?.length ?? 0, "modified"],
    [c.deleted?.length ?? 0, "deleted"],
  ];
  const parts = kinds.filter(([n]) => n > 0).map(([n, word]) => `${n} ${word}`);
  const line = `changed ${fileCount(total)}: ${parts.join(", ")}`;
  return outside ? `${line}; and ${outside}` : line;
}

/** "2 paths outside the workspace (not restorable)", or null when there are none. */
function outsideSummary(c: PathLists): string | null {
  const all = c.outside ?? [];
  if (all.length === 0) return null;
  const lost = all.filter((o) => !o.restorable).length;
  const where = `${all.length} ${all.length === 1 ? "path" : "paths"} outside the workspace`;
  if (lost === 0) return where;
  return lost === all.length ? `${where} (not restorable)` : `${where} (${lost} not restorable)`;
}

/**
 * The agent's checkpoints that changed something, by the id of the ObservationEvent of the
 * action that made the changes. A person's and a rewind's checkpoints are not an action's doing.
 */
export function agentChangesByEvent(checkpoints: readonly Checkpoint[]): ReadonlyMap<string, Checkpoint> {
  const out = new Map<string, Checkpoint>();
  for (const c of checkpoints) if (c.author === "agent" && (changeCount(c) > 0 || (c.outside?.length ?? 0) > 0)) out.set(c.event_id, c);
  return out;
}

/** The id of the observation a row shows (an action's answer, or an answer whose action is gone). */
export function observationIdOf(item: TimelineItem): string | undefined {
  if (item.type === "action") return item.result?.kind === "ObservationEvent" ? item.result.id : undefined;
  if (item.type === "result") return item.event.kind === "ObservationEvent" ? item.id : undefined;
  return undefined;
}

/**
 * The event a "Rewind to here" on a row rewinds to: the row's last event, so an action with its
 * answer goes back to the workspace after the action ran.
 */
export function rewindEventIdOf(item: TimelineItem): string {
  return item.type === "action" && item.result ? item.result.id : item.id;
}

/** How many ObservationEvents the timeline holds: the checkpoint list may change when it grows. */
export function observationCount(items: readonly TimelineItem[]): number {
  let n = 0;
  for (const item of items) if (observationIdOf(item) !== undefined) n++;
  return n;
}
