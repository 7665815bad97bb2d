// The panes of one open conversation: timeline (with the approval panel above it) and chat in
// the middle, editor, browser or (on a server with one) desktop as tabs, and terminal on the right.
import { lazy, Suspense, useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent, type ReactNode } from "react";
import { useQueryClient } from "@tanstack/react-query";
import { flushSync } from "react-dom";
import { Group, Panel, Separator } from "react-resizable-panels";
import { ApprovalPanel } from "../features/approvals/ApprovalPanel";
import { PolicySwitch } from "../features/approvals/PolicySwitch";
import { apiFor, useBackends, type Backend } from "../features/backends/backendStore";
import { pendingHandoff } from "../features/browser/handoff";
import { HandoffNotice } from "../features/browser/HandoffNotice";
import { createBrowserApi } from "../features/browser/rest";
import { budgetSummary, offersBudgets } from "../features/budget/budget";
import { BudgetBanner } from "../features/budget/BudgetBanner";
import { BudgetDialog } from "../features/budget/BudgetDialog";
import { ChatPane } from "../features/chat/ChatPane";
import { isQueued } from "../features/chat/queue";
import { useQueuePlace } from "../features/chat/useQueuePlace";
import { conversationsKey } from "../features/conversations/queries";
import { ForkDialog } from "../features/fork/ForkDialog";
import { MoveDialog } from "../features/move/MoveDialog";
import { StatusBar } from "../features/chat/StatusBar";
import { observationCount } from "../features/rewind/attribution";
import { RewindDialog } from "../features/rewind/RewindDialog";
import { RewoundNotice } from "../features/rewind/RewoundNotice";
import { useCheckpoints } from "../features/rewind/useCheckpoints";
import { replayEvents } from "../features/replay/events";
import { ReplayPanel } from "../features/replay/ReplayPanel";
import { Scrubber } from "../features/replay/Scrubber";
import { useReplay } from "../features/replay/useReplay";
import { TimelinePane, type TimelineCheckpoints, type TimelineReplay } from "../features/timeline/TimelinePane";
import type { RewindResponse } from "../api/tandemTypes";
import { activeItems } from "../store/branch";
import { useConversationStream } from "../store/connect";
import { convKey, useLive, useStreamState, useTimeline } from "../store/live";
import { pendingApprovals, type TimelineInput } from "../store/timeline";
import { host } from "../host";
import { lastConversationPref, REVEAL_PANE, useUi } from "../store/ui";
import { setApproveHandler } from "./shortcuts";

// Monaco and xterm are big: load them when a conversation is open, not at start-up.
const EditorPane = lazy(() => import("./EditorPaneLoader"));
const TerminalPane = lazy(() => import("../features/terminal/TerminalPane").then((m) => ({ default: m.TerminalPane })));
const BrowserPane = lazy(() => import("../features/browser/BrowserPane").then((m) => ({ default: m.BrowserPane })));
const DesktopPane = lazy(() => import("../features/desktop/DesktopPane").then((m) => ({ default: m.DesktopPane })));

type RightTab = "editor" | "browser" | "desktop";

/** A pane a server cannot serve (it lacks the capability, e.g. an upstream OpenHands server). */
function NotOnThisServer({ children }: { children: string }) {
  return (
    <div className="empty" role="note">
      {children}
    </div>
  );
}

export function Workspace({ backend, conversationId }: { backend: Backend; conversationId: string }) {
  useConversationStream(backend, conversationId);
  const key = convKey(backend.id, conversationId);
  const state = useTimeline(key);
  const stream = useStreamState(key);
  // Editor, terminal and edit-and-approve use Tandem's own endpoints; a server that says it
  // lacks them (an upstream OpenHands server) gets an explanation instead of failing requests.
  const info = useBackends((st) => st.health[backend.id]?.info);
  const lacks = (capability: string) => info !== undefined && !(info.capabilities ?? []).includes(capability);
  const api = apiFor(backend);
  const pending = useMemo(() => pendingApprovals(state), [state]);
  const dispatch = useCallback((input: TimelineInput) => useLive.getState().dispatch(key, input), [key]);
  // A run waiting for a slot: its place is polled (the conversation list shows it too).
  const onQueuePlace = useCallback((ahead: number) => dispatch({ type: "queuePlace", ahead }), [dispatch]);
  useQueuePlace(api, conversationId, isQueued(state.status, state.queuedAhead), onQueuePlace);
  const [budgeting, setBudgeting] = useState(false);
  const approveAll = useCallback(() => {
    if (pending.length) void api.respondToConfirmation(conversationId, true);
  }, [api, conversationId, pending.length]);
  useEffect(() => {
    setApproveHandler(pending.length ? approveAll : null);
    return () => setApproveHandler(null);
  }, [approveAll, pending.length]);

  // The browser shares the editor's place; its socket is open only while it is shown, so a
  // handoff request is noticed from the timeline (the agent's open request) instead.
  const [rightTab, setRightTab] = useState<RightTab>("editor");
  // Only a server with a desktop (a sandbox) gets the Desktop tab.
  const desktop = info?.desktop === true;
  const tabs: RightTab[] = desktop ? ["editor", "browser", "desktop"] : ["editor", "browser"];
  useEffect(() => {
    if (!desktop && rightTab === "desktop") setRightTab("editor");
  }, [desktop, rightTab]);
  const handoff = useMemo(() => pendingHandoff(state), [state]);

  // Checkpoints (a Tandem server's): what each action changed, and rewinding the files. A host
  // without them (an upstream server answers 404) shows neither, and no error.
  const observations = useMemo(() => observationCount(state.items), [state.items]);
  const checkpoints = useCheckpoints(api, conversationId, observations);
  const [rewindAt, setRewindAt] = useState<string | null>(null);
  const [rewound, setRewound] = useState<RewindResponse | null>(null);
  // A rewind writes files without an event: the editor refreshes on this too.
  const [filesWritten, setFilesWritten] = useState(0);
  const refreshCheckpoints = checkpoints.refresh;
  const filesChanged = useCallback(() => {
    setFilesWritten((n) => n + 1);
    refreshCheckpoints();
  }, [refreshCheckpoints]);
  const timelineCheckpoints = useMemo<TimelineCheckpoints>(
    () => ({ byObservation: checkpoints.byObservation, onRewind: checkpoints.canRewind ? setRewindAt : null }),
    [checkpoints.byObservation, checkpoints.canRewind],
  );
  // "Fork from here": the fork opens in place of this conversation once it exists.
  const [forkAt, setForkAt] = useState<string | null>(null);
  // "Move to…": the backends that can take the conversation (connected, Tandem servers).
  const [moving, setMoving] = useState(false);
  const backends = useBackends((st) => st.backends);
  const health = useBackends((st) => st.health);
  const moveTargets = useMemo(
    () =>
      backends
        .filter((b) => b.id !== backend.id && b.baseUrl !== "" && health[b.id]?.status === "ok")
        .filter((b) => (health[b.id]?.info?.capabilities ?? []).includes("tandem_move_v1"))
        .map((b) => ({ backend: b, api: apiFor(b) })),
    [backends, health, backend.id],
  );
  const queryClient = useQueryClient();
  const openConversation = useUi((s) => s.openConversation);
  // Replay: the panes as of any event of the active branch, in place of the editor and browser.
  const events = useMemo(() => replayEvents(activeItems(state.items, state.branches)), [state.items, state.branches]);
  // Opened from a replay link: replay on from the start (the link is used once).
  const [replayLinked] = useState(() => {
    const link = useUi.getState().openLink;
    return link?.conversation === conversationId && link.replay;
  });
  useEffect(() => {
    if (useUi.getState().openLink?.conversation === conversationId) useUi.setState({ openLink: null });
  }, [conversationId]);
  const replay = useReplay(events.length, replayLinked);
  const replayAt = events[replay.index]?.id ?? null;
  const { on: replayOn, toggle: toggleReplay, cursor: replayCursor, index: replayIndex, send: replaySend } = replay;
  const selectReplay = useCallback(
    (eventId: string) => {
      const index = events.findIndex((e) => e.id === eventId);
      if (index >= 0) replaySend({ type: "seek", index });
    },
    [events, replaySend],
  );
  // Tandem servers that record conversations say so; an upstream server does not.
  const replayOffered = !lacks("tandem_replay_v1");
  const timelineReplay = useMemo<TimelineReplay | null>(
    () =>
      !replayOffered
        ? null
        : {
            on: replayOn,
            toggle: toggleReplay,
            at: replayAt,
            select: selectReplay,
            bar: <Scrubber events={events} cursor={replayCursor} index={replayIndex} send={replaySend} />,
          },
    [replayOffered, replayOn, toggleReplay, replayAt, selectReplay, events, replayCursor, replayIndex, replaySend],
  );
  const browserApi = useMemo(() => createBrowserApi({ baseUrl: backend.baseUrl, key: backend.key }), [backend.baseUrl, backend.key]);
  const right = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = right.current;
    if (!el) return;
    // focusPane asks a hidden pane's owner to show it, then focuses it: show it synchronously.
    const onReveal = (e: Event) => {
      const pane = (e.target as HTMLElement).dataset.pane;
      if (pane === "editor" || pane === "browser" || pane === "desktop") flushSync(() => setRightTab(pane));
    };
    el.addEventListener(REVEAL_PANE, onReveal);
    return () => el.removeEventListener(REVEAL_PANE, onReveal);
  }, []);
  const tabKeys = (e: KeyboardEvent) => {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    e.preventDefault();
    const at = Math.max(0, tabs.indexOf(rightTab));
    const next = tabs[(at + (e.key === "ArrowRight" ? 1 : tabs.length - 1)) % tabs.length] ?? "editor";
    setRightTab(next);
    document.getElementById(`tab-${next}`)?.focus();
  };

  return (
    <Group orientation="horizontal" className="panes">
      <Panel defaultSize="55%" minSize="25%">
        <div className="column-pane">
          <div className="pane-head">
            <StatusBar state={state} stream={stream} />
            <PolicySwitch api={api} conversationId={conversationId} policyKind={state.policy} />
            {offersBudgets(info) && (
              <button type="button" className="chip" onClick={() => setBudgeting(true)} title="What this conversation may spend before its run pauses">
                Budget: {budgetSummary(state.budget)}
              </button>
            )}
            {!lacks("tandem_move_v1") && info !== undefined && (
              <button type="button" className="chip" onClick={() => setMoving(true)} title="Continue this conversation on another backend">
                Move to…
              </button>
            )}
          </div>
          {state.budgetReached && (
            <BudgetBanner
              // A new reach starts from the limits it paused on.
              key={`${state.budgetReached.limit}:${state.budgetReached.spentTokens}:${state.budgetReached.spentCost}`}
              api={api} conversationId={conversationId} reached={state.budgetReached} budget={state.budget} />
          )}
          {budgeting && <BudgetDialog api={api} conversationId={conversationId} onClose={() => setBudgeting(false)} />}
          {pending.length > 0 && <ApprovalPanel api={api} conversationId={conversationId} pending={pending} canEdit={!lacks("tandem_approve_edited_v1")} />}
          {handoff && rightTab !== "browser" && (
            <HandoffNotice handoff={handoff} api={browserApi} conversationId={conversationId} onShow={() => setRightTab("browser")} />
          )}
          {rewound && (
            <RewoundNotice
              key={rewound.undo_checkpoint_id ?? rewound.checkpoint_id}
              api={api} conversationId={conversationId} rewound={rewound} onFilesChanged={filesChanged} onDismiss={() => setRewound(null)} />
          )}
          <section className="pane grow" data-pane="timeline" aria-label="Timeline" tabIndex={-1}>
            <TimelinePane state={state} checkpoints={timelineCheckpoints} onFork={setForkAt} replay={timelineReplay} />
          </section>
          {rewindAt !== null && (
            <RewindDialog
              // A new preview for every row it is opened from.
              key={rewindAt}
              api={api}
              conversationId={conversationId}
              eventId={rewindAt}
              onClose={() => setRewindAt(null)}
              onRewound={(answer) => {
                setRewindAt(null);
                setRewound(answer);
                filesChanged();
              }}
            />
          )}
          {moving && (
            <MoveDialog
              source={api}
              conversationId={conversationId}
              targets={moveTargets}
              onClose={() => setMoving(false)}
              onMoved={(target, imported) => {
                setMoving(false);
                void queryClient.invalidateQueries({ queryKey: conversationsKey(backend.id) });
                // The target's workspace opens on the moved conversation.
                host().savePref(lastConversationPref(target.id), imported.conversation.id);
                useBackends.getState().setActive(target.id);
              }}
            />
          )}
          {forkAt !== null && (
            <ForkDialog
              key={forkAt}
              api={api}
              conversationId={conversationId}
              eventId={forkAt}
              canRestoreFiles={checkpoints.canRewind}
              onClose={() => setForkAt(null)}
              onForked={(info) => {
                setForkAt(null);
                void queryClient.invalidateQueries({ queryKey: conversationsKey(backend.id) });
                openConversation(info.id);
              }}
            />
          )}
          <section className="pane" data-pane="chat" aria-label="Chat" tabIndex={-1}>
            <ChatPane api={api} conversationId={conversationId} state={state} dispatch={dispatch} />
          </section>
        </div>
      </Panel>
      <Separator className="separator" />
      <Panel defaultSize="45%" minSize="15%">
        <Group orientation="vertical">
          <Panel defaultSize="62%" minSize="10%">
            {replayOn && (
              <section className="pane fill replay-pane" data-pane="replay" aria-label="Replay" tabIndex={-1}>
                <ReplayPanel api={api} conversationId={conversationId} eventId={replayAt} checkpoints={checkpoints.list} onFork={setForkAt} />
              </section>
            )}
            <div className="column-pane" ref={right} hidden={replayOn}>
              <div className="pane-tabs" role="tablist" aria-label={desktop ? "Editor, browser or desktop" : "Editor or browser"} onKeyDown={tabKeys}>
                <PaneTab tab="editor" current={rightTab} onSelect={setRightTab}>
                  Editor
                </PaneTab>
                <PaneTab tab="browser" current={rightTab} onSelect={setRightTab}>
                  Browser
                  {handoff && rightTab !== "browser" && (
                    <span className="badge warn" title={`The agent asks you to take over: ${handoff.reason}`}>
                      needs you
                    </span>
                  )}
                </PaneTab>
                {desktop && (
                  <PaneTab tab="desktop" current={rightTab} onSelect={setRightTab}>
                    Desktop
                  </PaneTab>
                )}
              </div>
              <section className="pane grow" id="panel-editor" role="tabpanel" hidden={rightTab !== "editor"} data-pane="editor" aria-label="Editor" tabIndex={-1}>
                {lacks("tandem_workspace_files_v1") ? (
                  <NotOnThisServer>
                    This server has no workspace file API (it is not a Tandem server), so the editor cannot open its files. Every file edit of the agent is
                    still in the timeline.
                  </NotOnThisServer>
                ) : (
                  <Suspense fallback={<div className="empty">Loading editor…</div>}>
                    <EditorPane api={api} conversationId={conversationId} revision={state.items.length + filesWritten} />
                  </Suspense>
                )}
              </section>
              <section className="pane grow" id="panel-browser" role="tabpanel" hidden={rightTab !== "browser"} data-pane="browser" aria-label="Browser" tabIndex={-1}>
                {rightTab !== "browser" ? null : lacks("tandem_browser_socket_v1") ? (
                  <NotOnThisServer>
                    This server has no browser socket (it is not a Tandem server), so the agent's browser cannot be shown live here. Every browser action of the
                    agent, with its screenshot, is still in the timeline.
                  </NotOnThisServer>
                ) : (
                  <Suspense fallback={<div className="empty">Loading browser…</div>}>
                    <BrowserPane backend={backend} conversationId={conversationId} />
                  </Suspense>
                )}
              </section>
              {desktop && (
                <section className="pane grow" id="panel-desktop" role="tabpanel" hidden={rightTab !== "desktop"} data-pane="desktop" aria-label="Desktop" tabIndex={-1}>
                  {rightTab === "desktop" && (
                    <Suspense fallback={<div className="empty">Loading desktop…</div>}>
                      <DesktopPane backend={backend} conversationId={conversationId} />
                    </Suspense>
                  )}
                </section>
              )}
            </div>
          </Panel>
          <Separator className="separator horizontal" />
          <Panel defaultSize="38%" minSize="10%">
            <section className="pane fill" data-pane="terminal" aria-label="Terminal" tabIndex={-1}>
              {lacks("tandem_pty_socket_v1") ? (
                <NotOnThisServer>
                  This server has no terminal socket (it is not a Tandem server), so you cannot attach to the agent's shell here. The agent's commands and
                  their output are in the timeline.
                </NotOnThisServer>
              ) : (
                <Suspense fallback={<div className="empty">Loading terminal…</div>}>
                  <TerminalPane backend={backend} conversationId={conversationId} />
                </Suspense>
              )}
            </section>
          </Panel>
        </Group>
      </Panel>
    </Group>
  );
}

/** One tab of the right column's tab list; its panel is `panel-<tab>`. */
function PaneTab(props: { tab: RightTab; current: RightTab; onSelect: (tab: RightTab) => void; children: ReactNode }) {
  const on = props.current === props.tab;
  return (
    <button
      type="button"
      role="tab"
      id={`tab-${props.tab}`}
      aria-selected={on}
      aria-controls={`panel-${props.tab}`}
      tabIndex={on ? 0 : -1}
      className={`tab${on ? " on" : ""}`}
      onClick={() => props.onSelect(props.tab)}
    >
      {props.children}
    </button>
  );
}
