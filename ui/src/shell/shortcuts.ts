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
  { keys: "?", what: "This help" },
];

function typing(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  if (!el) return false;
  return el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable || Boolean(el.closest(".monaco-editor, .xterm"));
}

/** The open conversation's "approve pending actions", or null (set by the Workspace). */
let approveHandler: (() => void) | null = null;
export function setApproveHandler(f: (() => void) | null): void {
  approveHandler = f;
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
      if (e.key === "?") {
        e.preventDefault();
        ui.setHelp(!ui.helpOpen);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, []);
}
