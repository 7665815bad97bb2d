import { describe, expect, it } from "vitest";
import type { WireEvent } from "../api/types";
import * as E from "../test/events";
import { initialTimeline, pendingApprovals, timelineReducer, type TimelineState } from "./timeline";

const feed = (events: WireEvent[], s: TimelineState = initialTimeline()) => timelineReducer(s, { type: "events", events });

// Conversations written by the upstream server (golden fixtures of the repository).
const fixtureFiles = import.meta.glob("../../../tests/fixtures/upstream/conversations/*/events/*.json", {
  eager: true,
  import: "default",
}) as Record<string, WireEvent>;

function fixtureConversations(): WireEvent[][] {
  const byConv = new Map<string, [string, WireEvent][]>();
  for (const [path, ev] of Object.entries(fixtureFiles)) {
    const conv = path.split("/conversations/")[1]?.split("/")[0] ?? "";
    const list = byConv.get(conv) ?? [];
    list.push([path, ev]);
    byConv.set(conv, list);
  }
  return [...byConv.values()].map((l) => l.sort(([a], [b]) => a.localeCompare(b)).map(([, e]) => e));
}

describe("timeline reducer", () => {
  it("loads every upstream fixture conversation with every action answered", () => {
    const convs = fixtureConversations();
    expect(convs.length).toBeGreaterThan(0);
    for (const events of convs) {
      const s = feed(events);
      expect(s.seen.size).toBe(events.length);
      const actions = s.items.filter((i) => i.type === "action");
      expect(actions.length).toBe(events.filter((e) => e.kind === "ActionEvent").length);
      // Observations are attached to their actions, not listed on their own.
      expect(s.items.filter((i) => i.type === "result")).toEqual([]);
      expect(s.status).not.toBeNull();
      expect(s.lastPersistedId).toBe(events[events.length - 1]?.id);
    }
  });

  it("groups an observation with its action by action_id", () => {
    const a = E.action("ls");
    const s = feed([E.userMessage("hi"), a, E.observation(a, "file.txt")]);
    expect(s.items.map((i) => i.type)).toEqual(["message", "action"]);
    const item = s.items[1];
    expect(item?.type === "action" && item.result?.kind).toBe("ObservationEvent");
    expect(s.openActions).toEqual([]);
  });

  it("groups an agent error with its action by tool_call_id", () => {
    const a = E.action("x", "UNKNOWN", "call_err");
    const err = { ...E.status("x"), kind: "AgentErrorEvent", source: "agent", tool_name: "terminal", tool_call_id: "call_err", error: "bad args" } as unknown as WireEvent;
    const s = feed([a, err]);
    const item = s.items[0];
    expect(item?.type === "action" && item.result?.kind).toBe("AgentErrorEvent");
  });

  it("detects pending approvals only while waiting for confirmation", () => {
    const a1 = E.action("rm -rf build", "HIGH");
    let s = feed([E.userMessage("clean"), E.status("running"), a1]);
    expect(pendingApprovals(s)).toEqual([]);
    s = feed([E.status("waiting_for_confirmation")], s);
    expect(pendingApprovals(s).map((a) => a.id)).toEqual([a1.id]);
    s = feed([E.rejection(a1, "no"), E.status("idle")], s);
    expect(pendingApprovals(s)).toEqual([]);
    const item = s.items.find((i) => i.id === a1.id);
    expect(item?.type === "action" && item.result?.kind).toBe("UserRejectObservation");
  });

  it("tracks status, policy, model and usage from field updates and full_state", () => {
    let s = feed([
      E.fullState({
        execution_status: "idle",
        confirmation_policy: { kind: "AlwaysConfirm" },
        agent: { llm: { model: "openai/tandem-demo" } },
      }),
    ]);
    expect([s.status, s.policy, s.model]).toEqual(["idle", "AlwaysConfirm", "openai/tandem-demo"]);
    s = feed([E.status("running"), E.stats(0.0123, 1000, 50)], s);
    expect(s.status).toBe("running");
    expect(s.usage).toMatchObject({ cost: 0.0123, promptTokens: 1000, completionTokens: 50, contextTokens: 1050 });
    // full_state is a snapshot, not history.
    expect(s.items.filter((i) => i.type === "state").length).toBe(2);
  });

  it("drops replayed events by id and returns the same state for a pure replay", () => {
    const events = [E.userMessage("a"), E.agentMessage("b")];
    const s1 = feed(events);
    const s2 = feed(events, s1);
    expect(s2).toBe(s1);
    const s3 = feed([...events, E.agentMessage("c")], s1);
    expect(s3.items.length).toBe(3);
  });

  it("accumulates streamed text and clears it when the message arrives", () => {
    let s = feed([E.delta("Hel"), E.delta("lo")]);
    expect(s.streaming?.content).toBe("Hello");
    expect(s.items).toEqual([]);
    s = feed([E.agentMessage("Hello")], s);
    expect(s.streaming).toBeNull();
  });

  it("keeps queued messages until the server echoes them", () => {
    let s = timelineReducer(initialTimeline(), { type: "queue", localId: "l1", text: "also add tests" });
    s = timelineReducer(s, { type: "queue", localId: "l2", text: "and docs" });
    s = feed([E.userMessage("also add tests")], s);
    expect(s.queued.map((q) => q.localId)).toEqual(["l2"]);
    s = timelineReducer(s, { type: "queueFailed", localId: "l2", error: "offline" });
    expect(s.queued[0]?.failed).toBe("offline");
  });

  it("does not mutate its input", () => {
    const a = E.action("ls");
    const s1 = feed([a]);
    const snapshot = JSON.stringify({ items: s1.items, open: s1.openActions });
    feed([E.observation(a, "x")], s1);
    expect(JSON.stringify({ items: s1.items, open: s1.openActions })).toBe(snapshot);
  });

  it("applies 10,000 events quickly, in one batch and one by one", () => {
    const events: WireEvent[] = [];
    for (let i = 0; i < 2500; i++) {
      const a = E.action(`echo ${i}`);
      events.push(a, E.observation(a, `${i}`), E.stats(i / 1000, i, i), E.agentMessage(`step ${i}`));
    }
    const t0 = performance.now();
    const s = feed(events);
    const batch = performance.now() - t0;
    expect(s.items.length).toBe(7500);
    expect(batch).toBeLessThan(1000);
    // Live arrival in batches of 50 (what one animation frame collects under load).
    const t1 = performance.now();
    let live = initialTimeline();
    for (let i = 0; i < events.length; i += 50) live = feed(events.slice(i, i + 50), live);
    expect(live.items.length).toBe(7500);
    expect(performance.now() - t1).toBeLessThan(5000);
  });
});
