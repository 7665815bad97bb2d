// UI-only state: which conversation is open and the person's view preferences.
import { create } from "zustand";
import { useBackends } from "../features/backends/backendStore";
import { host, LAST_CONVERSATION_PREF } from "../host";

/** The preference that remembers the open conversation of a backend. */
export const lastConversationPref = (backendId: string) => `${LAST_CONVERSATION_PREF}${backendId}`;

export type Theme = "system" | "dark" | "light";

/** A conversation the page's address asked to open (`#conversation=ID[&replay=1]`, as
 * `tandem replay open` prints), until its workspace has opened it. */
export interface OpenLink {
  conversation: string;
  replay: boolean;
}

/** The link in an address's fragment (`#key=…&conversation=…&replay=1`), if any. */
export function linkFromHash(hash: string): OpenLink | null {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const conversation = params.get("conversation");
  if (!conversation || !/^[0-9a-fA-F-]{32,36}$/.test(conversation)) return null;
  return { conversation, replay: params.get("replay") === "1" };
}

interface UiStore {
  conversationId: string | null;
  openLink: OpenLink | null;
  theme: Theme;
  helpOpen: boolean;
  settingsOpen: boolean;
  costsOpen: boolean;
  openConversation(id: string | null): void;
  setTheme(t: Theme): void;
  setHelp(open: boolean): void;
  setSettings(open: boolean): void;
  setCosts(open: boolean): void;
}

export const useUi = create<UiStore>()((set) => ({
  conversationId: null,
  openLink: null,
  theme: "system",
  helpOpen: false,
  settingsOpen: false,
  costsOpen: false,
  openConversation(id) {
    // Remembered per backend: switching backends reopens each one's own last conversation.
    const backendId = useBackends.getState().activeId;
    if (backendId) host().savePref(lastConversationPref(backendId), id);
    set({ conversationId: id });
  },
  setTheme(theme) {
    host().savePref("theme", theme);
    set({ theme });
  },
  setHelp: (helpOpen) => set({ helpOpen }),
  setSettings: (settingsOpen) => set({ settingsOpen }),
  setCosts: (costsOpen) => set({ costsOpen }),
}));

/** Pane ids for focus shortcuts (Ctrl+1..7) and the help overlay. */
export const PANES = ["conversations", "timeline", "chat", "editor", "terminal", "browser", "desktop", "approvals"] as const;
export type PaneId = (typeof PANES)[number];

/** Sent (bubbling) from a hidden pane that is about to be focused: whoever hides it shows it. */
export const REVEAL_PANE = "tandem:reveal-pane";

export function focusPane(id: PaneId): void {
  const el = document.querySelector<HTMLElement>(`[data-pane="${id}"]`);
  if (!el) return;
  if (el.hidden) el.dispatchEvent(new CustomEvent(REVEAL_PANE, { bubbles: true }));
  const target = el.querySelector<HTMLElement>("[data-autofocus]") ?? el;
  target.focus();
}
