// Every event of the conversation, virtualised (react-virtuoso keeps 10,000+ rows smooth with
// variable heights) and stuck to the bottom while the person is at the bottom.
import { useEffect, useMemo, useRef, useState, type ReactNode } from "react";
import { Virtuoso, type VirtuosoHandle } from "react-virtuoso";
import type { Checkpoint } from "../../api/tandemTypes";
import { activeItems } from "../../store/branch";
import type { TimelineItem, TimelineState } from "../../store/timeline";
import { observationIdOf, rewindEventIdOf } from "../rewind/attribution";
import { ALL_KINDS, defaultFilter, filterItems, type KindFilter, type TimelineFilter } from "./filter";
import { ItemView } from "./ItemView";
import { follow, SCROLL_KEYS, stickReducer, type StickEvent } from "./stick";

const KIND_LABEL: Record<KindFilter, string> = {
  message: "Messages",
  action: "Actions",
  error: "Errors",
  state: "State",
  other: "Other",
};

export function TimelineFilters({ filter, onChange, children }: { filter: TimelineFilter; onChange(f: TimelineFilter): void; children?: ReactNode }) {
  const toggle = (k: KindFilter) => {
    const kinds = new Set(filter.kinds);
    if (kinds.has(k)) kinds.delete(k);
    else kinds.add(k);
    onChange({ ...filter, kinds });
  };
  return (
    <div className="toolbar timeline-filters" role="toolbar" aria-label="Timeline filters">
      {ALL_KINDS.map((k) => (
        <button
          key={k}
          type="button"
          className={`chip${filter.kinds.has(k) ? " on" : ""}`}
          aria-pressed={filter.kinds.has(k)}
          onClick={() => toggle(k)}
        >
          {KIND_LABEL[k]}
        </button>
      ))}
      <select
        aria-label="Source"
        value={filter.source}
        onChange={(e) => onChange({ ...filter, source: e.target.value as TimelineFilter["source"] })}
      >
        <option value="all">All sources</option>
        <option value="agent">Agent</option>
        <option value="user">User</option>
        <option value="environment">Environment</option>
      </select>
      <input
        type="search"
        placeholder="Filter text…"
        aria-label="Filter text"
        value={filter.text}
        onChange={(e) => onChange({ ...filter, text: e.target.value })}
      />
      {children}
    </div>
  );
}

type StreamingText = TimelineState["streaming"];

/** The agent's reply as it streams in, below the last row. A stable component (the text comes
 * through Virtuoso's context), so the list does not remount it on every delta. */
function StreamingFooter({ context }: { context: StreamingText }) {
  if (!context) return null;
  return (
    <div className="item message from-agent streaming" aria-live="polite">
      <div className="item-head">
        <span className="who">Agent</span>
        <span className="badge running">streaming</span>
      </div>
      {context.reasoning && <div className="thinking-body">{context.reasoning}</div>}
      <div className="markdown">{context.content}</div>
    </div>
  );
}

const LIST_COMPONENTS = { Footer: StreamingFooter };
const LIST_STYLE = { position: "absolute", inset: 0 } as const;

/** What the workspace's checkpoints add to the rows (on a server that keeps them). */
export interface TimelineCheckpoints {
  /** The agent's changes, by the id of the observation of the action that made them. */
  byObservation: ReadonlyMap<string, Checkpoint>;
  /** Opens the rewind preview for an event; null when the server has nothing to rewind to. */
  onRewind: ((eventId: string) => void) | null;
}

const NO_CHECKPOINTS: TimelineCheckpoints = { byObservation: new Map(), onRewind: null };

/** The replay's hold on the timeline (features/replay): its toggle, its bar and the selected row. */
export interface TimelineReplay {
  on: boolean;
  toggle(): void;
  /** The selected event while Replay is on. */
  at: string | null;
  /** A row was chosen while Replay is on: the replay moves to its event. */
  select(eventId: string): void;
  /** The scrubber, under the filters while Replay is on. */
  bar: ReactNode;
}

/** Whether a row shows event `id` (an action's row shows its answer too). */
function rowHas(item: TimelineItem, id: string | null): boolean {
  return id !== null && (item.id === id || (item.type === "action" && item.result?.id === id));
}

/** A branch off a line (drawn: the fork glyphs are missing from common fonts). */
function ForkIcon() {
  return (
    <svg width="12" height="12" viewBox="0 0 12 12" aria-hidden="true" fill="none" stroke="currentColor" strokeWidth="1.3">
      <circle cx="3" cy="2.5" r="1.5" />
      <circle cx="3" cy="9.5" r="1.5" />
      <circle cx="9" cy="2.5" r="1.5" />
      <path d="M3 4v4M9 4c0 2.5-6 2-6 4" />
    </svg>
  );
}

/** One row: the item, what its action changed, "Rewind to here" and "Fork from here". */
function Row(props: {
  item: TimelineItem;
  pending: boolean;
  checkpoints: TimelineCheckpoints;
  onFork: ((eventId: string) => void) | null;
  /** The replay is at this row. */
  replayAt: boolean;
  /** Replay is on: choosing the row moves it there. */
  onReplay: ((eventId: string) => void) | null;
}) {
  const { item, pending, checkpoints, onFork, replayAt, onReplay } = props;
  const obs = observationIdOf(item);
  const { onRewind } = checkpoints;
  return (
    <div
      className={`timeline-row${onReplay ? " replaying" : ""}${replayAt ? " replay-at" : ""}`}
      aria-current={replayAt ? "step" : undefined}
      onClick={onReplay ? () => onReplay(rewindEventIdOf(item)) : undefined}
    >
      <ItemView item={item} pending={pending} changes={obs === undefined ? undefined : checkpoints.byObservation.get(obs)} />
      {onRewind && (
        <button
          type="button"
          className="rewind-here"
          aria-label="Rewind to here"
          title="Rewind the workspace's files or the conversation to how they were here (shows what would change first)"
          onClick={() => onRewind(rewindEventIdOf(item))}
        >
          ⟲
        </button>
      )}
      {onFork && (
        <button
          type="button"
          className="fork-here"
          aria-label="Fork from here"
          title="A new conversation with the events up to here (this one stays as it is)"
          onClick={() => onFork(rewindEventIdOf(item))}
        >
          <ForkIcon />
        </button>
      )}
    </div>
  );
}

/** The timeline of one conversation; mount it once per conversation (key it by the conversation). */
export function TimelinePane({
  state,
  checkpoints = NO_CHECKPOINTS,
  onFork = null,
  replay = null,
}: {
  state: TimelineState;
  checkpoints?: TimelineCheckpoints;
  /** Opens "Fork from here" for an event; null where forking is not offered. */
  onFork?: ((eventId: string) => void) | null;
  /** Replay's toggle, scrubber and selection; null where replay is not offered. */
  replay?: TimelineReplay | null;
}) {
  const [filter, setFilter] = useState<TimelineFilter>(defaultFilter);
  // A conversation that went back to an earlier event shows its active branch only.
  const branch = useMemo(() => activeItems(state.items, state.branches), [state.items, state.branches]);
  const items = useMemo(() => filterItems(branch, filter), [branch, filter]);
  const elsewhere = state.items.length - branch.length;
  const pending = useMemo(
    () => (state.status === "waiting_for_confirmation" ? new Set(state.openActions) : new Set<string>()),
    [state.status, state.openActions],
  );
  const ref = useRef<VirtuosoHandle>(null);
  const [atBottom, setAtBottom] = useState(true);
  // A ref, not state: followOutput reads it when rows arrive, and changes need no render.
  const stuck = useRef(true);
  const stick = (e: StickEvent) => {
    stuck.current = stickReducer(stuck.current, e);
  };
  // Open at the latest event. Not through `initialTopMostItemIndex`: Virtuoso keeps the list
  // hidden until that first scroll settles, and rows arriving meanwhile can keep it hidden for good.
  const opened = useRef(false);
  useEffect(() => {
    if (opened.current || items.length === 0) return;
    opened.current = true;
    ref.current?.scrollToIndex({ index: "LAST", align: "end", behavior: "auto" });
  }, [items.length]);
  // The replay moved: bring its row into view (the newest row keeps the list following).
  const replayAt = replay?.on ? replay.at : null;
  useEffect(() => {
    if (replayAt === null) return;
    const index = items.findIndex((item) => rowHas(item, replayAt));
    if (index < 0) return;
    stick({ type: index === items.length - 1 ? "jump-to-latest" : "person-scrolled" });
    ref.current?.scrollIntoView({ index, behavior: "auto" });
    // Only a move of the replay scrolls, not rows arriving.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [replayAt]);

  return (
    <div className="timeline">
      <TimelineFilters filter={filter} onChange={setFilter}>
        {replay && (
          <button
            type="button"
            className={`chip replay-toggle${replay.on ? " on" : ""}`}
            aria-pressed={replay.on}
            title="Step through the conversation and see what the terminal, browser and workspace showed at each event"
            onClick={replay.toggle}
          >
            Replay
          </button>
        )}
      </TimelineFilters>
      {replay?.on && replay.bar}
      {elsewhere > 0 && (
        <div className="hint branch-note" role="note">
          Showing the active branch: {elsewhere} {elsewhere === 1 ? "event" : "events"} on other branches {elsewhere === 1 ? "is" : "are"} not shown.
        </div>
      )}
      <div
        className="timeline-list"
        data-autofocus
        tabIndex={0}
        aria-label="Timeline"
        onWheel={(e) => e.deltaY < 0 && stick({ type: "person-scrolled" })}
        onTouchMove={() => stick({ type: "person-scrolled" })}
        onPointerDown={(e) => {
          // Grabbing the scrollbar: the press lands on the scroller itself, not on a row.
          if ((e.target as HTMLElement).hasAttribute("data-virtuoso-scroller")) stick({ type: "person-scrolled" });
        }}
        onKeyDown={(e) => SCROLL_KEYS.has(e.key) && stick({ type: "person-scrolled" })}
      >
        {items.length === 0 ? (
          <div className="empty">{state.items.length === 0 ? "No events yet." : "No event matches the filters."}</div>
        ) : (
          <Virtuoso
            ref={ref}
            style={LIST_STYLE}
            data={items}
            context={state.streaming}
            computeItemKey={(_, item) => item.id}
            followOutput={(bottom) => follow(stuck.current, bottom)}
            // Rows are measured after they render and the list's height changes under the
            // scroll position: stay pinned to the newest row while stuck.
            totalListHeightChanged={() => {
              if (stuck.current) ref.current?.scrollToIndex({ index: "LAST", align: "end", behavior: "auto" });
            }}
            atBottomStateChange={(bottom) => {
              stick({ type: "at-bottom", atBottom: bottom });
              setAtBottom(bottom);
            }}
            increaseViewportBy={{ top: 400, bottom: 400 }}
            itemContent={(_, item) => (
              <Row
                item={item}
                pending={pending.has(item.id)}
                checkpoints={checkpoints}
                onFork={onFork}
                replayAt={rowHas(item, replayAt)}
                onReplay={replay?.on ? replay.select : null}
              />
            )}
            components={LIST_COMPONENTS}
          />
        )}
        {!atBottom && items.length > 0 && (
          <button
            type="button"
            className="jump"
            onClick={() => {
              stick({ type: "jump-to-latest" });
              ref.current?.scrollToIndex({ index: "LAST", behavior: "auto" });
            }}
          >
            ↓ Latest
          </button>
        )}
      </div>
    </div>
  );
}
