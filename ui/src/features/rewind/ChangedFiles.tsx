import type { Checkpoint } from "../../api/tandemTypes";
import { changeSummary } from "./attribution";

const KINDS = [
  { key: "added", mark: "A", word: "added" },
  { key: "modified", mark: "M", word: "modified" },
  { key: "deleted", mark: "D", word: "deleted" },
] as const;

/**
 * What an action changed in the workspace, whatever its tool: one line ("changed 2 files: 1
 * added, 1 modified") that opens to the paths, each marked with its kind of change.
 */
export function ChangedFiles({ checkpoint }: { checkpoint: Checkpoint }) {
  const summary = changeSummary(checkpoint);
  if (!summary) return null;
  return (
    <details className="changed-files">
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
      </ul>
    </details>
  );
}
