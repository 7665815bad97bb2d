// The desktop's keyring fallback as a banner under the top bar: with no Secret Service the
// desktop keeps secrets in a 0600 file, and the user should know before entering a key.
// Dismissing hides this warning for the rest of the session (a different warning shows again);
// Settings keeps showing it where keys are entered. The browser's warning (localStorage is
// never a keyring) is part of running in a browser, so it stays in Settings only.
import { useState } from "react";
import { host, useKeyringWarning, useKeyringWarningCause } from "../host";

const DISMISSED = "tandem.keyringBannerDismissed";

function dismissedWarning(): string | null {
  try {
    return sessionStorage.getItem(DISMISSED);
  } catch {
    return null;
  }
}

/** The warning's sentence, then its technical cause folded away (and as the tooltip). */
export function KeyringWarningText({ warning, cause }: { warning: string; cause: string | null }) {
  return (
    <span title={cause ?? undefined}>
      {warning}
      {cause && (
        <details className="muted">
          <summary>Technical details</summary>
          <code>{cause}</code>
        </details>
      )}
    </span>
  );
}

export function KeyringBanner() {
  const warning = useKeyringWarning();
  const cause = useKeyringWarningCause();
  const [dismissed, setDismissed] = useState(dismissedWarning);
  if (host().kind !== "tauri" || !warning || dismissed === warning) return null;
  return (
    <div className="banner warn" role="alert" aria-label="Keyring warning" style={{ margin: "6px 10px" }}>
      <KeyringWarningText warning={warning} cause={cause} />
      <span className="spacer" />
      <button
        type="button"
        onClick={() => {
          try {
            sessionStorage.setItem(DISMISSED, warning);
          } catch {
            // Without sessionStorage the banner stays hidden until the window reloads.
          }
          setDismissed(warning);
        }}
      >
        Dismiss
      </button>
    </div>
  );
}
