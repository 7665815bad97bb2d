// Backends the UI can talk to, which one is active, and what we know about each one's health.
// Keys are read from the host keyring into memory only; they are never persisted by this store.
// The desktop's Docker sandbox is one more backend: the host starts it on a folder and reports
// its status; once connected the UI talks to it like to a remote backend, its key in the keyring.
import { create } from "zustand";
import { createApi, trimBase, type Api, type ServerInfoView } from "../../api/client";
import { ApiError, messageOf } from "../../api/errors";
import { host, LAST_CONVERSATION_PREF, type SandboxStatus } from "../../host";

export const LOCAL_ID = "local";
export const SANDBOX_ID = "sandbox";
/** The preference holding the sandbox's last host folder. */
export const SANDBOX_FOLDER_PREF = "sandboxWorkspace";
/** The preference holding the container id of the sandbox the UI last connected to. */
const SANDBOX_ID_PREF = "sandboxId";
export const DEMO_MODEL = "openai/tandem-demo";

export interface Backend {
  id: string;
  name: string;
  kind: "local" | "remote" | "sandbox";
  baseUrl: string;
  key: string | null;
  /** A connected sandbox: where its host folder appears inside (`/workspace`). */
  workspaceInside?: string;
}

export type HealthStatus = "unknown" | "checking" | "ok" | "unauthorized" | "down" | "not_agent_server" | "error";

export interface BackendHealth {
  status: HealthStatus;
  message?: string;
  info?: ServerInfoView;
  demo: boolean;
}

interface BackendStore {
  loaded: boolean;
  backends: Backend[];
  activeId: string | null;
  health: Record<string, BackendHealth>;
  load(): Promise<void>;
  setActive(id: string): void;
  addRemote(name: string, baseUrl: string, key: string): Promise<Backend>;
  updateKey(id: string, key: string): Promise<void>;
  remove(id: string): Promise<void>;
  probe(id: string): Promise<BackendHealth>;
  /** The Docker sandbox's latest status; null where the host has no sandbox (the browser). */
  sandbox: SandboxStatus | null;
  /** Makes the sandbox the active backend and starts it on the host folder `workspace`. */
  startSandbox(workspace: string): Promise<void>;
  /** Stops the sandbox (or cancels its start). */
  stopSandbox(): Promise<void>;
  /** Takes a status from the host; older ones than the last taken are dropped. */
  applySandbox(s: SandboxStatus): Promise<void>;
}

const apis = new Map<string, { api: Api; baseUrl: string; key: string | null }>();

/** The REST client of a backend (memoised per URL and key). */
export function apiFor(b: Backend): Api {
  const hit = apis.get(b.id);
  if (hit && hit.baseUrl === b.baseUrl && hit.key === b.key) return hit.api;
  const api = createApi({ baseUrl: b.baseUrl, key: b.key });
  apis.set(b.id, { api, baseUrl: b.baseUrl, key: b.key });
  return api;
}

export function isDemoInfo(info: ServerInfoView | undefined): boolean {
  if (!info) return false;
  return info.demo === true || info.llm_model === DEMO_MODEL;
}

/**
 * Checks a backend the way a person would want it explained: is anything there (server_info),
 * is it an agent server, and does it accept our key (conversations/search needs it).
 */
export async function probeBackend(api: Api): Promise<BackendHealth> {
  let info: ServerInfoView;
  try {
    info = await api.serverInfo();
  } catch (e) {
    if (e instanceof ApiError && e.kind === "network") return { status: "down", message: e.message, demo: false };
    if (e instanceof ApiError && (e.kind === "not_found" || e.kind === "not_agent_server"))
      return { status: "not_agent_server", message: `${api.baseUrl} is not an agent server (no /server_info)`, demo: false };
    return { status: "error", message: messageOf(e), demo: false };
  }
  try {
    await api.searchConversations(1);
  } catch (e) {
    const demo = isDemoInfo(info);
    if (e instanceof ApiError && e.kind === "unauthorized")
      return { status: "unauthorized", message: "Unauthorized: the session key was refused", info, demo };
    if (e instanceof ApiError && e.kind === "not_found")
      return { status: "not_agent_server", message: `${api.baseUrl} has no conversations API`, info, demo };
    return { status: "error", message: messageOf(e), info, demo };
  }
  return { status: "ok", info, demo: isDemoInfo(info) };
}

const keyAccount = (id: string) => `backend:${id}`;

/** What the conversations pane says while the sandbox is not connected. */
export function sandboxHealth(s: SandboxStatus): BackendHealth {
  const st = s.state;
  switch (st.state) {
    case "building":
      return { status: "checking", message: "Building the sandbox image…", demo: false };
    case "starting":
      return { status: "checking", message: "Starting the Docker sandbox…", demo: false };
    case "failed":
      return { status: "error", message: `The Docker sandbox failed: ${st.reason}`, demo: false };
    case "stopped":
      return { status: "down", message: "The Docker sandbox is stopped: start it from the backend bar.", demo: false };
    case "connected":
      return { status: "checking", demo: false };
  }
}

const emptySandbox: Backend = { id: SANDBOX_ID, name: "Docker sandbox", kind: "sandbox", baseUrl: "", key: null };

export const useBackends = create<BackendStore>()((set, get) => ({
  loaded: false,
  backends: [],
  activeId: null,
  health: {},
  sandbox: null,

  async load() {
    const h = host();
    const [local, saved] = await Promise.all([h.localBackend(), h.loadBackends()]);
    const backends: Backend[] = [];
    if (local) backends.push({ id: LOCAL_ID, name: "Local", kind: "local", baseUrl: trimBase(local.baseUrl), key: local.key });
    for (const s of saved) {
      backends.push({ id: s.id, name: s.name, kind: "remote", baseUrl: s.baseUrl, key: await h.keyringGet(keyAccount(s.id)) });
    }
    let first: SandboxStatus | null = null;
    if (h.sandbox) {
      backends.push(emptySandbox);
      // Listen first, then ask: an answer older than an event already heard is dropped by seq.
      try {
        await h.sandbox.listen((s) => void get().applySandbox(s));
        first = await h.sandbox.status();
      } catch (e) {
        console.warn("the sandbox status is unavailable", e);
      }
      // No sandbox runs (the app removes it on quitting): its last conversation went with it.
      if (first?.state.state !== "connected") h.savePref(LAST_CONVERSATION_PREF + SANDBOX_ID, null);
    }
    const last = h.loadPref<string>("activeBackend");
    const activeId = backends.find((b) => b.id === last)?.id ?? backends[0]?.id ?? null;
    set({ loaded: true, backends, activeId });
    for (const b of backends) if (b.kind !== "sandbox") void get().probe(b.id);
    // The latest status, heard or asked, now that the sandbox's entry is in the list.
    const heard = get().sandbox;
    const latest = heard && (!first || heard.seq >= first.seq) ? heard : first;
    if (latest) await get().applySandbox({ ...latest });
  },

  setActive(id) {
    const before = get().activeId;
    host().savePref("activeBackend", id);
    set({ activeId: id });
    // Leaving the sandbox removes it: it runs only while it is the backend in use.
    if (before === SANDBOX_ID && id !== SANDBOX_ID) void get().stopSandbox();
    if (id !== SANDBOX_ID || get().sandbox?.state.state === "connected") void get().probe(id);
  },

  async startSandbox(workspace) {
    const h = host();
    if (!h.sandbox) throw new Error("This app cannot start a Docker sandbox");
    h.savePref(SANDBOX_FOLDER_PREF, workspace);
    // Cleared before the switch: the app would reopen a conversation of an earlier sandbox.
    h.savePref(LAST_CONVERSATION_PREF + SANDBOX_ID, null);
    if (get().activeId !== SANDBOX_ID) {
      h.savePref("activeBackend", SANDBOX_ID);
      set({ activeId: SANDBOX_ID });
    }
    try {
      await get().applySandbox(await h.sandbox.start(workspace));
    } catch (e) {
      // The command itself failed (not the sandbox): show it where the sandbox's state goes.
      await get().applySandbox({ seq: get().sandbox?.seq ?? 0, state: { state: "failed", workspace, reason: messageOf(e), code: "docker" } });
    }
  },

  async stopSandbox() {
    const h = host();
    if (!h.sandbox) return;
    try {
      await get().applySandbox(await h.sandbox.stop());
    } catch (e) {
      console.warn("sandbox_stop failed", e);
    }
  },

  async applySandbox(s) {
    const seen = get().sandbox;
    if (seen && s.seq < seen.seq) return;
    set({ sandbox: s });
    const st = s.state;
    const update = (b: Backend) => set({ backends: get().backends.map((x) => (x.id === SANDBOX_ID ? b : x)) });
    if (st.state !== "connected") {
      update(emptySandbox);
      set({ health: { ...get().health, [SANDBOX_ID]: sandboxHealth(s) } });
      return;
    }
    const current = get().backends.find((b) => b.id === SANDBOX_ID);
    if (current?.baseUrl === st.baseUrl && current.key) return;
    const h = host();
    const key = await h.keyringGet(st.keyAccount);
    // A newer status may have arrived while the keyring answered.
    if (get().sandbox !== s) return;
    // A new sandbox holds none of the last one's conversations.
    if (h.loadPref<string>(SANDBOX_ID_PREF) !== st.id) {
      h.savePref(SANDBOX_ID_PREF, st.id);
      h.savePref(LAST_CONVERSATION_PREF + SANDBOX_ID, null);
    }
    update({ ...emptySandbox, baseUrl: trimBase(st.baseUrl), key, workspaceInside: st.workspaceInside });
    set({ health: { ...get().health, [SANDBOX_ID]: sandboxHealth(s) } });
    if (get().activeId === SANDBOX_ID) void get().probe(SANDBOX_ID);
  },

  async addRemote(name, baseUrl, key) {
    const id = `r-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`;
    const b: Backend = { id, name: name.trim() || baseUrl, kind: "remote", baseUrl: trimBase(baseUrl), key: key || null };
    const h = host();
    if (key) await h.keyringSet(keyAccount(id), key);
    const backends = [...get().backends, b];
    await h.saveBackends(backends.filter((x) => x.kind === "remote").map(({ id, name, baseUrl }) => ({ id, name, baseUrl })));
    set({ backends });
    void get().probe(id);
    return b;
  },

  async updateKey(id, key) {
    const h = host();
    if (key) await h.keyringSet(keyAccount(id), key);
    else await h.keyringDelete(keyAccount(id));
    set({ backends: get().backends.map((b) => (b.id === id ? { ...b, key: key || null } : b)) });
    void get().probe(id);
  },

  async remove(id) {
    const h = host();
    await h.keyringDelete(keyAccount(id));
    const backends = get().backends.filter((b) => b.id !== id);
    await h.saveBackends(backends.filter((x) => x.kind === "remote").map(({ id, name, baseUrl }) => ({ id, name, baseUrl })));
    const activeId = get().activeId === id ? (backends[0]?.id ?? null) : get().activeId;
    set({ backends, activeId });
  },

  async probe(id) {
    const b = get().backends.find((x) => x.id === id);
    if (!b) return { status: "unknown", demo: false };
    const sb = get().sandbox;
    if (b.kind === "sandbox" && sb && sb.state.state !== "connected") return sandboxHealth(sb);
    set({ health: { ...get().health, [id]: { ...(get().health[id] ?? { demo: false }), status: "checking" } } });
    const result = await probeBackend(apiFor(b));
    // The sandbox may have stopped meanwhile: its state speaks for it then.
    const now = get().sandbox;
    if (b.kind === "sandbox" && now && (now.state.state !== "connected" || get().backends.find((x) => x.id === id)?.baseUrl !== b.baseUrl))
      return get().health[id] ?? sandboxHealth(now);
    set({ health: { ...get().health, [id]: result } });
    return result;
  },
}));

export function useActiveBackend(): Backend | null {
  return useBackends((s) => s.backends.find((b) => b.id === s.activeId) ?? null);
}
