// The agent's handoff request, shown above the timeline while the Browser pane is hidden, so
// the person notices it wherever they look: the reason, and a way to the browser. Take control
// goes through the REST mirror, since a hidden pane has no socket.
import { useState } from "react";
import { messageOf } from "../../api/errors";
import type { PendingHandoff } from "./handoff";
import type { BrowserApi } from "./rest";

export function HandoffNotice({
  handoff,
  api,
  conversationId,
  onShow,
}: {
  handoff: PendingHandoff;
  api: Pick<BrowserApi, "takeControl">;
  conversationId: string;
  /** Shows the Browser pane. */
  onShow: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const take = async () => {
    setBusy(true);
    setError(null);
    try {
      await api.takeControl(conversationId);
      onShow();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section className="handoff handoff-notice" role="region" aria-label="The agent asks for you">
      <strong>The agent asks you to take over the browser</strong>
      <span className="handoff-reason">{handoff.reason || "(no reason given)"}</span>
      <span className="row">
        <button type="button" className="primary" disabled={busy} onClick={() => void take()}>
          Take control
        </button>
        <button type="button" onClick={onShow}>
          Show the browser
        </button>
      </span>
      {error && (
        <div className="error-text" role="alert">
          {error}
        </div>
      )}
    </section>
  );
}
