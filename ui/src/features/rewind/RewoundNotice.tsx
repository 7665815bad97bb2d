// After a rewind: how many files it wrote, whether the conversation went back, and "Undo
// rewind" (a rewind of the files to the checkpoint taken just before it).
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

/**
 * What a rewind did: the files it wrote (and those it left alone), and whether the conversation
 * went back (a `chat` or `both` rewind names the new head).
 */
export function rewoundText(rewound: RewindResponse): string {
  const left = rewound.skipped.length;
  const skipped = left ? `; ${fileCount(left)} left as ${left === 1 ? "it was" : "they were"}` : "";
  const files = rewound.restored.length;
  if (rewound.leaf_event_id) {
    const later = "the later events are on another branch";
    return files > 0
      ? `Rewound ${fileCount(files)}${skipped} and the conversation to the chosen event; ${later}`
      : `Rewound the conversation to the chosen event; ${later}`;
  }
  return files === 0 ? "Nothing was rewound: the files already matched" : `Rewound ${fileCount(files)}${skipped}`;
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

  const text = undo.state === "undone" ? `Rewind undone: ${fileCount(undo.answer.restored.length)} restored` : rewoundText(rewound);
  return (
    <div className="banner rewound" role="status" aria-label="Rewind">
      <span>{text}</span>
      {undoId && undo.state !== "undone" && (
        <button type="button" disabled={undo.state === "undoing"} onClick={() => void undoRewind(undoId)}>
          {undo.state === "undoing" ? "Undoing…" : rewound.leaf_event_id ? "Undo the files' rewind" : "Undo rewind"}
        </button>
      )}
      {undo.state === "failed" && <span className="error-text">{undo.message}</span>}
      <button type="button" className="dismiss" aria-label="Dismiss" onClick={onDismiss}>
        ✕
      </button>
    </div>
  );
}
