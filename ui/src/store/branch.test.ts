import { describe, expect, it } from "vitest";
import type { WireEvent } from "../api/types";
import * as E from "../test/events";
import { activeBranchIds, activeItems, LEAF_KEY } from "./branch";
import { initialTimeline, messageText, timelineReducer, type TimelineState } from "./timeline";

const feed = (events: WireEvent[], s: TimelineState = initialTimeline()) => timelineReducer(s, { type: "events", events });
/** A navigation as the server records it (test boundary: plain JSON). */
const navigate = (to: string | null) =>
  ({ kind: "ConversationStateUpdateEvent", source: "environment", id: E.nextId(), timestamp: "2026-01-01T00:00:00", key: LEAF_KEY, value: to }) as unknown as WireEvent;
const texts = (s: TimelineState) =>
  activeItems(s.items, s.branches).map((i) => (i.type === "message" ? messageText(i.event) : i.type === "state" ? `[${i.event.key}]` : i.type));

describe("branches of a conversation", () => {
  it("are one branch, every row, until the conversation navigates", () => {
    const s = feed([E.userMessage("a"), E.status("running"), E.agentMessage("b")]);
    expect(activeBranchIds(s.branches)).toBeNull();
    expect(activeItems(s.items, s.branches)).toBe(s.items);
  });

  it("after a navigation show the path to the head, and what follows it", () => {
    const a = E.userMessage("a");
    const b = E.agentMessage("b");
    let s = feed([a, b, E.userMessage("c"), E.agentMessage("d")]);
    s = feed([navigate(b.id), E.status("idle")], s);
    expect(texts(s)).toEqual(["a", "b", `[${LEAF_KEY}]`, "[execution_status]"]);
    s = feed([E.userMessage("e")], s);
    expect(texts(s)).toEqual(["a", "b", `[${LEAF_KEY}]`, "[execution_status]", "e"]);
    expect(s.branches.head).toBe(s.items[s.items.length - 1]?.id);
  });

  it("go back to another branch when the head moves onto it again", () => {
    const a = E.userMessage("a");
    const c = E.userMessage("c");
    let s = feed([a, E.agentMessage("b"), c]);
    s = feed([navigate(a.id), E.userMessage("x")], s);
    expect(texts(s)).toEqual(["a", `[${LEAF_KEY}]`, "x"]);
    s = feed([navigate(c.id)], s);
    expect(texts(s)).toEqual(["a", "b", "c", `[${LEAF_KEY}]`]);
  });

  it("keep an action with its answer on the branch", () => {
    const a = E.userMessage("a");
    const act = E.action("ls");
    let s = feed([a, act, E.observation(act, "files"), E.agentMessage("later")]);
    s = feed([navigate(s.items[1]?.type === "action" && s.items[1].result ? s.items[1].result.id : "")], s);
    expect(texts(s)).toEqual(["a", "action", `[${LEAF_KEY}]`]);
  });

  it("go to the empty tree on a navigation to null or to an unknown event, as on the server", () => {
    let s = feed([E.userMessage("a"), navigate(null)]);
    expect(s.branches.head).toBeNull();
    expect(texts(s)).toEqual([`[${LEAF_KEY}]`]);
    s = feed([E.userMessage("b"), navigate("no-such-event")], s);
    expect(s.branches.head).toBeNull();
  });

  it("ignore streamed deltas and survive replayed events", () => {
    const a = E.userMessage("a");
    let s = feed([a, E.delta("tok"), E.agentMessage("b"), navigate(a.id)]);
    s = feed([a], s);
    expect(texts(s)).toEqual(["a", `[${LEAF_KEY}]`]);
  });
});
