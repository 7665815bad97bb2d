// What the panes showed as of the replay's selected event: the agent's terminal screen, the
// browser's frame and the workspace's checkpoint with the files it changed and its diff against
// the checkpoint before (read-only), plus "Fork from here". A lane with nothing recorded by then
// says so; errors stay in the panel.
import { useMemo } from "react";
import { messageOf } from "../../api/errors";
import type { Checkpoint, ReplayBrowser, ReplayTerminal, ReplayWorkspace } from "../../api/tandemTypes";
import { changeSummary } from "../rewind/attribution";
import { ChangedFiles } from "../rewind/ChangedFiles";
import { DiffView } from "../timeline/FileDiffView";
import { parseUnifiedDiff } from "../timeline/unifiedDiff";
import { useFrameUrl, useReplayState, type ReplayApi } from "./queries";

export interface ReplayPanelProps {
  api: ReplayApi;
  conversationId: string;
  /** The selected event; null when there is none. */
  eventId: string | null;
  /** The workspace's checkpoints (for the files a checkpoint changed). */
  checkpoints: readonly Checkpoint[];
  /** Opens "Fork from here" for an event; null where forking is not offered. */
  onFork: ((eventId: string) => void) | null;
}

function Earlier({ at, eventId }: { at: string; eventId: string }) {
  return at === eventId ? null : <span className="hint"> · as of an earlier event</span>;
}

function TerminalLane({ terminal, eventId }: { terminal: ReplayTerminal | null | undefined; eventId: string }) {
  return (
    <section className="replay-lane-view" aria-label="Terminal replay">
      <h3>
        Terminal
        {terminal && (
          <span className="hint">
            {" "}
            {terminal.cols}×{terminal.rows}
          </span>
        )}
        {terminal && <Earlier at={terminal.at_event_id} eventId={eventId} />}
      </h3>
      {terminal ? (
        <pre className="replay-screen" aria-label="Terminal as of this event">
          {terminal.screen}
        </pre>
      ) : (
        <div className="hint">No terminal yet</div>
      )}
    </section>
  );
}

function BrowserLane({ api, conversationId, browser }: { api: ReplayApi; conversationId: string; browser: ReplayBrowser | null | undefined }) {
  const frame = useFrameUrl(api, conversationId, browser?.frame_id ?? null);
  return (
    <section className="replay-lane-view" aria-label="Browser replay" data-frame-id={browser?.frame_id}>
      <h3>Browser</h3>
      {browser ? (
        <>
          <div className="mono replay-url" title={browser.url}>
            {browser.url}
          </div>
          {frame.error ? (
            <div className="error-text" role="alert">
              {messageOf(frame.error)}
            </div>
          ) : (
            frame.url && <img className="replay-frame" src={frame.url} data-frame-id={frame.shownId ?? undefined} alt="Browser as of this event" />
          )}
        </>
      ) : (
        <div className="hint">No browser yet</div>
      )}
    </section>
  );
}

/** What the checkpoint changed since the one before it, file by file (read-only). */
function CheckpointDiff({ diff, truncated }: { diff: string; truncated: boolean }) {
  const files = useMemo(() => parseUnifiedDiff(diff), [diff]);
  if (files.length === 0) return null;
  return (
    <section aria-label="Changes since the checkpoint before" className="replay-diff">
      {files.map((f) => (
        <DiffView key={f.path} path={f.path} rows={f.rows} note={f.note} />
      ))}
      {truncated && <div className="hint">The diff is longer than shown (cut at 256 KiB).</div>}
    </section>
  );
}

function WorkspaceLane(props: {
  workspace: ReplayWorkspace | null | undefined;
  /** The event shown (the previous one while the selected one loads). */
  eventId: string;
  /** The event the person selected: where a fork starts. */
  forkAt: string;
  checkpoints: readonly Checkpoint[];
  onFork: ((eventId: string) => void) | null;
}) {
  const { workspace, eventId, forkAt, onFork } = props;
  const checkpoint = workspace ? props.checkpoints.find((c) => c.id === workspace.checkpoint_id) : undefined;
  return (
    <section className="replay-lane-view" aria-label="Workspace replay">
      <h3>
        Workspace
        {workspace && <Earlier at={workspace.at_event_id} eventId={eventId} />}
      </h3>
      {workspace ? (
        <>
          <div className="hint">
            Checkpoint tree <span className="mono">{workspace.tree.slice(0, 12)}</span>
          </div>
          {checkpoint &&
            (changeSummary(checkpoint) ? <ChangedFiles checkpoint={checkpoint} open /> : <div className="hint">This checkpoint changed no files.</div>)}
          <CheckpointDiff diff={workspace.diff ?? ""} truncated={workspace.diff_truncated ?? false} />
        </>
      ) : (
        <div className="hint">No checkpoint yet</div>
      )}
      {onFork && (
        <button type="button" onClick={() => onFork(forkAt)} title="A new conversation with the events up to here (this one stays as it is)">
          Fork from here
        </button>
      )}
    </section>
  );
}

export function ReplayPanel({ api, conversationId, eventId, checkpoints, onFork }: ReplayPanelProps) {
  const query = useReplayState(api, conversationId, eventId);
  if (eventId === null) return <div className="empty">No events to replay yet.</div>;
  const state = query.data;
  // Until the selected event's answer arrives the previous one is shown, marked as catching up.
  const behind = query.isPlaceholderData || (query.isFetching && state?.event_id !== eventId);
  return (
    <div className="replay-panel" aria-busy={behind} data-event-id={state?.event_id}>
      {query.error ? (
        <div className="error-text" role="alert">
          {messageOf(query.error)}
        </div>
      ) : null}
      {state && (state.notes ?? []).length > 0 && (
        <ul className="replay-notes" aria-label="Replay notes">
          {(state.notes ?? []).map((n) => (
            <li key={n}>{n}</li>
          ))}
        </ul>
      )}
      {!state && !query.error && <div className="hint">Loading…</div>}
      {state && !query.error && (
        <>
          <TerminalLane terminal={state.terminal} eventId={state.event_id} />
          <BrowserLane api={api} conversationId={conversationId} browser={state.browser} />
          <WorkspaceLane workspace={state.workspace} eventId={state.event_id} forkAt={eventId} checkpoints={checkpoints} onFork={onFork} />
        </>
      )}
    </div>
  );
}
