// "Move to…": the conversation continues on another backend (the local engine, a Docker
// sandbox, a remote server) with its events and its workspace; this backend keeps a read-only
// record. The person picks the backend; the UI then switches to it with the conversation open.
import { useState } from "react";
import type { Api } from "../../api/client";
import type { ImportedConversation } from "../../api/tandemTypes";
import type { Backend } from "../backends/backendStore";
import { MoveError, moveConversation, type MoveStep } from "./move";

export interface MoveDialogProps {
  source: Pick<Api, "exportCapsule" | "markMoved">;
  conversationId: string;
  /** The backends it can move to, with each one's API. */
  targets: readonly { backend: Backend; api: Pick<Api, "importCapsule" | "arrival" | "baseUrl"> & Partial<Pick<Api, "movedRecord">> }[];
  onClose(): void;
  onMoved(target: Backend, imported: ImportedConversation): void;
}

const STEP_TEXT: Record<MoveStep, string> = {
  export: "Exporting…",
  import: "Importing on the target…",
  fence: "Marking this copy as moved…",
  arrival: "Starting it on the target…",
};

export function MoveDialog({ source, conversationId, targets, onClose, onMoved }: MoveDialogProps) {
  const [targetId, setTargetId] = useState(targets[0]?.backend.id ?? "");
  const [force, setForce] = useState(false);
  const [workingDir, setWorkingDir] = useState("");
  const [step, setStep] = useState<MoveStep | null>(null);
  const [error, setError] = useState<string | null>(null);
  const target = targets.find((t) => t.backend.id === targetId);

  async function move() {
    if (!target) return;
    setError(null);
    try {
      const imported = await moveConversation({ source, target: target.api, conversationId, force, workingDir, onStep: setStep });
      onMoved(target.backend, imported);
    } catch (e) {
      setError(e instanceof MoveError ? e.message : String(e));
    } finally {
      setStep(null);
    }
  }

  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-label="Move to another backend" onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <form
        className="dialog move-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (step === null) void move();
        }}
      >
        <div className="dialog-head">
          <h2>Move to…</h2>
          <button type="button" onClick={onClose} aria-label="Close">
            ✕
          </button>
        </div>
        <p className="hint">
          The conversation continues on the backend you pick, with every event and its workspace's files (in a new folder there). This backend keeps a
          read-only record of it.
        </p>
        {targets.length === 0 ? (
          <div className="hint" role="note">
            No other backend can take it: add a remote server or start a sandbox first.
          </div>
        ) : (
          <fieldset>
            <legend>Backend</legend>
            {targets.map((t) => (
              <label key={t.backend.id} className="inline">
                <input type="radio" name="move-target" value={t.backend.id} checked={t.backend.id === targetId} onChange={() => setTargetId(t.backend.id)} />
                {t.backend.name} <span className="hint mono">{t.backend.baseUrl}</span>
              </label>
            ))}
          </fieldset>
        )}
        <label>
          Workspace folder there (optional)
          <input value={workingDir} placeholder="a new folder under its workspace root" onChange={(e) => setWorkingDir(e.target.value)} />
        </label>
        <label className="inline">
          <input type="checkbox" checked={force} onChange={(e) => setForce(e.target.checked)} />
          Move even if it is running (paused at the end of its step) or an action waits for approval (rejected)
        </label>
        {step && (
          <div className="hint" role="status">
            {STEP_TEXT[step]}
          </div>
        )}
        {error && (
          <div className="error-text" role="alert">
            {error}
          </div>
        )}
        <div className="dialog-actions">
          <button type="submit" className="primary" disabled={step !== null || !target}>
            {step ? "Moving…" : "Move"}
          </button>
          <button type="button" autoFocus onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}
