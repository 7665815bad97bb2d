// The workspace tree from the server's flat, depth-first entry list. Directories fold; keyboard:
// arrows move, Enter opens or folds.
import { useMemo, useState } from "react";
import type { WorkspaceEntry } from "../../api/workspaceTypes";

interface Row {
  entry: WorkspaceEntry;
  depth: number;
  name: string;
  parent: string;
}

export function FileTree({ entries, openPath, onOpen }: { entries: WorkspaceEntry[]; openPath: string | null; onOpen(path: string): void }) {
  const [folded, setFolded] = useState<ReadonlySet<string>>(() => new Set());
  const rows = useMemo(() => {
    const out: Row[] = [];
    for (const entry of entries) {
      const parts = entry.path.split("/");
      const parent = parts.slice(0, -1).join("/");
      // Hidden when any ancestor is folded.
      let hidden = false;
      for (let i = 1; i < parts.length && !hidden; i++) if (folded.has(parts.slice(0, i).join("/"))) hidden = true;
      if (!hidden) out.push({ entry, depth: parts.length - 1, name: parts[parts.length - 1] ?? entry.path, parent });
    }
    return out;
  }, [entries, folded]);

  const toggle = (p: string) =>
    setFolded((f) => {
      const n = new Set(f);
      if (n.has(p)) n.delete(p);
      else n.add(p);
      return n;
    });

  return (
    <ul className="file-tree" role="tree" aria-label="Workspace files">
      {rows.map((r) => {
        const dir = r.entry.kind === "dir";
        return (
          <li
            key={r.entry.path}
            role="treeitem"
            aria-expanded={dir ? !folded.has(r.entry.path) : undefined}
            aria-selected={openPath === r.entry.path}
            tabIndex={0}
            className={`${dir ? "dir" : "file"}${openPath === r.entry.path ? " selected" : ""}`}
            style={{ paddingLeft: 8 + r.depth * 12 }}
            onClick={() => (dir ? toggle(r.entry.path) : onOpen(r.entry.path))}
            onKeyDown={(e) => {
              if (e.key === "Enter") dir ? toggle(r.entry.path) : onOpen(r.entry.path);
              else if (e.key === "ArrowDown") (e.currentTarget.nextElementSibling as HTMLElement | null)?.focus();
              else if (e.key === "ArrowUp") (e.currentTarget.previousElementSibling as HTMLElement | null)?.focus();
              else return;
              e.preventDefault();
            }}
          >
            <span className="tree-icon" aria-hidden>
              {dir ? (folded.has(r.entry.path) ? "▸" : "▾") : "·"}
            </span>
            {r.name}
          </li>
        );
      })}
    </ul>
  );
}
