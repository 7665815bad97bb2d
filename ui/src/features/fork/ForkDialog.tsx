// "Fork from here": a new conversation that starts with this one's events up to a row, with its
// model and settings, the files either kept as they are now, restored to that moment, or that
// moment's files in a git worktree of their own (so both conversations run side by side). This
// conversation stays as it is; the UI then opens the fork.
import { useState } from "react";
import type { Api } from "../../api/client";
import { ApiError, messageOf } from "../../api/errors";
import type { ConversationInfo, ForkConversationRequest, ForkWorkspace } from "../../api/tandemTypes";

export interface ForkDialogProps {
  api: Pick<Api, "fork">;
  conversationId: string;
  /** The last event the fork keeps. */
  eventId: string;
  /** Whether the server keeps checkpoints to restore the files from (a Tandem server with some). */
  canRestoreFiles: boolean;
  onClose(): void;
  /** The fork exists: open it. */
  onForked(info: ConversationInfo): void;
}

/** Why a fork failed, in the server's words ("no event … in this conversation"). */
export function forkErrorText(e: unknown): string {
  const why = e instanceof ApiError ? (e.detail ?? e.message) : messageOf(e);
  return `Cannot fork: ${why}`;
}

/** The request for a fork from `eventId`: `workspace` only when it is not `keep`, so an upstream server reads it too. */
export function forkRequest(eventId: string, workspace: ForkWorkspace, title: string): ForkConversationRequest {
  const body: ForkConversationRequest = { from_event_id: eventId };
  if (workspace !== "keep") body.workspace = workspace;
  const t = title.trim();
  if (t) body.title = t;
  return body;
}

export function ForkDialog({ api, conversationId, eventId, canRestoreFiles, onClose, onForked }: ForkDialogProps) {
  const [workspace, setWorkspace] = useState<ForkWorkspace>("keep");
  const [title, setTitle] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function fork() {
    setBusy(true);
    setError(null);
    try {
      onForked(await api.fork(conversationId, forkRequest(eventId, workspace, title)));
    } catch (e) {
      setError(forkErrorText(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-label="Fork from here" onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <form
        className="dialog fork-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (!busy) void fork();
        }}
      >
        <div className="dialog-head">
          <h2>Fork from here</h2>
          <button type="button" onClick={onClose} aria-label="Close">
            ✕
          </button>
        </div>
        <p className="hint">
          A new conversation starts with this one's events up to here, its model and settings; the agent there continues from this point. This conversation
          stays as it is.
        </p>
        <fieldset>
          <legend>The workspace's files</legend>
          <label className="inline">
            <input type="radio" name="fork-workspace" value="keep" checked={workspace === "keep"} onChange={() => setWorkspace("keep")} />
            Keep the files as they are now
          </label>
          <label className="inline">
            <input
              type="radio"
              name="fork-workspace"
              value="restore"
              checked={workspace === "restore"}
              disabled={!canRestoreFiles}
              onChange={() => setWorkspace("restore")}
            />
            Restore the files to this moment
            {!canRestoreFiles && <span className="hint"> — this server keeps no checkpoints of them</span>}
          </label>
          <label className="inline">
            <input
              type="radio"
              name="fork-workspace"
              value="worktree"
              checked={workspace === "worktree"}
              disabled={!canRestoreFiles}
              onChange={() => setWorkspace("worktree")}
            />
            This moment's files in a new git worktree (branch tandem/…), so both conversations can run side by side
          </label>
        </fieldset>
        <label>
          Title (optional)
          <input value={title} maxLength={200} placeholder="Fork of …" onChange={(e) => setTitle(e.target.value)} />
        </label>
        {error && (
          <div className="error-text" role="alert">
            {error}
          </div>
        )}
        <div className="dialog-actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? "Forking…" : "Fork"}
          </button>
          <button type="button" autoFocus onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}
