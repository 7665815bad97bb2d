// Global keyboard shortcuts. Pane focus works everywhere; single-key ones (?, n) only when the
// person is not typing.
import { useEffect } from "react";
import { focusPane, PANES, useUi } from "../store/ui";

export const SHORTCUTS: { keys: string; what: string }[] = [
  { keys: "Ctrl+1 … Ctrl+7", what: "Focus conversations, timeline, chat, editor, terminal, browser, desktop (on a sandbox)" },
  { keys: "Alt+A", what: "Focus the approval panel" },
  { keys: "Alt+Shift+A", what: "Approve the pending action (from anywhere)" },
  { keys: "a / r / e", what: "Approve / reject / edit (approval panel focused)" },
  { keys: "Esc", what: "Cancel reject or edit; close dialogs" },
  { keys: "Enter / Shift+Enter", what: "Send message / new line (chat)" },
  { keys: "Ctrl+S", what: "Save the open file (editor)" },
  { keys: "F2 / Delete", what: "Rename / delete the focused conversation" },
  { keys: "Ctrl+,", what: "Settings" },
  { keys: "← / →", what: "Step the replay back / forward (Replay on, not typing)" },
  { keys: "Space", what: "Play / pause the replay (Replay on, not typing)" },
  { keys: "Home / End", what: "Replay: the first event / back to live, following the newest" },
  { keys: "?", what: "This help" },
];

function typing(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  // The window or the document itself (a synthetic event) is not a field.
  if (!el?.closest) return false;
  return el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable || Boolean(el.closest(".monaco-editor, .xterm"));
}

/** The open conversation's "approve pending actions", or null (set by the Workspace). */
let approveHandler: (() => void) | null = null;
export function setApproveHandler(f: (() => void) | null): void {
  approveHandler = f;
}

/**
 * The open conversation's replay keys while Replay is on, or null (set by its hook): takes a
 * key (`ArrowLeft`, `ArrowRight`, ` `, `Home`, `End`) and says whether it used it.
 */
let replayKeyHandler: ((key: string) => boolean) | null = null;
export function setReplayKeyHandler(f: ((key: string) => boolean) | null): void {
  replayKeyHandler = f;
}

/** A control that answers Space or arrows itself (a button presses, a tab list moves). */
function ownsKey(t: EventTarget | null, key: string): boolean {
  const el = t as HTMLElement | null;
  if (!el?.closest) return false;
  if (el.closest('[role="tablist"], [role="dialog"]')) return true;
  return key === " " && Boolean(el.closest("button, a, summary, [role=button]"));
}

/** Installed once by the App, so help and pane focus work even with no conversation open. */
export function useGlobalShortcuts(): void {
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const ui = useUi.getState();
      if ((e.ctrlKey || e.metaKey) && !e.shiftKey && !e.altKey && /^[1-7]$/.test(e.key)) {
        e.preventDefault();
        const pane = PANES[Number(e.key) - 1];
        if (pane) focusPane(pane);
        return;
      }
      if ((e.ctrlKey || e.metaKey) && e.key === ",") {
        e.preventDefault();
        ui.setSettings(true);
        return;
      }
      if (e.altKey && !e.ctrlKey && e.code === "KeyA") {
        e.preventDefault();
        if (e.shiftKey) approveHandler?.();
        else focusPane("approvals");
        return;
      }
      if (e.key === "Escape" && ui.helpOpen) {
        ui.setHelp(false);
        return;
      }
      if (typing(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
      if (replayKeyHandler && !e.shiftKey && !e.defaultPrevented && !ownsKey(e.target, e.key) && replayKeyHandler(e.key)) {
        e.preventDefault();
        return;
      }
      if (e.key === "?") {
        e.preventDefault();
        ui.setHelp(!ui.helpOpen);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
}
