// The browser host: everything in localStorage. localStorage is not a keyring — any script on
// this origin can read it — so the UI says so wherever keys are entered.
import type { Host, LocalBackend, SavedBackend } from "./host";

const PREFIX = "tandem.";
const KEY_PREFIX = `${PREFIX}secret.`;

function read<T>(name: string): T | null {
  try {
    const v = localStorage.getItem(PREFIX + name);
    return v === null ? null : (JSON.parse(v) as T);
  } catch {
    return null;
  }
}

/**
 * The server that served this page. `tandem serve` serves the UI at `<origin>/ui/`, so the API
 * root is the path before `/ui/`. A session key handed over in the fragment (`#key=…`) is
 * remembered and removed from the address bar at once so it does not linger in history.
 */
export function localFromLocation(loc: Location, hist: History | null): LocalBackend | null {
  const m = loc.hash.match(/(?:^#|&)key=([^&]+)/);
  let key: string | null = null;
  if (m?.[1]) {
    key = decodeURIComponent(m[1]);
    localStorage.setItem(`${KEY_PREFIX}backend:local`, key);
    hist?.replaceState(hist.state, "", loc.pathname + loc.search);
  } else {
    key = localStorage.getItem(`${KEY_PREFIX}backend:local`);
  }
  if (loc.protocol !== "http:" && loc.protocol !== "https:") return null;
  const i = loc.pathname.indexOf("/ui/");
  const prefix = i >= 0 ? loc.pathname.slice(0, i) : "";
  // The Vite dev server is not an agent server; point it at one with ?server=<url>.
  const override = new URLSearchParams(loc.search).get("server");
  return { baseUrl: override ?? loc.origin + prefix, key };
}

export function createBrowserHost(): Host {
  return {
    kind: "browser",
    keyringWarning:
      "This browser is not a keyring: keys are kept in this site's localStorage, readable by anything running on this origin.",
    async keyringGet(account) {
      return localStorage.getItem(KEY_PREFIX + account);
    },
    async keyringSet(account, secret) {
      localStorage.setItem(KEY_PREFIX + account, secret);
    },
    async keyringDelete(account) {
      localStorage.removeItem(KEY_PREFIX + account);
    },
    pickFolder: null,
    async localBackend() {
      return localFromLocation(window.location, window.history);
    },
    async loadBackends() {
      return read<SavedBackend[]>("backends") ?? [];
    },
    async saveBackends(list: SavedBackend[]) {
      localStorage.setItem(PREFIX + "backends", JSON.stringify(list));
    },
    loadPref: read,
    savePref(name, value) {
      localStorage.setItem(PREFIX + name, JSON.stringify(value));
    },
  };
}
