// The run queue: a run beyond the server's slots waits, `running` with a place in the queue.
// The status pill says "Queued, n ahead" (n = 0: "Queued, next") instead of "Running", the place
// is polled while it waits (it moves without an event), and "Running" returns with its slot.
import { act, render, screen } from "@testing-library/react";
import { useCallback, useReducer } from "react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Api } from "../../api/client";
import type { WireEvent } from "../../api/types";
import { initialTimeline, timelineReducer, type TimelineInput, type TimelineState } from "../../store/timeline";
import * as E from "../../test/events";
import { listPollMs, type ConversationItem } from "../conversations/queries";
import { infoQueuedAhead, queuePlaceOf, statusClass, statusText } from "./queue";
import { StatusBar } from "./StatusBar";
import { useQueuePlace } from "./useQueuePlace";

const feed = (events: WireEvent[], s: TimelineState = initialTimeline()) => timelineReducer(s, { type: "events", events });

describe("the queued label", () => {
  it("says how many runs are ahead of a running conversation that waits, and the status otherwise", () => {
    expect(statusText("running", 3)).toBe("Queued, 3 ahead");
    expect(statusText("running", 1)).toBe("Queued, 1 ahead");
    expect(statusText("running", 0)).toBe("Queued, next");
    expect(statusText("running", null)).toBe("Running");
    // A place left over on another status is not a queue.
    expect(statusText("paused", 2)).toBe("Paused");
    expect(statusText(null, null)).toBe("—");
    expect(statusClass("running", 0)).toBe("st-queued");
    expect(statusClass("running", null)).toBe("st-running");
  });

  it("reads the place from the state update and from ConversationInfo, loosely", () => {
    expect(queuePlaceOf({ ahead: 2 })).toBe(2);
    expect(queuePlaceOf(null)).toBeNull();
    expect(queuePlaceOf({ ahead: "2" })).toBeNull();
    expect(infoQueuedAhead({ id: "c", queued_ahead: 0 })).toBe(0);
    expect(infoQueuedAhead({ id: "c" })).toBeNull();
    expect(infoQueuedAhead({ id: "c", queued_ahead: null })).toBeNull();
  });
});

describe("the timeline reducer and the run queue", () => {
  it("follows queued_ahead: set when the run starts waiting, cleared when it gets its slot", () => {
    let s = feed([E.status("running"), E.queued(2)]);
    expect(s.queuedAhead).toBe(2);
    s = timelineReducer(s, { type: "queuePlace", ahead: 1 });
    expect(s.queuedAhead).toBe(1);
    s = feed([E.queued(null)], s);
    expect(s.queuedAhead).toBeNull();
    // A poll answered after the run left the queue does not put it back.
    expect(timelineReducer(s, { type: "queuePlace", ahead: 0 })).toBe(s);
  });

  it("takes the place from a full_state snapshot, and its absence as not queued", () => {
    const s = feed([E.fullState({ execution_status: "running", queued_ahead: { ahead: 4 } })]);
    expect(s.queuedAhead).toBe(4);
    expect(feed([E.fullState({ execution_status: "running" })], s).queuedAhead).toBeNull();
  });
});

describe("the status bar while queued", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** The status bar of a conversation fed `events`, polling its place as the Workspace does. */
  function setup(api: Pick<Api, "getConversation">, events: WireEvent[]) {
    let push: (i: TimelineInput) => void = () => {};
    function Harness() {
      const [state, dispatch] = useReducer(timelineReducer, undefined, () => feed(events));
      push = dispatch;
      const onPlace = useCallback((ahead: number) => dispatch({ type: "queuePlace", ahead }), []);
      useQueuePlace(api, "c1", state.status === "running" && state.queuedAhead !== null, onPlace);
      return <StatusBar state={state} stream={null} />;
    }
    render(<Harness />);
    return { push: (i: TimelineInput) => act(() => push(i)) };
  }
  const pill = () => screen.getByRole("status", { name: "Conversation status" }).querySelector(".status-pill");
  const tick = () => act(() => vi.advanceTimersByTimeAsync(2000));

  it("shows the place, refreshes it every 2 s from the server, and says Running once the run has its slot", async () => {
    const answers = [{ id: "c1", queued_ahead: 1 }, { id: "c1", queued_ahead: 0 }, { id: "c1", queued_ahead: 0 }];
    const getConversation = vi.fn(async () => answers.shift() ?? { id: "c1" });
    const { push } = setup({ getConversation } as unknown as Pick<Api, "getConversation">, [E.status("running"), E.queued(2)]);
    expect(pill()?.textContent).toBe("Queued, 2 ahead");
    expect(pill()?.className).toContain("st-queued");
    expect(getConversation).not.toHaveBeenCalled();

    await tick();
    expect(getConversation).toHaveBeenCalledWith("c1");
    expect(pill()?.textContent).toBe("Queued, 1 ahead");
    await tick();
    expect(pill()?.textContent).toBe("Queued, next");

    push({ type: "events", events: [E.queued(null)] });
    expect(pill()?.textContent).toBe("Running");
    const asked = getConversation.mock.calls.length;
    await tick();
    await tick();
    // Not queued any more: no more polling.
    expect(getConversation.mock.calls.length).toBe(asked);
  });

  it("keeps the last place when a poll fails", async () => {
    const getConversation = vi.fn(async () => {
      throw new Error("Cannot reach http://h");
    });
    setup({ getConversation } as unknown as Pick<Api, "getConversation">, [E.status("running"), E.queued(3)]);
    await tick();
    expect(getConversation).toHaveBeenCalledTimes(1);
    expect(pill()?.textContent).toBe("Queued, 3 ahead");
  });
});

describe("the conversation list while a run is queued", () => {
  it("polls every 2 s while a listed run waits, every 5 s otherwise", () => {
    const item = (o: Record<string, unknown>) => ({ id: "x", execution_status: "running", ...o }) as unknown as ConversationItem;
    expect(listPollMs([item({}), item({ queued_ahead: 0 })])).toBe(2000);
    expect(listPollMs([item({})])).toBe(5000);
    expect(listPollMs(undefined)).toBe(5000);
  });
});
