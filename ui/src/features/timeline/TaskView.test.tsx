import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { WireEvent } from "../../api/types";
import { initialTimeline, timelineReducer } from "../../store/timeline";
import { useUi } from "../../store/ui";
import * as E from "../../test/events";
import { useBackends, type Backend } from "../backends/backendStore";
import { conversationsKey, type ConversationItem } from "../conversations/queries";
import { itemText } from "./describe";
import { ItemView } from "./ItemView";
import { findChild, taskHeadline } from "./task";

const backend: Backend = { id: "local", name: "Local", kind: "local", baseUrl: "http://127.0.0.1:1", key: "k" };
const items = (events: WireEvent[]) => timelineReducer(initialTimeline(), { type: "events", events }).items;

/** A `task` call as the server records it (test boundary: plain JSON). */
function taskAction(args: Record<string, unknown>): WireEvent {
  const a = E.action("x") as unknown as Record<string, unknown>;
  return {
    ...a,
    tool_name: "task",
    tool_call: { id: a.tool_call_id, name: "task", arguments: JSON.stringify(args), origin: "completion" },
    action: { kind: "TaskAction", subagent_type: "general-purpose", ...args },
    summary: "task",
  } as unknown as WireEvent;
}

function taskObservation(a: WireEvent, obs: Record<string, unknown>): WireEvent {
  const o = E.observation(a, "") as unknown as Record<string, unknown>;
  return { ...o, tool_name: "task", observation: { kind: "TaskObservation", content: [], is_error: false, subagent: "general-purpose", ...obs } } as unknown as WireEvent;
}

const child = { id: "c-42", title: "Count the tests", parent_conversation_id: "parent-1", execution_status: "finished" } as ConversationItem;

function renderItem(events: WireEvent[]) {
  const qc = new QueryClient();
  qc.setQueryData(conversationsKey("local"), [child]);
  const [item] = items(events);
  render(
    <QueryClientProvider client={qc}>
      <ItemView item={item!} pending={false} />
    </QueryClientProvider>,
  );
}

describe("the task tool in the timeline", () => {
  beforeEach(() => {
    useBackends.setState({ backends: [backend], activeId: "local" });
    useUi.setState({ conversationId: "parent-1" });
  });
  afterEach(() => {
    cleanup();
    useBackends.setState({ backends: [], activeId: null });
    useUi.setState({ conversationId: null });
  });

  it("says which sub-agent runs what, with the prompt", () => {
    const a = taskAction({ description: "Count the tests", prompt: "Count the test files under tests/ and report the number." });
    renderItem([a]);
    expect(document.querySelector(".headline")?.textContent).toBe("general-purpose sub-agent: Count the tests");
    expect(screen.getByText("Count the test files under tests/ and report the number.")).toBeTruthy();
    expect(screen.getByText("running…")).toBeTruthy();
    expect(taskHeadline({ prompt: "first line\nsecond", subagent_type: "explore", resume: "t1" })).toBe("explore sub-agent: first line (resuming task t1)");
  });

  it("shows the answer and a link that opens the child conversation", () => {
    const a = taskAction({ description: "Count the tests", prompt: "Count them." });
    const o = taskObservation(a, { task_id: "c-42", status: "completed", content: [{ type: "text", text: "There are **12** test files." }] });
    renderItem([a, o]);
    expect(screen.getByText("sub-agent completed")).toBeTruthy();
    expect(screen.getByText("12").tagName).toBe("STRONG");
    fireEvent.click(screen.getByRole("button", { name: "Open the sub-agent's conversation →" }));
    expect(useUi.getState().conversationId).toBe("c-42");
    expect(itemText(items([a, o])[0]!)).toContain("There are **12** test files.");
  });

  it("marks a failed task and names its task id when no conversation is listed for it", () => {
    const a = taskAction({ prompt: "Do the impossible." });
    const o = taskObservation(a, { task_id: "t-9", status: "error", is_error: true, content: [{ type: "text", text: "Sub-agent failed: the LLM refused" }] });
    renderItem([a, o]);
    expect(screen.getByText("sub-agent error").className).toContain("st-error");
    expect(document.querySelector(".result.error")?.textContent).toContain("Sub-agent failed: the LLM refused");
    expect(screen.getByText("t-9").tagName).toBe("CODE");
    expect(screen.queryByRole("button", { name: /Open the sub-agent/ })).toBeNull();
  });

  it("finds the child by id, or by a task id it carries under the parent", () => {
    const tagged = { id: "c-7", parent_conversation_id: "p", tags: { task_id: "t-7" } } as unknown as ConversationItem;
    const elsewhere = { id: "c-8", parent_conversation_id: "other", tags: { task_id: "t-8" } } as unknown as ConversationItem;
    expect(findChild([child, tagged, elsewhere], "c-42", "p")).toBe(child);
    const uuid = { id: "0f8e2c1a9b3d4e5f8a7b6c5d4e3f2a1b" } as ConversationItem;
    expect(findChild([uuid], "0F8E2C1A-9B3D-4E5F-8A7B-6C5D4E3F2A1B", null)).toBe(uuid);
    expect(findChild([child, tagged, elsewhere], "t-7", "p")).toBe(tagged);
    expect(findChild([child, tagged, elsewhere], "t-8", "p")).toBeNull();
    expect(findChild([child], "", "p")).toBeNull();
  });
});
