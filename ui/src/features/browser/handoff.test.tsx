import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { WireEvent } from "../../api/types";
import { initialTimeline, timelineReducer } from "../../store/timeline";
import * as E from "../../test/events";
import { pendingHandoff } from "./handoff";
import { HandoffNotice } from "./HandoffNotice";

const browserAction = (tool: string, args: Record<string, unknown>) =>
  ({
    ...E.action(tool),
    tool_name: tool,
    action: { ...args, kind: "BrowserAction" },
    tool_call: { id: `call_${tool}`, name: tool, arguments: JSON.stringify(args), origin: "completion" },
    tool_call_id: `call_${tool}`,
  }) as unknown as WireEvent;
const state = (events: WireEvent[]) => timelineReducer(initialTimeline(), { type: "events", events });

describe("pendingHandoff", () => {
  it("is the agent's unanswered handoff request, and none once the person handed back", () => {
    const nav = browserAction("browser_navigate", { url: "http://127.0.0.1:9/" });
    const ask = browserAction("browser_request_handoff", { reason: "Please log in" });
    expect(pendingHandoff(state([nav]))).toBeNull();
    expect(pendingHandoff(state([nav, ask]))).toEqual({ actionId: ask.id, reason: "Please log in" });
    expect(pendingHandoff(state([nav, ask, E.observation(ask, "The person handed back")]))).toBeNull();
  });
});

describe("HandoffNotice", () => {
  it("takes control through the REST mirror, then shows the browser", async () => {
    const takeControl = vi.fn(async () => ({}));
    const onShow = vi.fn();
    render(<HandoffNotice handoff={{ actionId: "a", reason: "Please log in" }} api={{ takeControl }} conversationId="c1" onShow={onShow} />);
    expect(screen.getByRole("region", { name: "The agent asks for you" }).textContent).toContain("Please log in");
    fireEvent.click(screen.getByRole("button", { name: "Take control" }));
    await waitFor(() => expect(onShow).toHaveBeenCalled());
    expect(takeControl).toHaveBeenCalledWith("c1");
  });

  it("says why taking control failed", async () => {
    const takeControl = vi.fn(async () => {
      throw new Error("Conflict (take control of the browser): the browser is not running");
    });
    const onShow = vi.fn();
    render(<HandoffNotice handoff={{ actionId: "a", reason: "" }} api={{ takeControl }} conversationId="c1" onShow={onShow} />);
    fireEvent.click(screen.getByRole("button", { name: "Take control" }));
    expect((await screen.findByRole("alert")).textContent).toContain("the browser is not running");
    expect(onShow).not.toHaveBeenCalled();
  });
});
