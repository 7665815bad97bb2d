import { useMemo } from "react";
import { lineDiff, withContext, type DiffLine } from "./lineDiff";

/** Diff rows of one file under a head with its path and counts; a null row is a gap. */
export function DiffView({ path, rows, note }: { path: string; rows: readonly (DiffLine | null)[]; note?: string | undefined }) {
  const added = rows.filter((r) => r?.op === "+").length;
  const removed = rows.filter((r) => r?.op === "-").length;
  return (
    <div className="diff" aria-label={`Changes to ${path}`}>
      <div className="diff-head">
        <span className="mono">{path}</span>
        <span className="diff-add">+{added}</span>
        <span className="diff-del">−{removed}</span>
      </div>
      {note && <div className="diff-gap">{note}</div>}
      {(rows.length > 0 || !note) && (
        <pre className="diff-body">
          {rows.map((r, i) =>
            r === null ? (
              <div key={i} className="diff-gap">⋯</div>
            ) : (
              <div key={i} className={r.op === "+" ? "diff-line add" : r.op === "-" ? "diff-line del" : "diff-line"}>
                <span className="diff-no">{r.oldNo ?? ""}</span>
                <span className="diff-no">{r.newNo ?? ""}</span>
                <span className="diff-op">{r.op}</span>
                {r.text}
              </div>
            ),
          )}
        </pre>
      )}
    </div>
  );
}

/** A compact unified view of a file edit (old_content → new_content). */
export function FileDiffView({ path, oldText, newText }: { path: string; oldText: string; newText: string }) {
  const rows = useMemo(() => withContext(lineDiff(oldText, newText)), [oldText, newText]);
  return <DiffView path={path} rows={rows} />;
}
