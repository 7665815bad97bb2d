// What the UI needs from the thing it runs in. Two implementations: the plain browser (served
// by `tandem serve` at /ui/) and the Tauri desktop host. This folder is the only place that may
// import `@tauri-apps/*`.
import type { SandboxStatus_Serialize as SandboxStatus } from "./bindings.gen";

/** Preferences named by this plus a backend id remember that backend's open conversation. */
export const LAST_CONVERSATION_PREF = "lastConversation.";

/** A backend the user saved (its session key lives in the keyring, not here). A type, not an
 * interface, so it is plain JSON to the desktop's generated `backend_save`. */
export type SavedBackend = {
  id: string;
  name: string;
  baseUrl: string;
};

/** The desktop's Docker sandbox backend: a status (`{seq, state}`, generated from the Rust
 * side) that grows through building, starting and connected, or ends stopped or failed. */
export type { SandboxState_Serialize as SandboxState, SandboxStatus_Serialize as SandboxStatus } from "./bindings.gen";

/** Starts, stops and follows the desktop's Docker sandbox (one at a time). */
export interface SandboxHost {
  status(): Promise<SandboxStatus>;
  /** Starts a sandbox on the host folder `workspace`; answers the first step, the rest comes
   * through `listen`. */
  start(workspace: string): Promise<SandboxStatus>;
  /** Removes the sandbox (or cancels its start). */
  stop(): Promise<SandboxStatus>;
  /** Calls `listener` with every new status; answers the unsubscribe. */
  listen(listener: (s: SandboxStatus) => void): Promise<() => void>;
}

/** The server this UI belongs to: the one that served it, or the desktop's in-process engine. */
export interface LocalBackend {
  baseUrl: string;
  key: string | null;
}

export interface Host {
  readonly kind: "browser" | "tauri";
  /**
   * Shown wherever secrets are entered when the store is not a real keyring. It can change
   * while the app runs (the desktop learns it at start and again from each stored secret):
   * read it through `useKeyringWarning`, which follows `onKeyringWarning`.
   */
  readonly keyringWarning: string | null;
  /** With `keyringWarning`: the technical reason (e.g. the D-Bus error) for those who want to
   * fix it; shown apart from the sentence. Changes along with it. */
  readonly keyringWarningCause?: string | null;
  /** Calls `listener` whenever `keyringWarning` changes; answers the unsubscribe. Hosts whose
   * warning never changes leave it out. */
  onKeyringWarning?(listener: () => void): () => void;
  keyringGet(account: string): Promise<string | null>;
  keyringSet(account: string, secret: string): Promise<void>;
  keyringDelete(account: string): Promise<void>;
  /** A native folder picker, or null when there is none (the UI shows a text field). */
  readonly pickFolder: (() => Promise<string | null>) | null;
  localBackend(): Promise<LocalBackend | null>;
  /** The Docker sandbox backend, where the host can start one (the desktop). */
  readonly sandbox?: SandboxHost;
  loadBackends(): Promise<SavedBackend[]>;
  saveBackends(list: SavedBackend[]): Promise<void>;
  /** Small non-secret preferences (theme, last backend and conversation, layout). */
  loadPref<T>(name: string): T | null;
  savePref(name: string, value: unknown): void;
}
