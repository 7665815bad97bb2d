// The Docker sandbox's state in the backend bar, compact: what it is doing (the build's latest
// line, the start's step), connected with its folder, or stopped / failed with the reason, and
// the buttons that go with each (cancel, stop, start again, another folder).
import type { SandboxState, SandboxStatus } from "../../host";

const STEP_TEXT: Record<Extract<SandboxState, { state: "starting" }>["step"], string> = {
  connecting: "connecting to Docker…",
  creating: "starting the container…",
  waiting_for_health: "waiting for its server…",
};

/** The last part of a folder path, for a compact label (the full path is its tooltip). */
export function folderName(path: string): string {
  const parts = path.replace(/[/\\]+$/, "").split(/[/\\]/);
  return parts.at(-1) || path;
}

const line: React.CSSProperties = { maxWidth: "28em", overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" };

export interface SandboxBarProps {
  status: SandboxStatus;
  /** The folder used last (this session's sandbox has none yet after a restart). */
  lastFolder: string | null;
  /** Start again on `folder`. */
  onStart(folder: string): void;
  /** Pick another folder and start there. */
  onChooseFolder(): void;
  onStop(): void;
}

/** The sandbox's part of the bar; the connection's health shows beside it once connected. */
export function SandboxBar({ status, lastFolder, onStart, onChooseFolder, onStop }: SandboxBarProps) {
  const st = status.state;
  const folder = st.workspace ?? lastFolder;
  const where = folder && (
    <span className="muted small" title={`Host folder: ${folder}`}>
      {folderName(folder)}
    </span>
  );
  switch (st.state) {
    case "building":
    case "starting":
      return (
        <>
          <span className="conn conn-warn" role="status" aria-live="polite">
            <span className="dot" aria-hidden /> {st.state === "building" ? "building the sandbox image…" : `sandbox: ${STEP_TEXT[st.step]}`}
          </span>
          {st.state === "building" && st.line && (
            <span className="muted small mono" style={line} title={st.line} data-testid="sandbox-line">
              {st.line}
            </span>
          )}
          {where}
          <button type="button" className="link" onClick={onStop}>
            Cancel
          </button>
        </>
      );
    case "connected":
      return (
        <>
          {where}
          {!st.model && (
            <span
              className="badge warn"
              title="The desktop has no LLM configured, so the sandbox's server has no default model: choose an LLM profile (Settings) for its conversations."
            >
              no default LLM
            </span>
          )}
          <button type="button" className="link" onClick={onStop} title="Stop and remove the sandbox">
            Stop
          </button>
        </>
      );
    case "failed":
      return (
        <>
          <span className="conn conn-bad">
            <span className="dot" aria-hidden /> sandbox failed
          </span>
          <span className="error-text small" style={line} title={st.reason} role="alert">
            {st.reason.split("\n")[0]}
          </span>
          <button type="button" className="link" onClick={() => onStart(st.workspace)}>
            Retry
          </button>
          <button type="button" className="link" onClick={onChooseFolder}>
            Other folder…
          </button>
        </>
      );
    case "stopped":
      return (
        <>
          <span className="conn conn-bad">
            <span className="dot" aria-hidden /> sandbox stopped
          </span>
          {where}
          {folder && (
            <button type="button" className="link" onClick={() => onStart(folder)}>
              Start
            </button>
          )}
          <button type="button" className="link" onClick={onChooseFolder}>
            {folder ? "Other folder…" : "Choose folder…"}
          </button>
        </>
      );
  }
}
