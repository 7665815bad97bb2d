import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { useReducer } from "react";
import { describe, expect, it, vi } from "vitest";
import type { WireEvent } from "../../api/types";
import { initialTimeline, timelineReducer, type TimelineInput } from "../../store/timeline";
import * as E from "../../test/events";
import { ChatPane, type ChatApi } from "./ChatPane";

function setup(api: ChatApi, events: WireEvent[]) {
  let push: (i: TimelineInput) => void = () => {};
  function Harness() {
    const [state, dispatch] = useReducer(timelineReducer, undefined, () =>
      timelineReducer(initialTimeline(), { type: "events", events }),
    );
    push = dispatch;
    return <ChatPane api={api} conversationId="c" state={state} dispatch={dispatch} />;
  }
  render(<Harness />);
  return { push: (i: TimelineInput) => act(() => push(i)) };
}

function fakeApi(): ChatApi & { sendMessage: ReturnType<typeof vi.fn> } {
  return {
    sendMessage: vi.fn(async () => ({ success: true })),
    pause: vi.fn(async () => ({ success: true })),
    interrupt: vi.fn(async () => ({ success: true })),
    run: vi.fn(async () => ({ success: true })),
  } as unknown as ChatApi & { sendMessage: ReturnType<typeof vi.fn> };
}

describe("ChatPane", () => {
  it("while running: sends without starting a run and shows the message as queued until echoed", async () => {
    const api = fakeApi();
    const { push } = setup(api, [E.status("running")]);
    const box = screen.getByLabelText("Message to the agent");
    fireEvent.change(box, { target: { value: "also add tests" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(api.sendMessage).toHaveBeenCalledWith("c", "also add tests", false));
    expect(screen.getByLabelText("Queued messages").textContent).toContain("also add tests");
    push({ type: "events", events: [E.userMessage("also add tests")] });
    expect(screen.queryByLabelText("Queued messages")).toBeNull();
  });

  it("when idle: the message starts a run; pause/interrupt are for running only", async () => {
    const api = fakeApi();
    setup(api, [E.status("finished")]);
    expect((screen.getByRole("button", { name: "Pause" }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.change(screen.getByLabelText("Message to the agent"), { target: { value: "next" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(api.sendMessage).toHaveBeenCalledWith("c", "next", true));
  });

  it("marks a message that could not be sent", async () => {
    const api = fakeApi();
    api.sendMessage.mockRejectedValueOnce(new Error("Cannot reach http://h"));
    setup(api, [E.status("idle")]);
    fireEvent.change(screen.getByLabelText("Message to the agent"), { target: { value: "hello" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    expect((await screen.findByText(/not sent/)).textContent).toBe("not sent");
    expect(screen.getByLabelText("Queued messages").textContent).toContain("Cannot reach");
  });

  it("pause and interrupt call their endpoints while running", async () => {
    const api = fakeApi();
    setup(api, [E.status("running")]);
    fireEvent.click(screen.getByRole("button", { name: "Pause" }));
    fireEvent.click(screen.getByRole("button", { name: "Interrupt" }));
    await waitFor(() => expect(api.interrupt).toHaveBeenCalledWith("c"));
    expect(api.pause).toHaveBeenCalledWith("c");
  });
});
