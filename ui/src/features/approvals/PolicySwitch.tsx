import { useState } from "react";
import type { Api } from "../../api/client";
import { messageOf } from "../../api/errors";
import { choiceOf, policyFor, type PolicyChoice } from "./policy";

/** The conversation's confirmation policy, switchable while it runs. */
export function PolicySwitch({
  api,
  conversationId,
  policyKind,
}: {
  api: Pick<Api, "setConfirmationPolicy">;
  conversationId: string;
  policyKind: string | null;
}) {
  const [error, setError] = useState<string | null>(null);
  const current = choiceOf(policyKind);
  return (
    <label className="policy" title={error ?? "When the agent must ask before acting"}>
      Ask
      <select
        aria-label="Confirmation policy"
        value={current ?? ""}
        onChange={(e) => {
          setError(null);
          api
            .setConfirmationPolicy(conversationId, policyFor(e.target.value as PolicyChoice))
            .catch((err: unknown) => setError(messageOf(err)));
        }}
      >
        {current === null && <option value="">…</option>}
        <option value="always">always</option>
        <option value="risky">if risky</option>
        <option value="never">never</option>
      </select>
      {error && <span className="error-text"> {error}</span>}
    </label>
  );
}
