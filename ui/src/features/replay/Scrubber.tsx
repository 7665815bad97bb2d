// The replay's controls under the timeline's filters: a range over the conversation's events with
// lane marks (approvals, errors, the person's browser takeovers), the selected event, play/pause
// with a speed, step back/forward, and Live.
import { SPEEDS, type ReplayCursor, type ReplayInput, type Speed } from "../../store/replay";
import type { LaneMark, ReplayEvent } from "./events";

const LANES: { mark: LaneMark; label: string }[] = [
  { mark: "approval", label: "Approvals" },
  { mark: "error", label: "Errors" },
  { mark: "browser", label: "Browser takeovers" },
];

/** Where event `i` of `count` sits along the range, in percent. */
const along = (i: number, count: number) => (count <= 1 ? 0 : (i / (count - 1)) * 100);

function Lanes({ events }: { events: readonly ReplayEvent[] }) {
  const marked = events.map((e, i) => ({ e, i })).filter(({ e }) => e.mark !== null);
  if (marked.length === 0) return null;
  return (
    <div className="replay-lanes">
      {LANES.map(({ mark, label }) => {
        const here = marked.filter(({ e }) => e.mark === mark);
        if (here.length === 0) return null;
        return (
          <div key={mark} className={`replay-lane lane-${mark}`} title={label}>
            <span className="sr-only">
              {label}: {here.map(({ i }) => i + 1).join(", ")}
            </span>
            {here.map(({ e, i }) => (
              <span key={e.id} className="lane-mark" style={{ left: `${along(i, events.length)}%` }} title={`${i + 1}: ${e.summary}`} aria-hidden="true" />
            ))}
          </div>
        );
      })}
    </div>
  );
}

export function Scrubber({ events, cursor, index, send }: { events: readonly ReplayEvent[]; cursor: ReplayCursor; index: number; send(input: ReplayInput): void }) {
  const count = events.length;
  const at = events[index];
  if (!at) return <div className="replay-bar hint">No events to replay yet.</div>;
  const position = `${index + 1} / ${count}`;
  return (
    <div className="replay-bar" role="group" aria-label="Replay">
      <div className="replay-track">
        <input
          type="range"
          aria-label="Replay position"
          aria-valuetext={`${position}: ${at.summary}`}
          min={0}
          max={Math.max(0, count - 1)}
          value={index}
          onChange={(e) => send({ type: "seek", index: Number(e.target.value) })}
        />
        <Lanes events={events} />
      </div>
      <div className="replay-controls">
        <button type="button" aria-label="Step back" title="Step back (←)" disabled={index <= 0} onClick={() => send({ type: "step", by: -1 })}>
          ←
        </button>
        <button type="button" onClick={() => send({ type: cursor.playing ? "pause" : "play" })} disabled={count <= 1} title="Play / pause (Space)">
          {cursor.playing ? "Pause" : "Play"}
        </button>
        <select aria-label="Replay speed" value={cursor.speed} onChange={(e) => send({ type: "speed", speed: Number(e.target.value) as Speed })}>
          {SPEEDS.map((s) => (
            <option key={s} value={s}>
              {s}×
            </option>
          ))}
        </select>
        <button type="button" aria-label="Step forward" title="Step forward (→)" disabled={index >= count - 1} onClick={() => send({ type: "step", by: 1 })}>
          →
        </button>
        <button type="button" className={`chip${cursor.live ? " on" : ""}`} aria-pressed={cursor.live} title="Follow the newest event (End)" onClick={() => send({ type: "live" })}>
          Live
        </button>
        <span className="replay-position mono" aria-label="Replay event">
          {position}
        </span>
        <span className="replay-summary" title={at.summary}>
          <span className="badge">{at.kind}</span> {at.summary}
        </span>
      </div>
    </div>
  );
}
