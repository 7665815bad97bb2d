import { describe, expect, it } from "vitest";
import type { WireEvent } from "../../api/types";
import { initialTimeline, timelineReducer } from "../../store/timeline";
import * as E from "../../test/events";
import { replayEvents } from "./events";

const itemsOf = (events: WireEvent[]) => timelineReducer(initialTimeline(), { type: "events", events }).items;

/** Test boundary: a wire event built from plain JSON. */
const raw = (o: Record<string, unknown>) => ({ id: E.nextId(), timestamp: "2026-11-29T00:00:00", ...o }) as unknown as WireEvent;

describe("replay events", () => {
  it("lists an action and its answer as two events, leaving state noise out", () => {
    const a = E.action("echo one");
    const o = E.observation(a, "one");
    const events = replayEvents(itemsOf([E.userMessage("go"), E.status("running"), a, E.stats(0.1, 10, 2), o, E.agentMessage("done")]));
    expect(events.map((e) => [e.kind, e.summary])).toEqual([
      ["MessageEvent", "go"],
      ["ActionEvent", "echo one"],
      ["ObservationEvent", "one"],
      ["MessageEvent", "done"],
    ]);
    expect(events.map((e) => e.mark)).toEqual([null, null, null, null]);
  });

  it("marks actions that waited for confirmation and rejections", () => {
    const a = E.action("rm -rf build");
    const r = E.rejection(a, "not now");
    const events = replayEvents(itemsOf([a, E.status("waiting_for_confirmation"), r]));
    expect(events.map((e) => [e.kind, e.mark])).toEqual([
      ["ActionEvent", "approval"],
      ["UserRejectObservation", "approval"],
    ]);
    expect(events[1]?.summary).toBe("Rejected: not now");
  });

  it("marks errors: a failed command, an agent error and a conversation error", () => {
    const a = E.action("false");
    const failed = raw({
      kind: "ObservationEvent",
      source: "environment",
      tool_name: "terminal",
      tool_call_id: (a as { tool_call_id?: string }).tool_call_id,
      action_id: a.id,
      observation: { content: [{ type: "text", text: "exit 1" }], is_error: true, kind: "TerminalObservation" },
    });
    const agentError = raw({ kind: "AgentErrorEvent", source: "agent", tool_name: "x", tool_call_id: "nope", error: "bad tool" });
    const convError = raw({ kind: "ConversationErrorEvent", source: "environment", code: "LLMError", detail: "down" });
    const events = replayEvents(itemsOf([a, failed, agentError, convError]));
    expect(events.map((e) => e.mark)).toEqual([null, "error", "error", "error"]);
  });

  it("marks the person's browser takeover and hand-back", () => {
    const take = raw({ kind: "ConversationStateUpdateEvent", source: "environment", key: "browser_control", value: { driver: "person", url: "https://example.com" } });
    const back = raw({ kind: "ConversationStateUpdateEvent", source: "environment", key: "browser_control", value: { driver: "agent", note: "logged in" } });
    const events = replayEvents(itemsOf([take, back]));
    expect(events.map((e) => [e.mark, e.summary])).toEqual([
      ["browser", "You took control of the browser at https://example.com"],
      ["browser", "You handed the browser back: logged in"],
    ]);
  });
});
