// The backend the UI points at, with its health, and the demo badge.
import { useBackends } from "./backendStore";

const HEALTH_TEXT: Record<string, string> = {
  unknown: "not checked",
  checking: "checking…",
  ok: "connected",
  unauthorized: "unauthorized",
  down: "unreachable",
  not_agent_server: "not an agent server",
  error: "error",
};

export function BackendSwitcher() {
  const { backends, activeId, health, setActive, probe } = useBackends();
  const h = activeId ? health[activeId] : undefined;
  const tone = h?.status === "ok" ? "ok" : h?.status === "checking" || !h ? "warn" : "bad";
  return (
    <div className="backend-switcher">
      <label className="sr-only" htmlFor="backend-select">
        Backend
      </label>
      <select id="backend-select" value={activeId ?? ""} onChange={(e) => setActive(e.target.value)}>
        {backends.map((b) => (
          <option key={b.id} value={b.id}>
            {b.kind === "local" ? "Local" : `Remote · ${b.name}`}
          </option>
        ))}
      </select>
      <button
        type="button"
        className={`conn conn-${tone} link`}
        title={h?.message ?? "Check again"}
        onClick={() => activeId && void probe(activeId)}
      >
        <span className="dot" aria-hidden /> {HEALTH_TEXT[h?.status ?? "unknown"]}
      </button>
      {h?.demo && (
        <span className="badge demo" title="This server runs the scripted demo LLM: no real model is called">
          Demo mode
        </span>
      )}
    </div>
  );
}
