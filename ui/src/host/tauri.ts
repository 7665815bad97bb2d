// The desktop host: native keyring, folder picker and the in-process engine, through Tauri
// commands implemented by src-tauri (tandem-desktop). Loaded only when running inside Tauri
// (dynamic import), so the browser build never touches `@tauri-apps/*` at run time.
//
// Commands this expects from the desktop host:
//   keyring_get {account} -> string | null     keyring_set {account, secret}   keyring_delete {account}
//   pick_folder -> string | null                backend_local -> {baseUrl, key} | null
//   backend_list -> SavedBackend[]              backend_save {backends}
import { invoke } from "@tauri-apps/api/core";
import type { Host, LocalBackend, SavedBackend } from "./host";

const PREFIX = "tandem.";

export function createTauriHost(): Host {
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
    // Preferences are not secrets: the webview's localStorage persists them fine.
    loadPref<T>(name: string): T | null {
      try {
        const v = localStorage.getItem(PREFIX + name);
        return v === null ? null : (JSON.parse(v) as T);
      } catch {
        return null;
      }
    },
    savePref(name, value) {
      localStorage.setItem(PREFIX + name, JSON.stringify(value));
    },
  };
}
