// The hunks of one file's unified diff, as the person reviews them in the Changes view, and the
// hunks they accepted (a local note of their review, kept in localStorage). Pure apart from the
// storage functions at the end, which never throw.

/** One hunk of a file's diff. */
export interface Hunk {
  /**
   * The hunk exactly as the diff shows it, from its `@@` line up to (not including) the next
   * `@@` line or the end: what the reject route compares with the file's diff now.
   */
  text: string;
  /** The `@@ -a,b +c,d @@` line (with any section heading after it). */
  header: string;
  /** First line of the hunk in the original file (0 for an empty side). */
  oldStart: number;
  /** First line of the hunk in the changed file (0 for an empty side). */
  newStart: number;
  added: number;
  removed: number;
  /** The first few changed lines, with their `+`/`-`, to recognise the hunk by. */
  preview: string[];
}

const HEADER = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;
const PREVIEW_LINES = 3;

/** The hunks of a unified diff, in order; the file header lines before the first `@@` are not part of any. */
export function splitHunks(diff: string): Hunk[] {
  const out: Hunk[] = [];
  let current: { lines: string[]; oldStart: number; newStart: number } | null = null;
  const finish = () => {
    if (!current) return;
    const lines = current.lines;
    const body = lines.slice(1);
    const changed = body.filter((l) => l.startsWith("+") || l.startsWith("-"));
    out.push({
      text: lines.join(""),
      header: (lines[0] ?? "").replace(/\r?\n$/, ""),
      oldStart: current.oldStart,
      newStart: current.newStart,
      added: changed.filter((l) => l.startsWith("+")).length,
      removed: changed.filter((l) => l.startsWith("-")).length,
      preview: changed.slice(0, PREVIEW_LINES).map((l) => l.replace(/\r?\n$/, "")),
    });
  };
  // split keeping each line's newline, so a hunk's text is byte for byte the diff's.
  for (const line of diff.match(/[^\n]*\n|[^\n]+$/g) ?? []) {
    const h = HEADER.exec(line);
    if (h) {
      finish();
      current = { lines: [line], oldStart: Number(h[1]), newStart: Number(h[2]) };
    } else if (current) {
      current.lines.push(line);
    }
  }
  finish();
  return out;
}

/** The line to show a hunk at in the changed file (a pure deletion sits after line `newStart`). */
export function revealLine(h: Hunk): number {
  return Math.max(1, h.newStart);
}

/** A short, stable fingerprint of a hunk's text (53-bit FNV-style hash), compared without trailing newlines as the server does. */
export function hunkFingerprint(text: string): string {
  const s = text.replace(/\n+$/, "");
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

/**
 * What identifies an accepted hunk: the path and the hunk's text, so a hunk the agent changes
 * afterwards is a new hunk and shown again.
 */
export function acceptedId(path: string, hunkText: string): string {
  return `${path}\u0000${hunkFingerprint(hunkText)}`;
}

const storageKey = (conversationId: string) => `tandem:accepted-hunks:${conversationId}`;

/** The hunks accepted in a conversation (empty when storage is unavailable or holds something else). */
export function loadAccepted(conversationId: string): Set<string> {
  try {
    const raw: unknown = JSON.parse(localStorage.getItem(storageKey(conversationId)) ?? "[]");
    return new Set(Array.isArray(raw) ? raw.filter((x): x is string => typeof x === "string") : []);
  } catch {
    return new Set();
  }
}

/** Keeps the accepted hunks of a conversation; a failure to store only loses the note. */
export function saveAccepted(conversationId: string, accepted: ReadonlySet<string>): void {
  try {
    if (accepted.size === 0) localStorage.removeItem(storageKey(conversationId));
    else localStorage.setItem(storageKey(conversationId), JSON.stringify([...accepted]));
  } catch {
    // Storage full or disabled: the review still works for this session.
  }
}
