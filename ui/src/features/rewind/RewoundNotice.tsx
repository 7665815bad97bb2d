// After a rewind: how many files it wrote, and "Undo rewind" (a rewind to the checkpoint taken
// just before it).
import { useState } from "react";
import type { Api } from "../../api/client";
import type { RewindResponse } from "../../api/tandemTypes";
import { fileCount } from "./attribution";
import { rewindErrorText } from "./errors";

export interface RewoundNoticeProps {
  api: Pick<Api, "rewind">;
  conversationId: string;
  rewound: RewindResponse;
  /** The workspace's files changed (the undo wrote some): refresh what shows them. */
  onFilesChanged(): void;
  onDismiss(): void;
}

type Undo = { state: "none" } | { state: "undoing" } | { state: "undone"; answer: RewindResponse } | { state: "failed"; message: string };

export function RewoundNotice({ api, conversationId, rewound, onFilesChanged, onDismiss }: RewoundNoticeProps) {
  const [undo, setUndo] = useState<Undo>({ state: "none" });
  const undoId = rewound.undo_checkpoint_id ?? null;

  async function undoRewind(checkpointId: string) {
    setUndo({ state: "undoing" });
    try {
      const answer = await api.rewind(conversationId, { checkpoint_id: checkpointId, restore: "code" });
      setUndo({ state: "undone", answer });
      onFilesChanged();
    } catch (e) {
      setUndo({ state: "failed", message: rewindErrorText(e) });
    }
  }

  const left = rewound.skipped.length;
  const skipped = left ? `; ${fileCount(left)} left as ${left === 1 ? "it was" : "they were"}` : "";
  const text =
    undo.state === "undone"
      ? `Rewind undone: ${fileCount(undo.answer.restored.length)} restored`
      : rewound.restored.length === 0
        ? "Nothing was rewound: the files already matched"
        : `Rewound ${fileCount(rewound.restored.length)}${skipped}`;
  return (
    <div className="banner rewound" role="status" aria-label="Rewind">
      <span>{text}</span>
      {undoId && undo.state !== "undone" && (
        <button type="button" disabled={undo.state === "undoing"} onClick={() => void undoRewind(undoId)}>
          {undo.state === "undoing" ? "Undoing…" : "Undo rewind"}
        </button>
      )}
      {undo.state === "failed" && <span className="error-text">{undo.message}</span>}
      <button type="button" className="dismiss" aria-label="Dismiss" onClick={onDismiss}>
        ✕
      </button>
    </div>
  );
}
