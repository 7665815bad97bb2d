// Which key presses in the live view go to the page, and how. Printable text is not sent as
// keys: it reaches a hidden text field and is sent as `text` once typed (so IME composition,
// dead keys and paste work); keys that type nothing (Enter, Backspace, arrows, Tab, …) and
// shortcuts (Ctrl+A) are sent as `key` frames. A few shortcuts stay with the app, so the
// person can always leave the view by keyboard.
import { MOD } from "./wire";

interface KeyLike {
  key: string;
  code?: string;
  altKey: boolean;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  isComposing?: boolean;
}

export function modifiersOf(e: Pick<KeyLike, "altKey" | "ctrlKey" | "metaKey" | "shiftKey">): number {
  return (e.altKey ? MOD.alt : 0) | (e.ctrlKey ? MOD.ctrl : 0) | (e.metaKey ? MOD.meta : 0) | (e.shiftKey ? MOD.shift : 0);
}

/** Keys that only modify others: their state travels in `modifiers`. */
const MODIFIER_KEYS = new Set(["Shift", "Control", "Alt", "AltGraph", "Meta", "OS", "CapsLock", "NumLock", "ScrollLock", "Fn", "Hyper", "Super"]);

/**
 * What a keydown in the live view does:
 * - `app`: the app's own shortcut (pane focus, settings, approvals): leave it alone;
 * - `native`: let the hidden field handle it (typing, composition, paste); its text is sent;
 * - `{key, modifiers}`: send this key frame and keep the browser from acting on it.
 */
export function keyAction(e: KeyLike): "app" | "native" | { key: string; modifiers: number } {
  const ctrl = e.ctrlKey || e.metaKey;
  if (ctrl && !e.altKey && /^[0-9]$/.test(e.key)) return "app";
  if (ctrl && e.key === ",") return "app";
  if (e.altKey && !ctrl && e.code === "KeyA") return "app";
  if (e.isComposing || e.key === "Process" || e.key === "Dead" || e.key === "Unidentified") return "native";
  if (MODIFIER_KEYS.has(e.key)) return "native";
  // Paste arrives as text through the field (the remote page cannot read this clipboard).
  if ((ctrl && e.key.toLowerCase() === "v") || (e.shiftKey && e.key === "Insert")) return "native";
  // One character (one code point) without Ctrl/Meta types text; AltGr and Option characters too.
  if ([...e.key].length === 1 && !ctrl) return "native";
  if (e.ctrlKey && e.altKey && [...e.key].length === 1) return "native";
  return { key: e.key, modifiers: modifiersOf(e) };
}
