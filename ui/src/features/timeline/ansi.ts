// A small ANSI SGR → styled-segments converter for terminal output in the timeline. It keeps
// colours (16, 256 and true colour), bold, dim, italic, underline and inverse, and drops every
// other escape sequence (cursor moves, OSC titles), which make no sense in a static log.

export interface AnsiStyle {
  fg?: string;
  bg?: string;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
  inverse?: boolean;
}

export interface AnsiSegment {
  text: string;
  style: AnsiStyle;
}

/** The 16 basic colours as CSS variables so themes can tune them. */
const BASIC = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"];
const basic = (i: number, bright: boolean) => `var(--ansi-${bright ? "bright-" : ""}${BASIC[i]})`;

function color256(n: number): string {
  if (n < 8) return basic(n, false);
  if (n < 16) return basic(n - 8, true);
  if (n < 232) {
    const c = n - 16;
    const v = (x: number) => (x === 0 ? 0 : 55 + x * 40);
    return `rgb(${v(Math.floor(c / 36))},${v(Math.floor(c / 6) % 6)},${v(c % 6)})`;
  }
  const g = 8 + (n - 232) * 10;
  return `rgb(${g},${g},${g})`;
}

// CSI … final byte, OSC … BEL/ST, and two-byte escapes.
// eslint-disable-next-line no-control-regex
const ESC = /\x1b\[([0-9;?]*)([@-~])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g;

function applySgr(params: string, s: AnsiStyle): AnsiStyle {
  const codes = params === "" ? [0] : params.split(";").map((p) => (p === "" ? 0 : Number(p)));
  let st: AnsiStyle = { ...s };
  for (let i = 0; i < codes.length; i++) {
    const c = codes[i] ?? 0;
    if (c === 0) st = {};
    else if (c === 1) st.bold = true;
    else if (c === 2) st.dim = true;
    else if (c === 3) st.italic = true;
    else if (c === 4) st.underline = true;
    else if (c === 7) st.inverse = true;
    else if (c === 22) st.bold = st.dim = false;
    else if (c === 23) st.italic = false;
    else if (c === 24) st.underline = false;
    else if (c === 27) st.inverse = false;
    else if (c >= 30 && c <= 37) st.fg = basic(c - 30, false);
    else if (c >= 90 && c <= 97) st.fg = basic(c - 90, true);
    else if (c >= 40 && c <= 47) st.bg = basic(c - 40, false);
    else if (c >= 100 && c <= 107) st.bg = basic(c - 100, true);
    else if (c === 39) delete st.fg;
    else if (c === 49) delete st.bg;
    else if (c === 38 || c === 48) {
      const mode = codes[i + 1];
      let col: string | undefined;
      if (mode === 5) {
        col = color256(codes[i + 2] ?? 0);
        i += 2;
      } else if (mode === 2) {
        col = `rgb(${codes[i + 2] ?? 0},${codes[i + 3] ?? 0},${codes[i + 4] ?? 0})`;
        i += 4;
      }
      if (col) {
        if (c === 38) st.fg = col;
        else st.bg = col;
      }
    }
  }
  // Drop false flags so segments compare cleanly.
  for (const k of Object.keys(st) as (keyof AnsiStyle)[]) if (st[k] === false) delete st[k];
  return st;
}

export function parseAnsi(input: string): AnsiSegment[] {
  const out: AnsiSegment[] = [];
  let style: AnsiStyle = {};
  let last = 0;
  const push = (text: string) => {
    if (!text) return;
    const prev = out[out.length - 1];
    if (prev && sameStyle(prev.style, style)) prev.text += text;
    else out.push({ text, style });
  };
  for (const m of input.matchAll(ESC)) {
    push(input.slice(last, m.index));
    last = (m.index ?? 0) + m[0].length;
    if (m[2] === "m") style = applySgr(m[1] ?? "", style);
  }
  push(input.slice(last));
  return out;
}

function sameStyle(a: AnsiStyle, b: AnsiStyle): boolean {
  const ka = Object.keys(a) as (keyof AnsiStyle)[];
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

/** Text without any escape sequence (for search and copy). */
export function stripAnsi(input: string): string {
  return input.replace(ESC, "");
}
