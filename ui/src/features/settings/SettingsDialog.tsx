// Settings: LLM profiles (keys to the keyring, never shown again), defaults for new
// conversations (confirmation policy, analyzer, budget), backends, the active backend's MCP servers,
// appearance.
import { useState } from "react";
import { messageOf } from "../../api/errors";
import { useUi, type Theme } from "../../store/ui";
import { useBackends } from "../backends/backendStore";
import type { PolicyChoice } from "../approvals/policy";
import { DefaultBudget } from "./DefaultBudget";
import { KeyringWarning } from "./KeyringWarning";
import { McpServersSection } from "./McpServersSection";
import { useSettings, type AnalyzerChoice } from "./settingsStore";

function Profiles() {
  const { profiles, saveProfile, deleteProfile, defaultProfileId, setDefaults } = useSettings();
  const [draft, setDraft] = useState({ id: "", name: "", model: "", baseUrl: "", key: "" });
  const [error, setError] = useState<string | null>(null);
  return (
    <section aria-label="LLM profiles">
      <h3>LLM profiles</h3>
      <KeyringWarning />
      <ul className="plain">
        {profiles.map((p) => (
          <li key={p.id} className="row">
            <strong>{p.name}</strong> <span className="mono">{p.model}</span>
            {p.baseUrl && <span className="muted mono">{p.baseUrl}</span>}
            <span className="badge">{p.hasKey ? "key saved" : "no key"}</span>
            <label>
              <input type="radio" name="default-profile" checked={defaultProfileId === p.id} onChange={() => setDefaults({ defaultProfileId: p.id })} /> default
            </label>
            <button type="button" className="link" onClick={() => setDraft({ id: p.id, name: p.name, model: p.model, baseUrl: p.baseUrl, key: "" })}>
              edit
            </button>
            <button
              type="button"
              className="link danger"
              onClick={() => {
                setError(null);
                deleteProfile(p.id).catch((err: unknown) => setError(messageOf(err)));
              }}
            >
              delete
            </button>
          </li>
        ))}
      </ul>
      <form
        className="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          setError(null);
          const id = draft.id || `p-${Date.now().toString(36)}`;
          saveProfile({ id, name: draft.name.trim() || draft.model, model: draft.model.trim(), baseUrl: draft.baseUrl.trim() }, draft.key || null)
            .then(() => setDraft({ id: "", name: "", model: "", baseUrl: "", key: "" }))
            .catch((err: unknown) => setError(messageOf(err)));
        }}
      >
        <input aria-label="Profile name" placeholder="Name" value={draft.name} onChange={(e) => setDraft({ ...draft, name: e.target.value })} />
        <input aria-label="Model" required placeholder="provider/model, e.g. openai/gpt-5" value={draft.model} onChange={(e) => setDraft({ ...draft, model: e.target.value })} />
        <input aria-label="Base URL" placeholder="Base URL (optional)" value={draft.baseUrl} onChange={(e) => setDraft({ ...draft, baseUrl: e.target.value })} />
        <input
          aria-label="API key"
          type="password"
          autoComplete="off"
          placeholder={draft.id ? "New key (leave empty to keep)" : "API key"}
          value={draft.key}
          onChange={(e) => setDraft({ ...draft, key: e.target.value })}
        />
        <button type="submit" className="primary">
          {draft.id ? "Update profile" : "Add profile"}
        </button>
      </form>
      {error && <div className="error-text">{error}</div>}
    </section>
  );
}

function Defaults() {
  const { policy, analyzer, setDefaults } = useSettings();
  return (
    <section aria-label="Defaults">
      <h3>New conversations</h3>
      <div className="row">
        <label>
          Ask before acting
          <select value={policy} onChange={(e) => setDefaults({ policy: e.target.value as PolicyChoice })}>
            <option value="always">always</option>
            <option value="risky">if risky</option>
            <option value="never">never</option>
          </select>
        </label>
        <label>
          Security analyzer
          <select value={analyzer} onChange={(e) => setDefaults({ analyzer: e.target.value as AnalyzerChoice })}>
            <option value="llm">the model rates each action</option>
            <option value="none">none</option>
          </select>
        </label>
      </div>
      <DefaultBudget />
    </section>
  );
}

function Backends() {
  const { backends, health, addRemote, remove, probe, updateKey } = useBackends();
  const [draft, setDraft] = useState({ name: "", url: "", key: "" });
  const [error, setError] = useState<string | null>(null);
  return (
    <section aria-label="Backends">
      <h3>Backends</h3>
      <KeyringWarning />
      <ul className="plain">
        {backends.map((b) => (
          <li key={b.id} className="row">
            <strong>{b.kind === "local" ? "Local" : b.name}</strong>
            <span className="mono muted">{b.baseUrl}</span>
            <span className="badge">{health[b.id]?.status ?? "unknown"}</span>
            {health[b.id]?.message && <span className="error-text">{health[b.id]?.message}</span>}
            <button type="button" className="link" onClick={() => void probe(b.id)}>
              test
            </button>
            {b.kind === "remote" && (
              <>
                <button
                  type="button"
                  className="link"
                  onClick={() => {
                    const k = window.prompt(`New session key for ${b.name}`);
                    if (k === null) return;
                    setError(null);
                    updateKey(b.id, k).catch((err: unknown) => setError(messageOf(err)));
                  }}
                >
                  change key
                </button>
                <button
                  type="button"
                  className="link danger"
                  onClick={() => {
                    setError(null);
                    remove(b.id).catch((err: unknown) => setError(messageOf(err)));
                  }}
                >
                  remove
                </button>
              </>
            )}
          </li>
        ))}
      </ul>
      <form
        className="grid-form"
        onSubmit={(e) => {
          e.preventDefault();
          setError(null);
          let url: URL;
          try {
            url = new URL(draft.url.trim());
            if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("scheme");
          } catch {
            setError("Enter an http:// or https:// URL, e.g. http://10.0.0.5:8000");
            return;
          }
          addRemote(draft.name, url.toString(), draft.key)
            .then(() => setDraft({ name: "", url: "", key: "" }))
            .catch((err: unknown) => setError(messageOf(err)));
        }}
      >
        <input aria-label="Backend name" placeholder="Name" value={draft.name} onChange={(e) => setDraft({ ...draft, name: e.target.value })} />
        <input aria-label="Server URL" required placeholder="http://host:8000" value={draft.url} onChange={(e) => setDraft({ ...draft, url: e.target.value })} />
        <input aria-label="Session key" type="password" autoComplete="off" placeholder="Session key" value={draft.key} onChange={(e) => setDraft({ ...draft, key: e.target.value })} />
        <button type="submit" className="primary">
          Add remote backend
        </button>
      </form>
      {error && <div className="error-text">{error}</div>}
    </section>
  );
}

export function SettingsDialog() {
  const open = useUi((s) => s.settingsOpen);
  const setOpen = useUi((s) => s.setSettings);
  const theme = useUi((s) => s.theme);
  const setTheme = useUi((s) => s.setTheme);
  if (!open) return null;
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-label="Settings" onKeyDown={(e) => e.key === "Escape" && setOpen(false)}>
      <div className="dialog wide">
        <div className="dialog-head">
          <h2>Settings</h2>
          <button type="button" autoFocus onClick={() => setOpen(false)} aria-label="Close settings">
            ✕
          </button>
        </div>
        <Profiles />
        <Defaults />
        <Backends />
        <McpServersSection />
        <section aria-label="Appearance">
          <h3>Appearance</h3>
          <select value={theme} onChange={(e) => setTheme(e.target.value as Theme)} aria-label="Theme">
            <option value="system">Follow the system</option>
            <option value="dark">Dark</option>
            <option value="light">Light</option>
          </select>
        </section>
      </div>
    </div>
  );
}
