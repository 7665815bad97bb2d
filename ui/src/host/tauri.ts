// The desktop host: native keyring, folder picker and the in-process engine, through Tauri
// commands implemented by src-tauri (tandem-desktop). Loaded only when running inside Tauri
// (dynamic import), so the browser build never touches `@tauri-apps/*` at run time.
//
// Commands this expects from the desktop host:
//   keyring_get {account} -> string | null     keyring_set {account, secret}   keyring_delete {account}
//   pick_folder -> string | null                backend_local -> {baseUrl, key} | null
//   backend_list -> SavedBackend[]              backend_save {backends}
//   session_last -> LastSession                 session_save {session} (fields left out are kept)
import { invoke } from "@tauri-apps/api/core";
import { LAST_CONVERSATION_PREF, type Host, type LocalBackend, type SavedBackend } from "./host";

const PREFIX = "tandem.";

/** The desktop's session file (`session.json` in the app's config folder). */
interface LastSession {
  backend?: string;
  workspace?: string;
  [pref: string]: unknown;
}

/** Preferences kept in the session file, so a restart restores them even when the webview's
 * storage is gone: the active backend, the last workspace folder, each backend's open conversation. */
function sessionField(pref: string): string | null {
  if (pref === "activeBackend") return "backend";
  if (pref === "lastWorkspace") return "workspace";
  if (pref.startsWith(LAST_CONVERSATION_PREF)) return pref;
  return null;
}

function readLocal<T>(name: string): T | null {
  try {
    const v = localStorage.getItem(PREFIX + name);
    return v === null ? null : (JSON.parse(v) as T);
  } catch {
    return null;
  }
}

export async function createTauriHost(): Promise<Host> {
  const session = await invoke<LastSession>("session_last").catch((e: unknown) => {
    console.warn("session_last failed; starting without the saved session", e);
    return {} as LastSession;
  });
  return {
    kind: "tauri",
    keyringWarning: null,
    keyringGet: (account) => invoke<string | null>("keyring_get", { account }),
    keyringSet: (account, secret) => invoke<void>("keyring_set", { account, secret }),
    keyringDelete: (account) => invoke<void>("keyring_delete", { account }),
    pickFolder: () => invoke<string | null>("pick_folder"),
    localBackend: () => invoke<LocalBackend | null>("backend_local"),
    loadBackends: () => invoke<SavedBackend[]>("backend_list"),
    saveBackends: (backends) => invoke<void>("backend_save", { backends }),
    // Preferences are not secrets: the webview's localStorage keeps them, and the session file
    // keeps the ones a restart must restore.
    loadPref<T>(name: string): T | null {
      const field = sessionField(name);
      if (field && session[field] !== undefined) return session[field] as T;
      return readLocal<T>(name);
    },
    savePref(name, value) {
      localStorage.setItem(PREFIX + name, JSON.stringify(value));
      const field = sessionField(name);
      if (!field) return;
      session[field] = value ?? undefined;
      invoke("session_save", { session: { [field]: value ?? null } }).catch((e: unknown) => console.warn("session_save failed", e));
    },
  };
}
