// Per-hunk review of one changed file in the Changes view: each hunk of its diff with Accept
// and Reject…. Rejecting reverts that hunk on disk and tells the agent why (the server's
// reject-hunk route); accepting is the person's own note, kept in this browser, so the hunks
// still to look at stand out. A hunk the agent changes afterwards is a new hunk and shows again.
import { useEffect, useMemo, useRef, useState } from "react";
import type { Api } from "../../api/client";
import { ApiError, messageOf } from "../../api/errors";
import type { RejectHunkResponse } from "../../api/tandemTypes";
import { acceptedId, loadAccepted, saveAccepted, splitHunks, type Hunk } from "./hunks";

export interface HunkReviewProps {
  api: Pick<Api, "rejectHunk">;
  conversationId: string;
  /** The file, as the diff names it. */
  path: string;
  /** The file's unified diff (`FileDiff.diff`). */
  diff: string;
  /** A hunk was reverted on disk, or the diff was found stale: whatever shows the file is to reload. */
  onFilesChanged(): void;
  /** Show this hunk in the diff editor. */
  onReveal?(hunk: Hunk): void;
}

type Notice = { ok: boolean; text: string };

/** What the person reads after a rejection. */
export function rejectedText(path: string, answer: RejectHunkResponse): string {
  const what = answer.exists ? "Reverted" : `Reverted; ${path} is removed`;
  return answer.agent_told ? `${what}; the agent will read why at its next step` : `${what}, but the agent could not be told`;
}

/** Why a rejection failed, in words that say what to do. */
export function rejectErrorText(e: unknown): string {
  if (e instanceof ApiError && e.kind === "conflict") return "This hunk is no longer in the diff (the file changed): the changes are reloaded.";
  if (e instanceof ApiError && e.detail) return `Cannot reject the hunk: ${e.detail}`;
  return `Cannot reject the hunk: ${messageOf(e)}`;
}

export function HunkReview({ api, conversationId, path, diff, onFilesChanged, onReveal }: HunkReviewProps) {
  const hunks = useMemo(() => splitHunks(diff), [diff]);
  const [accepted, setAccepted] = useState(() => loadAccepted(conversationId));
  useEffect(() => setAccepted(loadAccepted(conversationId)), [conversationId]);
  /** The hunk whose reason is being typed (by its text: indices move when the diff changes). */
  const [rejecting, setRejecting] = useState<string | null>(null);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);
  const [notice, setNotice] = useState<Notice | null>(null);
  const list = useRef<HTMLOListElement>(null);

  // Another file, or the hunk being rejected is gone: nothing is being typed any more.
  useEffect(() => {
    setRejecting((r) => (r !== null && hunks.some((h) => h.text === r) ? r : null));
  }, [hunks]);

  function setAccept(h: Hunk, on: boolean) {
    const next = new Set(accepted);
    const id = acceptedId(path, h.text);
    if (on) next.add(id);
    else next.delete(id);
    setAccepted(next);
    saveAccepted(conversationId, next);
  }

  function startReject(h: Hunk) {
    setRejecting(h.text);
    setReason("");
    setNotice(null);
  }

  function focusHunk(index: number) {
    // After the row re-renders without its input, keep the keyboard where it was.
    requestAnimationFrame(() => list.current?.querySelectorAll<HTMLElement>("[data-hunk-focus]")[index]?.focus());
  }

  async function reject(h: Hunk, index: number) {
    setBusy(true);
    const why = reason.trim();
    try {
      const answer = await api.rejectHunk(conversationId, why ? { path, hunk: h.text, reason: why } : { path, hunk: h.text });
      setNotice({ ok: true, text: rejectedText(path, answer) });
      setRejecting(null);
      onFilesChanged();
    } catch (e) {
      setNotice({ ok: false, text: rejectErrorText(e) });
      if (e instanceof ApiError && e.kind === "conflict") {
        setRejecting(null);
        onFilesChanged();
      } else {
        focusHunk(index);
      }
    } finally {
      setBusy(false);
    }
  }

  if (hunks.length === 0) return null;
  const open = hunks.filter((h) => !accepted.has(acceptedId(path, h.text))).length;
  return (
    <section className="hunk-review" aria-label={`Hunks of ${path}`}>
      <div className="hunk-review-head">
        <span>
          {hunks.length} {hunks.length === 1 ? "hunk" : "hunks"}
        </span>
        {open < hunks.length && <span className="hint">{hunks.length - open} accepted</span>}
        {notice && (
          <span className={notice.ok ? "hint" : "error-text"} role={notice.ok ? "status" : "alert"}>
            {notice.text}
          </span>
        )}
      </div>
      <ol className="hunk-list" ref={list}>
        {hunks.map((h, i) => {
          const n = `hunk ${i + 1} of ${path}`;
          if (accepted.has(acceptedId(path, h.text))) {
            return (
              <li key={`${i}:${h.text}`} className="hunk accepted">
                <span className="hint">
                  Hunk {i + 1} accepted <span className="mono">{h.header}</span>
                </span>
                <button type="button" className="link" data-hunk-focus aria-label={`Undo accepting ${n}`} onClick={() => setAccept(h, false)}>
                  Undo
                </button>
              </li>
            );
          }
          const typing = rejecting === h.text;
          return (
            <li key={`${i}:${h.text}`} className="hunk">
              <button
                type="button"
                className="hunk-summary"
                data-hunk-focus
                aria-label={`Show ${n} in the diff`}
                title="Show it in the diff"
                onClick={() => onReveal?.(h)}
              >
                <span className="mono hunk-header">{h.header}</span>{" "}
                <span className="change-added">+{h.added}</span> <span className="change-deleted">−{h.removed}</span>
                <span className="hunk-preview mono">
                  {h.preview.map((l, k) => (
                    <span key={k} className={l.startsWith("+") ? "change-added" : "change-deleted"}>
                      {l}
                    </span>
                  ))}
                </span>
              </button>
              {typing ? (
                <form
                  className="hunk-reason"
                  onSubmit={(e) => {
                    e.preventDefault();
                    if (!busy) void reject(h, i);
                  }}
                >
                  <input
                    autoFocus
                    aria-label={`Why reject ${n} (optional; Enter rejects, Escape cancels)`}
                    placeholder="Why (optional): the agent reads it"
                    maxLength={4000}
                    value={reason}
                    disabled={busy}
                    onChange={(e) => setReason(e.target.value)}
                    onKeyDown={(e) => {
                      if (e.key !== "Escape") return;
                      e.preventDefault();
                      e.stopPropagation();
                      setRejecting(null);
                      focusHunk(i);
                    }}
                  />
                  <button type="submit" className="danger" disabled={busy} aria-label={`Revert ${n}`}>
                    {busy ? "Reverting…" : "Revert"}
                  </button>
                  <button type="button" disabled={busy} onClick={() => setRejecting(null)}>
                    Cancel
                  </button>
                </form>
              ) : (
                <span className="hunk-actions">
                  <button type="button" aria-label={`Accept ${n}`} onClick={() => setAccept(h, true)}>
                    Accept
                  </button>
                  <button type="button" aria-label={`Reject ${n}`} onClick={() => startReject(h)}>
                    Reject…
                  </button>
                </span>
              )}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
