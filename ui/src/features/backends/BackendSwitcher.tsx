// The backend the UI points at, with its health, and the demo badge. The desktop's Docker
// sandbox is one of the choices: choosing it asks for a folder and starts a sandbox there; its
// progress, failure or folder shows beside the switch, and leaving it removes the sandbox.
import { useState } from "react";
import { messageOf } from "../../api/errors";
import { host } from "../../host";
import { SANDBOX_FOLDER_PREF, SANDBOX_ID, useBackends } from "./backendStore";
import { SandboxBar } from "./SandboxBar";

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
  const { backends, activeId, health, setActive, probe, sandbox, startSandbox, stopSandbox } = useBackends();
  const [error, setError] = useState<string | null>(null);
  const h = activeId ? health[activeId] : undefined;
  const tone = h?.status === "ok" ? "ok" : h?.status === "checking" || !h ? "warn" : "bad";
  const onSandbox = activeId === SANDBOX_ID && sandbox !== null;
  const running = sandbox !== null && sandbox.state.state !== "stopped" && sandbox.state.state !== "failed";

  /** Asks for a folder and starts the sandbox there; cancelling changes nothing. */
  async function chooseFolder() {
    setError(null);
    const pick = host().pickFolder;
    try {
      const folder = pick ? await pick() : window.prompt("Workspace folder for the Docker sandbox");
      if (folder) await startSandbox(folder);
    } catch (e) {
      setError(messageOf(e));
    }
  }

  function choose(id: string) {
    setError(null);
    if (id !== SANDBOX_ID || running) setActive(id);
    else void chooseFolder();
  }

  return (
    <div className="backend-switcher">
      <label className="sr-only" htmlFor="backend-select">
        Backend
      </label>
      <select id="backend-select" value={activeId ?? ""} onChange={(e) => choose(e.target.value)}>
        {backends.map((b) => (
          <option key={b.id} value={b.id}>
            {b.kind === "local" ? "Local" : b.kind === "sandbox" ? "Docker sandbox" : `Remote · ${b.name}`}
          </option>
        ))}
      </select>
      {(!onSandbox || sandbox.state.state === "connected") && (
        <button
          type="button"
          className={`conn conn-${tone} link`}
          title={h?.message ?? "Check again"}
          onClick={() => activeId && void probe(activeId)}
        >
          <span className="dot" aria-hidden /> {HEALTH_TEXT[h?.status ?? "unknown"]}
        </button>
      )}
      {onSandbox && (
        <SandboxBar
          status={sandbox}
          lastFolder={host().loadPref<string>(SANDBOX_FOLDER_PREF)}
          onStart={(folder) => void startSandbox(folder)}
          onChooseFolder={() => void chooseFolder()}
          onStop={() => void stopSandbox()}
        />
      )}
      {error && (
        <span className="error-text small" role="alert">
          {error}
        </span>
      )}
      {h?.demo && (
        <span className="badge demo" title="This server runs the scripted demo LLM: no real model is called">
          Demo mode
        </span>
      )}
    </div>
  );
}
