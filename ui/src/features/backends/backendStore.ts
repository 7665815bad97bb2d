// Backends the UI can talk to, which one is active, and what we know about each one's health.
// Keys are read from the host keyring into memory only; they are never persisted by this store.
import { create } from "zustand";
import { createApi, trimBase, type Api, type ServerInfoView } from "../../api/client";
import { ApiError, messageOf } from "../../api/errors";
import { host } from "../../host";

export const LOCAL_ID = "local";
export const DEMO_MODEL = "openai/tandem-demo";

export interface Backend {
  id: string;
  name: string;
  kind: "local" | "remote";
  baseUrl: string;
  key: string | null;
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

export const useBackends = create<BackendStore>()((set, get) => ({
  loaded: false,
  backends: [],
  activeId: null,
  health: {},

  async load() {
    const h = host();
    const [local, saved] = await Promise.all([h.localBackend(), h.loadBackends()]);
    const backends: Backend[] = [];
    if (local) backends.push({ id: LOCAL_ID, name: "Local", kind: "local", baseUrl: trimBase(local.baseUrl), key: local.key });
    for (const s of saved) {
      backends.push({ id: s.id, name: s.name, kind: "remote", baseUrl: s.baseUrl, key: await h.keyringGet(keyAccount(s.id)) });
    }
    const last = h.loadPref<string>("activeBackend");
    const activeId = backends.find((b) => b.id === last)?.id ?? backends[0]?.id ?? null;
    set({ loaded: true, backends, activeId });
    for (const b of backends) void get().probe(b.id);
  },

  setActive(id) {
    host().savePref("activeBackend", id);
    set({ activeId: id });
    void get().probe(id);
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
    set({ health: { ...get().health, [id]: { ...(get().health[id] ?? { demo: false }), status: "checking" } } });
    const result = await probeBackend(apiFor(b));
    set({ health: { ...get().health, [id]: result } });
    return result;
  },
}));

export function useActiveBackend(): Backend | null {
  return useBackends((s) => s.backends.find((b) => b.id === s.activeId) ?? null);
}
