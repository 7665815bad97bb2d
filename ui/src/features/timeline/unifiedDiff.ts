// A unified diff (git's `diff --git` text, e.g. a rewind's preview) read into rows the timeline's
// diff view shows, one block per file; a hunk boundary becomes a gap (null), like `withContext`.
import type { DiffLine } from "./lineDiff";

export interface UnifiedFileDiff {
  path: string;
  rows: (DiffLine | null)[];
  /** What git says instead of lines (a binary file). */
  note?: string;
}

/** `a/src/x.ts` → `src/x.ts`; quoted names (git quotes unusual characters) lose their quotes. */
function headerPath(raw: string): string {
  const p = raw.trim().replace(/^"(.*)"$/, "$1");
  return p.replace(/^[ab]\//, "");
}

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

export function parseUnifiedDiff(text: string): UnifiedFileDiff[] {
  const files: UnifiedFileDiff[] = [];
  let file: UnifiedFileDiff | null = null;
  let oldNo = 0;
  let newNo = 0;
  let inHunk = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("diff --git ")) {
      // The b/ side names the file unless a later `+++` line says better.
      const names = line.slice("diff --git ".length);
      const b = names.lastIndexOf(" b/");
      file = { path: headerPath(b >= 0 ? names.slice(b + 1) : names), rows: [] };
      files.push(file);
      inHunk = false;
      continue;
    }
    if (!file) continue;
    const hunk = HUNK.exec(line);
    if (hunk) {
      oldNo = Number(hunk[1]) - 1;
      newNo = Number(hunk[2]) - 1;
      // A gap before every hunk that does not start the file.
      if (file.rows.length > 0 || oldNo > 0 || newNo > 0) file.rows.push(null);
      inHunk = true;
      continue;
    }
    if (!inHunk) {
      if (line.startsWith("+++ ") && !line.startsWith("+++ /dev/null")) file.path = headerPath(line.slice(4));
      else if (line.startsWith("--- ") && line !== "--- /dev/null" && !file.path) file.path = headerPath(line.slice(4));
      else if (line.startsWith("Binary files ")) file.note = "Binary file: not shown.";
      continue;
    }
    if (line.startsWith("+")) file.rows.push({ op: "+", text: line.slice(1), newNo: ++newNo });
    else if (line.startsWith("-")) file.rows.push({ op: "-", text: line.slice(1), oldNo: ++oldNo });
    else if (line.startsWith(" ")) file.rows.push({ op: " ", text: line.slice(1), oldNo: ++oldNo, newNo: ++newNo });
    // "\ No newline at end of file" and the text's final empty line carry no row.
  }
  return files;
}
