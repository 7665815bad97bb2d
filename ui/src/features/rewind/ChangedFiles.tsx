import type { Checkpoint } from "../../api/tandemTypes";
import { changeSummary } from "./attribution";

const KINDS = [
  { key: "added", mark: "A", word: "added" },
  { key: "modified", mark: "M", word: "modified" },
  { key: "deleted", mark: "D", word: "deleted" },
] as const;

/**
 * What an action changed in the workspace, whatever its tool: one line ("changed 2 files: 1
 * added, 1 modified") that opens to the paths, each marked with its kind of change; what it
 * changed outside the workspace (an install in the home folder) is named, and said not
 * restorable where a rewind cannot take it back.
 */
export function ChangedFiles({ checkpoint, open = false }: { checkpoint: Checkpoint; /** Shown opened (the replay panel). */ open?: boolean }) {
  const summary = changeSummary(checkpoint);
  if (!summary) return null;
  return (
    <details className="changed-files" open={open}>
      <summary>{summary}</summary>
      <ul className="changed-paths" aria-label="Files this action changed">
        {KINDS.flatMap(({ key, mark, word }) =>
          (checkpoint[key] ?? []).map((path) => (
            <li key={`${key}:${path}`}>
              <span className={`change-${key}`} title={word} aria-label={word}>
                {mark}
              </span>{" "}
              <span className="mono">{path}</span>
            </li>
          )),
        )}
        {(checkpoint.outside ?? []).map((o) => (
          <li key={`outside:${o.path}`} className="outside-change">
            <span className={`change-${o.change}`} title={`${o.change}, outside the workspace`} aria-label={`${o.change}, outside the workspace`}>
              {o.change[0]?.toUpperCase()}
            </span>{" "}
            <span className="mono">{o.path}</span> <span className="hint">{o.restorable ? "outside the workspace" : "outside the workspace, not restorable"}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}
