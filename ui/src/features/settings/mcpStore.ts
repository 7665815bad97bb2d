// MCP servers per backend (local engine, each remote server, the sandbox: keyed by backend id).
// The list goes to the host's preferences (`mcpServers.<backend id>`) without secret values;
// those go to the host keyring as one JSON entry per server under `mcp:<backend id>:<name>`,
// like LLM keys, and are read back only to test a server or start a conversation.
import { useEffect } from "react";
import { create } from "zustand";
import { host } from "../../host";
import { mcpConfig, splitSecrets, type McpSecrets, type McpServer } from "./mcpServers";

const prefName = (backendId: string) => `mcpServers.${backendId}`;
const secretAccount = (backendId: string, name: string) => `mcp:${backendId}:${name}`;

function readList(backendId: string): McpServer[] {
  const v = host().loadPref<McpServer[]>(prefName(backendId));
  return Array.isArray(v) ? v : [];
}

/** The saved secrets of a server, or null when it has none. */
export async function loadSecrets(backendId: string, s: McpServer): Promise<McpSecrets | null> {
  if (s.secretNames.length === 0) return null;
  const raw = await host().keyringGet(secretAccount(backendId, s.name));
  if (!raw) return null;
  try {
    const v = JSON.parse(raw) as Partial<McpSecrets>;
    return { env: v.env ?? {}, headers: v.headers ?? {} };
  } catch {
    return null;
  }
}

interface McpStore {
  /** Loaded lists by backend id. */
  byBackend: Record<string, McpServer[]>;
  /** The backend's list (read from preferences the first time). */
  list(backendId: string): McpServer[];
  /**
   * Adds or replaces a server. `previous` is the name it had (editing); values named in `kept`
   * keep their saved secret. Throws naming the field when a kept secret is gone.
   */
  save(backendId: string, server: Omit<McpServer, "secretNames">, kept: string[], previous: string | null): Promise<McpServer>;
  remove(backendId: string, name: string): Promise<void>;
}

export const useMcp = create<McpStore>()((set, get) => ({
  byBackend: {},
  list(backendId) {
    const hit = get().byBackend[backendId];
    if (hit) return hit;
    const list = readList(backendId);
    set({ byBackend: { ...get().byBackend, [backendId]: list } });
    return list;
  },
  async save(backendId, server, kept, previous) {
    const h = host();
    const list = get().list(backendId);
    const old = previous ? list.find((s) => s.name === previous) : undefined;
    const oldSecrets = old ? await loadSecrets(backendId, old) : null;
    const { server: saved, secrets } = splitSecrets(server, kept, oldSecrets);
    if (saved.secretNames.length) await h.keyringSet(secretAccount(backendId, saved.name), JSON.stringify(secrets));
    else await h.keyringDelete(secretAccount(backendId, saved.name));
    if (old && old.name !== saved.name) await h.keyringDelete(secretAccount(backendId, old.name));
    const next = old ? list.map((s) => (s === old ? saved : s)) : [...list, saved];
    h.savePref(prefName(backendId), next);
    set({ byBackend: { ...get().byBackend, [backendId]: next } });
    return saved;
  },
  async remove(backendId, name) {
    const h = host();
    await h.keyringDelete(secretAccount(backendId, name));
    const next = get().list(backendId).filter((s) => s.name !== name);
    h.savePref(prefName(backendId), next);
    set({ byBackend: { ...get().byBackend, [backendId]: next } });
  },
}));

/** The React view of one backend's list. */
export function useMcpServers(backendId: string | null): McpServer[] {
  const list = useMcp((s) => (backendId ? s.byBackend[backendId] : undefined));
  useEffect(() => {
    if (backendId && !list) useMcp.getState().list(backendId);
  }, [backendId, list]);
  return list ?? NONE;
}

const NONE: McpServer[] = [];

/** The backend's servers as the agent's `mcp_config`, secrets included; null when it has none. */
export async function mcpConfigFor(backendId: string) {
  const list = useMcp.getState().list(backendId);
  return mcpConfig(await Promise.all(list.map(async (s) => [s, await loadSecrets(backendId, s)] as [McpServer, McpSecrets | null])));
}

/** The agent spec with `mcp_config` set to the backend's servers (unchanged when it has none). */
export async function withMcpConfig<A>(agent: A, backendId: string): Promise<A> {
  const cfg = await mcpConfigFor(backendId);
  if (!cfg) return agent;
  // Boundary: the generated agent type is a large union; every variant has `mcp_config`.
  return { ...(agent as object), mcp_config: cfg } as A;
}
