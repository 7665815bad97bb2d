// Picks the host once at start-up. Inside Tauri `window.__TAURI_INTERNALS__` exists; the Tauri
// implementation is imported dynamically so the browser never loads it.
import { useCallback, useSyncExternalStore } from "react";
import { createBrowserHost } from "./browser";
import type { Host } from "./host";

export { LAST_CONVERSATION_PREF, type Host, type LocalBackend, type SandboxHost, type SandboxState, type SandboxStatus, type SavedBackend } from "./host";

let current: Host | null = null;

export async function initHost(): Promise<Host> {
  if (current) return current;
  const w = window as unknown as { __TAURI_INTERNALS__?: unknown };
  if (w.__TAURI_INTERNALS__) {
    const { createTauriHost } = await import("./tauri");
    current = await createTauriHost();
  } else {
    current = createBrowserHost();
  }
  return current;
}

/** The host chosen by initHost (the app renders only after it resolved). */
export function host(): Host {
  if (!current) current = createBrowserHost();
  return current;
}

/** Tests swap in a fake. */
export function setHostForTests(h: Host | null): void {
  current = h;
}

/** `read(host)` as React state that follows the host's keyring warning (`onKeyringWarning`). */
function useKeyringValue<T>(read: (h: Host) => T): T {
  const h = host();
  const subscribe = useCallback((l: () => void) => h.onKeyringWarning?.(l) ?? (() => {}), [h]);
  return useSyncExternalStore(subscribe, () => read(h));
}

/**
 * The host's keyring warning as React state, or null when secrets are in a real keyring:
 * components re-render when the desktop learns that secrets go to its fallback file (at start,
 * or from a secret just stored).
 */
export function useKeyringWarning(): string | null {
  return useKeyringValue((h) => h.keyringWarning);
}

/** The technical cause that goes with `useKeyringWarning`'s sentence, or null. */
export function useKeyringWarningCause(): string | null {
  return useKeyringValue((h) => h.keyringWarningCause ?? null);
}
