// LLM profiles and defaults (confirmation policy, analyzer, budget). Profiles are stored without their keys (host prefs); each key is
// in the host keyring under `llm:<profile id>` and is read only to start a conversation: the
// UI never displays a saved key again.
import { create } from "zustand";
import type { Budget } from "../../api/tandemTypes";
import type { StartConversationRequest } from "../../api/types";
import { host } from "../../host";
import type { PolicyChoice } from "../approvals/policy";
import { readBudget } from "../budget/budget";

export interface LlmProfile {
  id: string;
  name: string;
  /** `provider/model`, as LiteLLM and OpenHands name them (e.g. `openai/gpt-5`). */
  model: string;
  baseUrl: string;
  hasKey: boolean;
}

export type AnalyzerChoice = "llm" | "none";

interface SettingsStore {
  profiles: LlmProfile[];
  defaultProfileId: string | null;
  policy: PolicyChoice;
  analyzer: AnalyzerChoice;
  /** The budget new conversations start with (on a server that has budgets); `{}`: no limit. */
  budget: Budget;
  load(): void;
  saveProfile(p: Omit<LlmProfile, "hasKey">, key: string | null): Promise<void>;
  deleteProfile(id: string): Promise<void>;
  setDefaults(d: Partial<Pick<SettingsStore, "defaultProfileId" | "policy" | "analyzer" | "budget">>): void;
}

const keyAccount = (id: string) => `llm:${id}`;

export const useSettings = create<SettingsStore>()((set, get) => ({
  profiles: [],
  defaultProfileId: null,
  policy: "risky",
  analyzer: "llm",
  budget: {},
  load() {
    const h = host();
    set({
      profiles: h.loadPref<LlmProfile[]>("llmProfiles") ?? [],
      defaultProfileId: h.loadPref<string>("defaultProfile"),
      policy: h.loadPref<PolicyChoice>("defaultPolicy") ?? "risky",
      analyzer: h.loadPref<AnalyzerChoice>("defaultAnalyzer") ?? "llm",
      // Read back through the same check as a server's answer: only positive limits.
      budget: readBudget(h.loadPref<unknown>("defaultBudget")) ?? {},
    });
  },
  async saveProfile(p, key) {
    const h = host();
    if (key) await h.keyringSet(keyAccount(p.id), key);
    const old = get().profiles.find((x) => x.id === p.id);
    const saved: LlmProfile = { ...p, hasKey: Boolean(key) || (old?.hasKey ?? false) };
    const profiles = old ? get().profiles.map((x) => (x.id === p.id ? saved : x)) : [...get().profiles, saved];
    h.savePref("llmProfiles", profiles);
    set({ profiles });
  },
  async deleteProfile(id) {
    const h = host();
    await h.keyringDelete(keyAccount(id));
    const profiles = get().profiles.filter((x) => x.id !== id);
    h.savePref("llmProfiles", profiles);
    set({ profiles, defaultProfileId: get().defaultProfileId === id ? null : get().defaultProfileId });
  },
  setDefaults(d) {
    const h = host();
    if (d.defaultProfileId !== undefined) h.savePref("defaultProfile", d.defaultProfileId);
    if (d.policy) h.savePref("defaultPolicy", d.policy);
    if (d.analyzer) h.savePref("defaultAnalyzer", d.analyzer);
    if (d.budget) h.savePref("defaultBudget", d.budget);
    set(d);
  },
}));

type AgentSpec = NonNullable<StartConversationRequest["agent"]>;

/**
 * The agent to start with a profile: the default tool preset (terminal, file editor, task
 * tracker, plus finish/think). Without a profile the server's own default LLM is asked for
 * with model `default` and no key (our server fills it from its default profile; the demo
 * server answers with its scripted LLM).
 */
export async function agentFor(profile: LlmProfile | null, serverModel: string | undefined): Promise<AgentSpec> {
  const key = profile?.hasKey ? await host().keyringGet(keyAccount(profile.id)) : null;
  const llm: Record<string, unknown> = { model: profile?.model ?? serverModel ?? "default", usage_id: "agent" };
  if (profile?.baseUrl) llm.base_url = profile.baseUrl;
  if (key) llm.api_key = key;
  const agent = {
    kind: "Agent",
    llm,
    tools: [{ name: "terminal", params: {} }, { name: "file_editor", params: {} }, { name: "task_tracker", params: {} }],
    include_default_tools: ["FinishTool", "ThinkTool"],
  };
  // Boundary: the generated AgentBase-Input is a large union with many defaulted fields; the
  // server fills every default, so the minimal agent above is what both servers accept.
  return agent as unknown as AgentSpec;
}
