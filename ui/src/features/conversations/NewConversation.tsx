// Start a conversation in a workspace folder: a native picker through the host in the desktop
// app, a text field in the browser (a browser cannot name a folder on the server's disk). The
// field starts with the folder used last, else the server's home folder.
import { useState } from "react";
import type { ServerInfoView } from "../../api/client";
import { messageOf } from "../../api/errors";
import { host } from "../../host";
import { policyFor, type PolicyChoice } from "../approvals/policy";
import { useBackends, type Backend } from "../backends/backendStore";
import { budgetSummary, hasLimit, offersBudgets } from "../budget/budget";
import { useMcpServers, withMcpConfig } from "../settings/mcpStore";
import { agentFor, useSettings } from "../settings/settingsStore";
import { useConversationMutations } from "./queries";

/** The folder the form starts with: the one used last, else the home folder the server names
 * (server_info's `home_dir`, given to a client with the session key), else nothing. */
export function defaultWorkspace(last: string | null | undefined, info: ServerInfoView | undefined): string {
  if (typeof last === "string" && last.trim()) return last.trim();
  const home = info?.home_dir;
  return typeof home === "string" ? home : "";
}

/** The upstream tool set that gives the agent a browser (navigate, click, type, …). */
export const BROWSER_TOOL_SET = "browser_tool_set";
/** Tandem's tool for the agent to ask a person to take over the browser (not upstream's). */
export const BROWSER_HANDOFF = "browser_request_handoff";

/**
 * Whether the server can give the agent a browser: it lists `browser_tool_set` among its
 * usable tools. Unknown (no info yet, or a server that lists none) counts as yes: the server
 * names a tool it lacks when the conversation starts.
 */
export function offersBrowserTools(info: ServerInfoView | undefined): boolean {
  const tools = info?.usable_tools;
  return !Array.isArray(tools) || tools.length === 0 || tools.includes(BROWSER_TOOL_SET);
}

/**
 * The agent spec with the browser tools added to its tools, and the handoff tool when the
 * server lists it (Tandem's servers do; upstream's would refuse the name).
 */
export function withBrowserTools<A>(agent: A, info?: ServerInfoView): A {
  // Boundary: the generated agent type is a large union; every variant has `tools`.
  const a = agent as unknown as { tools?: { name: string; params: Record<string, unknown> }[] };
  const wanted = [BROWSER_TOOL_SET];
  if (Array.isArray(info?.usable_tools) && info.usable_tools.includes(BROWSER_HANDOFF)) wanted.push(BROWSER_HANDOFF);
  const tools = [...(a.tools ?? [])];
  for (const name of wanted) if (!tools.some((t) => t.name === name)) tools.push({ name, params: {} });
  return { ...a, tools } as unknown as A;
}

/** Upstream's tool set that gives the agent the `task` tool: it hands tasks to sub-agents, each
 * a child conversation listed under this one. */
export const TASK_TOOL_SET = "task_tool_set";

/** Whether the server can run sub-agents; unknown counts as yes, as for the browser tools. */
export function offersSubAgents(info: ServerInfoView | undefined): boolean {
  const tools = info?.usable_tools;
  return !Array.isArray(tools) || tools.length === 0 || tools.includes(TASK_TOOL_SET);
}

/** The agent spec with the sub-agents' tool set added. */
export function withSubAgents<A>(agent: A): A {
  // Boundary: the generated agent type is a large union; every variant has `tools`.
  const a = agent as unknown as { tools?: { name: string; params: Record<string, unknown> }[] };
  const tools = [...(a.tools ?? [])];
  if (!tools.some((t) => t.name === TASK_TOOL_SET)) tools.push({ name: TASK_TOOL_SET, params: {} });
  return { ...a, tools } as unknown as A;
}

export function NewConversation({ backend, onCreated, onCancel }: { backend: Backend; onCreated(id: string): void; onCancel(): void }) {
  const settings = useSettings();
  const health = useBackends((s) => s.health[backend.id]);
  const h = host();
  const [last] = useState(() => h.loadPref<string>("lastWorkspace"));
  // Null until the person types or picks a folder: the default then follows the server's info,
  // which may arrive after the form opened.
  const [typed, setFolder] = useState<string | null>(null);
  // A sandbox's folder is its mount inside (`/workspace`), not a host path used elsewhere.
  const folder = typed ?? (backend.kind === "sandbox" ? (backend.workspaceInside ?? "") : defaultWorkspace(last, health?.info));
  const [task, setTask] = useState("");
  const [profileId, setProfileId] = useState<string>(settings.defaultProfileId ?? "");
  const [policy, setPolicy] = useState<PolicyChoice>(settings.policy);
  const browserOffered = offersBrowserTools(health?.info);
  const [browser, setBrowser] = useState(true);
  const subAgentsOffered = offersSubAgents(health?.info);
  const [subAgents, setSubAgents] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const mcp = useMcpServers(backend.id);
  // The default budget from Settings, on a server that has budgets (upstream's may refuse the field).
  const budget = hasLimit(settings.budget) && offersBudgets(health?.info) ? settings.budget : null;
  const { create } = useConversationMutations(backend);

  async function submit() {
    setError(null);
    try {
      const profile = settings.profiles.find((p) => p.id === profileId) ?? null;
      const base = await agentFor(profile, health?.info?.llm_model);
      const browsing = browser && browserOffered ? withBrowserTools(base, health?.info) : base;
      const tooled = subAgents && subAgentsOffered ? withSubAgents(browsing) : browsing;
      // The backend's MCP servers from Settings, in upstream's `{"mcpServers": {...}}` form.
      const agent = await withMcpConfig(tooled, backend.id);
      const info = await create.mutateAsync({
        agent,
        workspace: { kind: "LocalWorkspace", working_dir: folder.trim() },
        confirmation_policy: policyFor(policy),
        ...(settings.analyzer === "llm" ? { security_analyzer: { kind: "LLMSecurityAnalyzer" } } : {}),
        ...(budget ? { budget } : {}),
        ...(task.trim()
          ? { initial_message: { role: "user", content: [{ type: "text", text: task.trim() }], run: true } }
          : {}),
      });
      if (backend.kind !== "sandbox") h.savePref("lastWorkspace", folder.trim());
      onCreated(info.id);
    } catch (e) {
      setError(messageOf(e));
    }
  }

  return (
    <form
      className="new-conv"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
      aria-label="New conversation"
    >
      <label>
        Workspace folder (on the server)
        <div className="row">
          <input
            required
            autoFocus
            className="mono"
            placeholder="/home/me/project"
            value={folder}
            onChange={(e) => setFolder(e.target.value)}
          />
          {h.pickFolder && backend.kind === "local" && (
            <button
              type="button"
              onClick={() => {
                void h.pickFolder?.().then((p) => p && setFolder(p));
              }}
            >
              Browse…
            </button>
          )}
        </div>
      </label>
      <label>
        Task (optional; starts the agent)
        <textarea rows={3} value={task} onChange={(e) => setTask(e.target.value)} />
      </label>
      <div className="row">
        <label>
          LLM
          <select value={profileId} onChange={(e) => setProfileId(e.target.value)}>
            <option value="">Server default{health?.demo ? " (demo)" : ""}</option>
            {settings.profiles.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name} ({p.model})
              </option>
            ))}
          </select>
        </label>
        <label>
          Ask before acting
          <select value={policy} onChange={(e) => setPolicy(e.target.value as PolicyChoice)}>
            <option value="always">always</option>
            <option value="risky">if risky</option>
            <option value="never">never</option>
          </select>
        </label>
      </div>
      {browserOffered && (
        <label className="inline">
          <input type="checkbox" checked={browser} onChange={(e) => setBrowser(e.target.checked)} /> Browser tools (the agent can browse the web; you can
          watch and take over)
        </label>
      )}
      {subAgentsOffered && (
        <label className="inline">
          <input type="checkbox" checked={subAgents} onChange={(e) => setSubAgents(e.target.checked)} /> Sub-agents (the agent can hand tasks to
          sub-agents; each is a conversation listed under this one)
        </label>
      )}
      {mcp.length > 0 && (
        <p className="hint">
          MCP servers (from Settings): {mcp.map((s) => s.name).join(", ")}
        </p>
      )}
      {hasLimit(settings.budget) && (
        <p className="hint">
          {budget
            ? `Budget (from Settings): ${budgetSummary(budget)}; the run pauses when it is reached.`
            : "This server has no budgets: the default budget from Settings does not apply here."}
        </p>
      )}
      {backend.kind === "local" && (
        <p className="hint">
          Local: the agent runs as you on this machine, in the workspace folder, and can read what you can (it never gets Tandem's keys). Use
          a Docker sandbox to isolate it.
        </p>
      )}
      {backend.kind === "sandbox" && (
        <p className="hint">The Docker sandbox runs the agent's commands in a container; only the folder mounted at {backend.workspaceInside ?? "/workspace"} is shared with this machine.</p>
      )}
      {error && (
        <div className="error-text" role="alert">
          {error}
        </div>
      )}
      <div className="row">
        <button type="submit" className="primary" disabled={create.isPending || !folder.trim()}>
          {create.isPending ? "Starting…" : "Start"}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
