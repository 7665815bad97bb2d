// A line diff for showing file edits in the timeline (old_content → new_content). Common
// prefix and suffix are trimmed first; the middle is an LCS table, capped so a huge rewrite
// degrades to "all removed, all added" instead of freezing the UI.

export type DiffLine = { op: " " | "-" | "+"; text: string; oldNo?: number; newNo?: number };

const MAX_CELLS = 4_000_000;

export function lineDiff(oldText: string, newText: string): DiffLine[] {
  const a = oldText === "" ? [] : oldText.split("\n");
  const b = newText === "" ? [] : newText.split("\n");
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const am = a.slice(pre, a.length - suf);
  const bm = b.slice(pre, b.length - suf);
  const out: DiffLine[] = [];
  for (let i = 0; i < pre; i++) out.push({ op: " ", text: a[i] ?? "", oldNo: i + 1, newNo: i + 1 });
  const mid = middle(am, bm);
  let oi = pre, ni = pre;
  for (const m of mid) {
    if (m.op === " ") out.push({ ...m, oldNo: ++oi, newNo: ++ni });
    else if (m.op === "-") out.push({ ...m, oldNo: ++oi });
    else out.push({ ...m, newNo: ++ni });
  }
  for (let i = 0; i < suf; i++) {
    const text = a[a.length - suf + i] ?? "";
    out.push({ op: " ", text, oldNo: ++oi, newNo: ++ni });
  }
  return out;
}

function middle(a: string[], b: string[]): DiffLine[] {
  const n = a.length, m = b.length;
  if (n === 0) return b.map((text) => ({ op: "+", text }));
  if (m === 0) return a.map((text) => ({ op: "-", text }));
  if ((n + 1) * (m + 1) > MAX_CELLS) {
    return [...a.map((text): DiffLine => ({ op: "-", text })), ...b.map((text): DiffLine => ({ op: "+", text }))];
  }
  const w = m + 1;
  const t = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      t[i * w + j] = a[i] === b[j] ? (t[(i + 1) * w + j + 1] ?? 0) + 1 : Math.max(t[(i + 1) * w + j] ?? 0, t[i * w + j + 1] ?? 0);
  const out: DiffLine[] = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ op: " ", text: a[i] ?? "" });
      i++;
      j++;
    } else if ((t[(i + 1) * w + j] ?? 0) >= (t[i * w + j + 1] ?? 0)) out.push({ op: "-", text: a[i++] ?? "" });
    else out.push({ op: "+", text: b[j++] ?? "" });
  }
  while (i < n) out.push({ op: "-", text: a[i++] ?? "" });
  while (j < m) out.push({ op: "+", text: b[j++] ?? "" });
  return out;
}

/** Only the changed lines with `context` lines around them; gaps become null. */
export function withContext(lines: DiffLine[], context = 3): (DiffLine | null)[] {
  const keep = new Array<boolean>(lines.length).fill(false);
  lines.forEach((l, i) => {
    if (l.op !== " ") for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = true;
  });
  const out: (DiffLine | null)[] = [];
  let gap = false;
  lines.forEach((l, i) => {
    if (keep[i]) {
      out.push(l);
      gap = false;
    } else if (!gap) {
      out.push(null);
      gap = true;
    }
  });
  return out;
}
