import { describe, expect, it } from "vitest";
import { terminalFont } from "./font";

const style = (mono: string) => ({ getPropertyValue: (name: string) => (name === "--mono" ? mono : "") });

describe("terminalFont", () => {
  it("resolves the theme's font list instead of passing a CSS variable to xterm", () => {
    expect(terminalFont(style(' "DejaVu Sans Mono", Menlo'))).toBe('"DejaVu Sans Mono", Menlo, monospace');
  });
  it("falls back to the system monospace font without a theme", () => {
    expect(terminalFont(style(""))).toBe("ui-monospace, monospace");
    expect(terminalFont(style(""))).not.toContain("var(");
  });
});
