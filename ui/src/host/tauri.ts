// The desktop host: native keyring, folder picker, the in-process engine and the Docker sandbox,
// through Tauri commands (and the sandbox's status event) implemented by src-tauri
// (tandem-desktop). Loaded only when running inside Tauri (dynamic import), so the browser build
// never touches `@tauri-apps/*` at run time.
//
// The commands, their arguments and results come from `bindings.gen.ts`, generated from the Rust
// signatures (`cargo run -p tandem-desktop --example gen_bindings`); nothing here restates them.
import { commands, events, type CommandError, type KeyringStatus_Serialize, type LastSession_Serialize, type Value } from "./bindings.gen";
import { LAST_CONVERSATION_PREF, type Host } from "./host";

const PREFIX = "tandem.";

/** A command's rejection (`{code, message}` from the Rust side) as an Error the UI can show. */
export class DesktopError extends Error {
  override readonly name = "DesktopError";
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function isCommandError(e: unknown): e is CommandError {
  return typeof e === "object" && e !== null && typeof (e as CommandError).code === "string" && typeof (e as CommandError).message === "string";
}

async function call<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (isCommandError(e)) throw new DesktopError(e.code, e.message);
    throw e instanceof Error ? e : new Error(String(e));
  }
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
  const [session, status] = await Promise.all([
    call(commands.sessionLast()).catch((e: unknown): LastSession_Serialize => {
      console.warn("session_last failed; starting without the saved session", e);
      return {};
    }),
    // Where secrets go: with no Secret Service the desktop keeps them in a 0600 file, and its
    // warning is shown as a banner and in Settings.
    call(commands.keyringStatus()).catch((e: unknown): KeyringStatus_Serialize | null => {
      console.warn("keyring_status failed", e);
      return null;
    }),
  ]);
  let keyringWarning = status?.warning ?? null;
  let keyringWarningCause = status?.cause ?? null;
  const listeners = new Set<() => void>();
  const learn = (s: KeyringStatus_Serialize) => {
    const w = s.warning ?? null;
    const c = s.cause ?? null;
    if (w === keyringWarning && c === keyringWarningCause) return;
    keyringWarning = w;
    keyringWarningCause = c;
    listeners.forEach((l) => l());
  };
  return {
    kind: "tauri",
    get keyringWarning() {
      return keyringWarning;
    },
    get keyringWarningCause() {
      return keyringWarningCause;
    },
    onKeyringWarning(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    keyringGet: (account) => call(commands.keyringGet(account, null)),
    async keyringSet(account, secret) {
      // The answer says where the secret went: a keyring that stopped answering since start
      // shows the fallback warning at once.
      learn(await call(commands.keyringSet(account, secret, null)));
    },
    async keyringDelete(account) {
      await call(commands.keyringDelete(account, null));
    },
    pickFolder: () => call(commands.pickFolder()),
    async localBackend() {
      const b = await call(commands.backendLocal());
      return { baseUrl: b.baseUrl, key: b.key };
    },
    sandbox: {
      status: () => call(commands.sandboxStatus()),
      start: (workspace) => call(commands.sandboxStart(workspace)),
      stop: () => call(commands.sandboxStop()),
      listen: (listener) => events.sandboxStatus.listen((e) => listener(e.payload)),
    },
    loadBackends: () => call(commands.backendList()),
    async saveBackends(backends) {
      await call(commands.backendSave(backends));
    },
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
      // A preference is JSON (it is also kept in localStorage as such).
      const json = (value ?? null) as Value;
      if (value === null || value === undefined) delete session[field];
      else session[field] = json;
      call(commands.sessionSave({ [field]: json })).catch((e: unknown) => console.warn("session_save failed", e));
    },
  };
}
