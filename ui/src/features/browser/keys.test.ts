import { describe, expect, it } from "vitest";
import { keyAction, modifiersOf } from "./keys";

const k = (key: string, mods: Partial<{ altKey: boolean; ctrlKey: boolean; metaKey: boolean; shiftKey: boolean; code: string; isComposing: boolean }> = {}) => ({
  key,
  altKey: false,
  ctrlKey: false,
  metaKey: false,
  shiftKey: false,
  ...mods,
});

describe("keyAction", () => {
  it("sends keys that type nothing, with CDP's modifier bits", () => {
    expect(keyAction(k("Enter"))).toEqual({ key: "Enter", modifiers: 0 });
    expect(keyAction(k("Tab", { shiftKey: true }))).toEqual({ key: "Tab", modifiers: 8 });
    expect(keyAction(k("Backspace"))).toEqual({ key: "Backspace", modifiers: 0 });
    expect(keyAction(k("ArrowLeft", { altKey: true }))).toEqual({ key: "ArrowLeft", modifiers: 1 });
    expect(keyAction(k("a", { ctrlKey: true }))).toEqual({ key: "a", modifiers: 2 });
    expect(keyAction(k("z", { metaKey: true, shiftKey: true }))).toEqual({ key: "z", modifiers: 12 });
  });

  it("leaves typing, composition and paste to the text field", () => {
    expect(keyAction(k("a"))).toBe("native");
    expect(keyAction(k("A", { shiftKey: true }))).toBe("native");
    expect(keyAction(k(" "))).toBe("native");
    expect(keyAction(k("é"))).toBe("native");
    expect(keyAction(k("😀"))).toBe("native");
    expect(keyAction(k("Process"))).toBe("native");
    expect(keyAction(k("Enter", { isComposing: true }))).toBe("native");
    expect(keyAction(k("v", { ctrlKey: true }))).toBe("native");
    expect(keyAction(k("Shift", { shiftKey: true }))).toBe("native");
    // AltGr reports Ctrl+Alt and types a character.
    expect(keyAction(k("@", { ctrlKey: true, altKey: true }))).toBe("native");
  });

  it("keeps the app's own shortcuts, so the keyboard can always leave the view", () => {
    expect(keyAction(k("2", { ctrlKey: true }))).toBe("app");
    expect(keyAction(k(",", { ctrlKey: true }))).toBe("app");
    expect(keyAction(k("a", { altKey: true, code: "KeyA" }))).toBe("app");
  });

  it("modifiersOf sums the bits", () => {
    expect(modifiersOf({ altKey: true, ctrlKey: true, metaKey: true, shiftKey: true })).toBe(15);
  });
});
