// Where secrets are entered: the host's warning when they do not go to a real keyring.
import { useKeyringWarning, useKeyringWarningCause } from "../../host";
import { KeyringWarningText } from "../../shell/KeyringBanner";

/** The host's warning when keys do not go to a real keyring (the desktop's fallback file, the
 * browser's localStorage). Not dismissible here. */
export function KeyringWarning() {
  const w = useKeyringWarning();
  const cause = useKeyringWarningCause();
  return w ? (
    <div className="banner warn" role="note">
      <KeyringWarningText warning={w} cause={cause} />
    </div>
  ) : null;
}
