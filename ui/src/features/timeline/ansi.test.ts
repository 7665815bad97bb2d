import { describe, expect, it } from "vitest";
import { parseAnsi, stripAnsi } from "./ansi";
import { lineDiff } from "./lineDiff";

describe("ANSI renderer", () => {
  it("splits text into styled segments", () => {
    expect(parseAnsi("plain \x1b[1;31mbold red\x1b[0m back")).toEqual([
      { text: "plain ", style: {} },
      { text: "bold red", style: { bold: true, fg: "var(--ansi-red)" } },
      { text: " back", style: {} },
    ]);
  });

  it("handles bright, background, 256 and true colours and partial resets", () => {
    const [a, b, c, d] = parseAnsi("\x1b[92;44ma\x1b[39mb\x1b[38;5;196mc\x1b[38;2;1;2;3;49md");
    expect(a?.style).toEqual({ fg: "var(--ansi-bright-green)", bg: "var(--ansi-blue)" });
    expect(b?.style).toEqual({ bg: "var(--ansi-blue)" });
    expect(c?.style).toEqual({ bg: "var(--ansi-blue)", fg: "rgb(255,0,0)" });
    expect(d?.style).toEqual({ fg: "rgb(1,2,3)" });
  });

  it("drops cursor movement and OSC title sequences, keeps the text", () => {
    const s = "\x1b]0;title\x07\x1b[2K\x1b[1Gdone\x1b[?25h";
    expect(parseAnsi(s)).toEqual([{ text: "done", style: {} }]);
    expect(stripAnsi("\x1b[32mok\x1b[0m")).toBe("ok");
  });

  it("treats an empty SGR as a reset", () => {
    expect(parseAnsi("\x1b[1mx\x1b[my").map((s) => s.style)).toEqual([{ bold: true }, {}]);
  });
});

describe("line diff", () => {
  it("marks added and removed lines with numbers", () => {
    const d = lineDiff("a\nb\nc", "a\nB\nc\nd");
    expect(d.map((l) => `${l.op}${l.text}`)).toEqual([" a", "-b", "+B", " c", "+d"]);
    expect(d[2]).toMatchObject({ newNo: 2 });
  });
  it("handles a created file", () => {
    expect(lineDiff("", "x\ny").map((l) => l.op)).toEqual(["+", "+"]);
  });
});
