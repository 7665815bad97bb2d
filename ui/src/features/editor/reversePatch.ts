// The "Changes" view needs both sides of each file for Monaco's diff editor, but the server
// sends the current file and a unified diff against the conversation's baseline. Reverse-applying
// the diff to the current text gives the baseline. Returns null when the diff does not fit the
// text (the file changed again since the diff was computed); the caller then shows the raw diff.

export function reversePatch(current: string, unified: string): string | null {
  const cur = current.split("\n");
  const out: string[] = [];
  let ci = 0; // next line of `cur` not yet copied
  const lines = unified.split("\n");
  let i = 0;
  while (i < lines.length) {
    const h = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(lines[i] ?? "");
    i++;
    if (!h) continue;
    const newStart = Number(h[3]);
    const newCount = h[4] === undefined ? 1 : Number(h[4]);
    // Lines before the hunk are unchanged.
    const upto = newCount === 0 ? newStart : newStart - 1;
    if (upto < ci || upto > cur.length) return null;
    while (ci < upto) out.push(cur[ci++] ?? "");
    while (i < lines.length && !(lines[i] ?? "").startsWith("@@")) {
      const l = lines[i] ?? "";
      i++;
      if (l.startsWith("\\")) continue; // "\ No newline at end of file"
      const op = l[0];
      const text = l.slice(1);
      if (op === " ") {
        if (cur[ci] !== text) return null;
        out.push(text);
        ci++;
      } else if (op === "-") out.push(text);
      else if (op === "+") {
        if (cur[ci] !== text) return null;
        ci++;
      } else if (l === "" && i >= lines.length) break;
      else if (!l.startsWith("---") && !l.startsWith("+++") && !l.startsWith("diff ") && !l.startsWith("index ")) return null;
    }
  }
  while (ci < cur.length) out.push(cur[ci++] ?? "");
  return out.join("\n");
}
