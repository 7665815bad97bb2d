import { fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, it } from "vitest";
import type { WireEvent } from "../../api/types";
import { initialTimeline, timelineReducer } from "../../store/timeline";
import * as E from "../../test/events";
import { defaultFilter, filterItems, type TimelineFilter } from "./filter";
import { TimelineFilters } from "./TimelinePane";

function state(events: WireEvent[]) {
  return timelineReducer(initialTimeline(), { type: "events", events });
}

describe("timeline filters", () => {
  const ok = E.action("ls -la");
  const bad = E.action("rm -rf /", "HIGH");
  const s = state([E.userMessage("please list"), E.status("running"), ok, E.observation(ok, "README.md"), bad, E.rejection(bad, "no way"), E.agentMessage("done")]);

  it("hides state updates by default and shows rejected actions as errors", () => {
    const items = filterItems(s.items, defaultFilter);
    expect(items.map((i) => i.type)).toEqual(["message", "action", "action", "message"]);
    expect(filterItems(s.items, { ...defaultFilter, kinds: new Set(["error"]) }).map((i) => i.id)).toEqual([bad.id]);
  });

  it("shows a rewind of the conversation by default, in words", () => {
    const nav = { ...E.status("idle"), key: "leaf_event_id", value: s.items[0]?.id ?? null } as WireEvent;
    const items = filterItems(state([E.userMessage("a"), nav]).items, { ...defaultFilter, text: "went back to an earlier event" });
    expect(items.map((i) => i.id)).toEqual([nav.id]);
  });

  it("filters by source and by text (including observation output)", () => {
    expect(filterItems(s.items, { ...defaultFilter, source: "user" }).length).toBe(1);
    expect(filterItems(s.items, { ...defaultFilter, text: "readme" }).map((i) => i.id)).toEqual([ok.id]);
  });

  it("toolbar toggles kinds and edits the text", () => {
    let last: TimelineFilter = defaultFilter;
    function Harness() {
      const [f, setF] = useState<TimelineFilter>(defaultFilter);
      last = f;
      return <TimelineFilters filter={f} onChange={setF} />;
    }
    render(<Harness />);
    fireEvent.click(screen.getByRole("button", { name: "State" }));
    expect(last.kinds.has("state")).toBe(true);
    fireEvent.click(screen.getByRole("button", { name: "Messages" }));
    expect(last.kinds.has("message")).toBe(false);
    fireEvent.change(screen.getByLabelText("Filter text"), { target: { value: "rm" } });
    fireEvent.change(screen.getByLabelText("Source"), { target: { value: "agent" } });
    expect([last.text, last.source]).toEqual(["rm", "agent"]);
  });
});
