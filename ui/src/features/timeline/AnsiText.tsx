import { useMemo, type CSSProperties } from "react";
import { parseAnsi, type AnsiStyle } from "./ansi";

function css(s: AnsiStyle): CSSProperties | undefined {
  if (Object.keys(s).length === 0) return undefined;
  const fg = s.inverse ? (s.bg ?? "var(--bg)") : s.fg;
  const bg = s.inverse ? (s.fg ?? "var(--fg)") : s.bg;
  return {
    color: fg,
    background: bg,
    fontWeight: s.bold ? 600 : undefined,
    opacity: s.dim ? 0.7 : undefined,
    fontStyle: s.italic ? "italic" : undefined,
    textDecoration: s.underline ? "underline" : undefined,
  };
}

/** Terminal output with its colours, as spans inside a <pre>. */
export function AnsiText({ text, className }: { text: string; className?: string }) {
  const segments = useMemo(() => parseAnsi(text), [text]);
  return (
    <pre className={className ?? "ansi"}>
      {segments.map((s, i) => (
        <span key={i} style={css(s.style)}>
          {s.text}
        </span>
      ))}
    </pre>
  );
}
