// "Rewind to here": what to take back — the files, the conversation (its head moves to the
// event; later events stay on another branch) or both — with a preview of what a rewind would
// write (a dry run: the files restored or deleted, the ones left alone and why, and the diff),
// then the rewind once the person confirms.
import { useEffect, useState } from "react";
import type { Api } from "../../api/client";
import type { RestoreScope, RewindFiles, RewindResponse } from "../../api/tandemTypes";
import { DiffView } from "../timeline/FileDiffView";
import { parseUnifiedDiff } from "../timeline/unifiedDiff";
import { fileCount } from "./attribution";
import { rewindErrorText } from "./errors";

type Preview = { state: "loading" } | { state: "ready"; answer: RewindResponse } | { state: "failed"; message: string };

export interface RewindDialogProps {
  api: Pick<Api, "rewind">;
  conversationId: string;
  /** The event whose workspace to go back to. */
  eventId: string;
  onClose(): void;
  /** The rewind is done (files written, the conversation's head moved); the dialog is to close. */
  onRewound(answer: RewindResponse): void;
}

const SCOPES: { scope: RestoreScope; label: string; hint: string }[] = [
  { scope: "code", label: "Files", hint: "the workspace's files go back to how they were here" },
  { scope: "chat", label: "Conversation", hint: "the agent continues from here; later events stay on another branch" },
  { scope: "both", label: "Both", hint: "the files and the conversation" },
];

/** What a rewind of the conversation does, said before it is done. */
export const CHAT_REWIND_TEXT =
  "The conversation goes back to this event: the agent's next run continues from here, as if what came after had not happened. The later events are not deleted: they stay on another branch of the conversation.";

function PreviewView({ answer }: { answer: RewindResponse }) {
  const files = parseUnifiedDiff(answer.diff ?? "");
  return (
    <>
      {answer.restored.length === 0 ? (
        <p role="note">Nothing to restore: {answer.skipped.length ? "every file that differs is left as it is (below)." : "the files are as they were here."}</p>
      ) : (
        <section aria-label="Files to restore">
          <h3>Restored ({fileCount(answer.restored.length)})</h3>
          <ul className="plain changed-paths">
            {answer.restored.map((r) => (
              <li key={r.path}>
                <span className={r.change === "delete" ? "change-deleted" : "change-modified"}>{r.change === "delete" ? "delete" : "restore"}</span>{" "}
                <span className="mono">{r.path}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
      {answer.skipped.length > 0 && (
        <section aria-label="Files left as they are">
          <h3>Left as they are ({fileCount(answer.skipped.length)})</h3>
          <ul className="plain changed-paths">
            {answer.skipped.map((s) => (
              <li key={s.path}>
                <span className="mono">{s.path}</span> <span className="hint">— {s.reason}</span>
              </li>
            ))}
          </ul>
        </section>
      )}
      {files.length > 0 && (
        <section aria-label="Diff of the rewind" className="rewind-diff">
          <h3>What the rewind writes</h3>
          {files.map((f) => (
            <DiffView key={f.path} path={f.path} rows={f.rows} note={f.note} />
          ))}
        </section>
      )}
    </>
  );
}

export function RewindDialog({ api, conversationId, eventId, onClose, onRewound }: RewindDialogProps) {
  const [restore, setRestore] = useState<RestoreScope>("code");
  const [files, setFiles] = useState<RewindFiles>("agent");
  const [preview, setPreview] = useState<Preview>({ state: "loading" });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  // The preview is a dry run: nothing is written until the person presses Rewind.
  useEffect(() => {
    let current = true;
    setPreview({ state: "loading" });
    setError(null);
    api.rewind(conversationId, { event_id: eventId, files, dry_run: true, restore }).then(
      (answer) => current && setPreview({ state: "ready", answer }),
      (e: unknown) => current && setPreview({ state: "failed", message: rewindErrorText(e) }),
    );
    return () => {
      current = false;
    };
  }, [api, conversationId, eventId, files, restore]);

  async function rewind() {
    setBusy(true);
    setError(null);
    try {
      onRewound(await api.rewind(conversationId, { event_id: eventId, files, restore }));
    } catch (e) {
      setError(rewindErrorText(e));
    } finally {
      setBusy(false);
    }
  }

  const ready = preview.state === "ready" ? preview.answer : null;
  const code = restore !== "chat";
  // A rewind of the conversation always does something; one of the files only when a file differs.
  const canRewind = ready !== null && (restore !== "code" || ready.restored.length > 0);
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-label="Rewind to here" onKeyDown={(e) => e.key === "Escape" && onClose()}>
      <div className="dialog wide rewind-dialog">
        <div className="dialog-head">
          <h2>Rewind to here</h2>
          <button type="button" onClick={onClose} aria-label="Close">
            ✕
          </button>
        </div>
        <fieldset className="rewind-scope">
          <legend>What to rewind</legend>
          {SCOPES.map((s) => (
            <label key={s.scope} className="inline">
              <input type="radio" name="rewind-scope" value={s.scope} checked={restore === s.scope} onChange={() => setRestore(s.scope)} />
              {s.label} <span className="hint">— {s.hint}</span>
            </label>
          ))}
        </fieldset>
        {code ? (
          <>
            <p className="hint">Nothing is written until you press Rewind; you can undo the files' rewind after.</p>
            <label className="inline">
              <input type="checkbox" checked={files === "all"} onChange={(e) => setFiles(e.target.checked ? "all" : "agent")} />
              Also restore files a person edited
            </label>
          </>
        ) : null}
        {restore !== "code" && (
          <p role="note" aria-label="What happens to the conversation">
            {CHAT_REWIND_TEXT} {restore === "both" ? "The files go back too (below)." : "The files are not touched."}
          </p>
        )}
        {preview.state === "loading" && <p className="hint">Working out what would change…</p>}
        {preview.state === "failed" && (
          <div className="error-text" role="alert">
            {preview.message}
          </div>
        )}
        {ready && code && <PreviewView answer={ready} />}
        {error && (
          <div className="error-text" role="alert">
            {error}
          </div>
        )}
        <div className="dialog-actions">
          <button type="button" className="primary" disabled={!canRewind || busy} onClick={() => void rewind()}>
            {busy ? "Rewinding…" : "Rewind"}
          </button>
          <button type="button" autoFocus onClick={onClose}>
            Cancel
          </button>
        </div>
      </div>
    </div>
  );
}
