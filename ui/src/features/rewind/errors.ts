import { ApiError, messageOf } from "../../api/errors";

/** Why a rewind (or its preview) failed, in the server's words ("the agent is running: pause it…"). */
export function rewindErrorText(e: unknown): string {
  const why = e instanceof ApiError ? (e.detail ?? e.message) : messageOf(e);
  return `Cannot rewind: ${why}`;
}
