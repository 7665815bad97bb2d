// Moving a conversation to another backend, as `tandem move` does: its capsule exported from
// the source; imported on the target as arriving (same id, every event, its workspace in a new
// folder, read-only there); the source marked as moved (the point where it changes hands);
// then the arrival accepted on the target. A failure before the source is marked abandons the
// target's copy and leaves the conversation where it was; a failure names the step and the
// server's reason.
import type { Api } from "../../api/client";
import { ApiError, messageOf } from "../../api/errors";
import type { ImportedConversation } from "../../api/tandemTypes";

export type MoveStep = "export" | "import" | "fence" | "arrival";

export interface MoveRequest {
  source: Pick<Api, "exportCapsule" | "markMoved">;
  target: Pick<Api, "importCapsule" | "arrival" | "baseUrl"> & Partial<Pick<Api, "movedRecord">>;
  conversationId: string;
  /** Pause a running conversation and reject pending approvals instead of refusing. */
  force: boolean;
  /** The workspace folder on the target (default: a new one under its workspace root). */
  workingDir?: string;
  /** Told each step as it starts. */
  onStep?(step: MoveStep): void;
}

/** A failed move: the step it failed at and why. */
export class MoveError extends Error {
  constructor(
    readonly step: MoveStep,
    readonly reason: string,
  ) {
    super(moveErrorText(step, reason));
  }
}

export function moveErrorText(step: MoveStep, reason: string): string {
  switch (step) {
    case "export":
      return `Cannot export the conversation: ${reason}. It stays where it is.`;
    case "import":
      return `The target refused the conversation: ${reason}. It stays where it is.`;
    case "fence":
      return `This server did not let the conversation go: ${reason}. It stays where it is.`;
    case "arrival":
      return `This server let the conversation go, but the target did not start it (${reason}): move it again to finish.`;
  }
}

function reasonOf(e: unknown): string {
  return e instanceof ApiError ? (e.detail ?? e.message) : messageOf(e);
}

export async function moveConversation(r: MoveRequest): Promise<ImportedConversation> {
  const step = async <T>(name: MoveStep, run: () => Promise<T>): Promise<T> => {
    r.onStep?.(name);
    try {
      return await run();
    } catch (e) {
      throw new MoveError(name, reasonOf(e));
    }
  };
  const abandon = () => r.target.arrival(r.conversationId, false).catch(() => undefined);
  const workingDir = r.workingDir?.trim();
  // Back onto a record the target keeps, into the folder it left: only what changed travels.
  const base = workingDir ? null : ((await r.target.movedRecord?.(r.conversationId).catch(() => null))?.workspace_base ?? null);
  const capsule = await step("export", () => r.source.exportCapsule(r.conversationId, { force: r.force, base_commit: base }));
  const options = workingDir ? { working_dir: workingDir, pending: true } : { pending: true };
  const imported = await step("import", () => r.target.importCapsule(capsule, options));
  try {
    await step("fence", () =>
      r.source.markMoved(r.conversationId, { url: r.target.baseUrl, conversation_id: imported.conversation.id, last_event_id: imported.last_event_id }),
    );
  } catch (e) {
    await abandon();
    throw e;
  }
  await step("arrival", () => r.target.arrival(imported.conversation.id, true));
  return imported;
}
