import { act, fireEvent, render, renderHook, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { useGlobalShortcuts } from "../../shell/shortcuts";
import type { ReplayEvent } from "./events";
import { Scrubber } from "./Scrubber";
import { useReplay } from "./useReplay";

const events = (n: number): ReplayEvent[] => Array.from({ length: n }, (_, i) => ({ id: `e${i}`, kind: "ActionEvent", summary: `step ${i}`, mark: null }));

/** The scrubber the way the workspace wires it, with the app's global keys installed. */
function Harness({ list }: { list: ReplayEvent[] }) {
  useGlobalShortcuts();
  const r = useReplay(list.length);
  return (
    <div>
      <button type="button" aria-pressed={r.on} onClick={r.toggle}>
        Replay
      </button>
      {r.on && <Scrubber events={list} cursor={r.cursor} index={r.index} send={r.send} />}
      <input aria-label="Message" />
    </div>
  );
}

const position = () => screen.getByLabelText("Replay event").textContent;

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("replay", () => {
  it("starts live, steps, goes to the first event and back to live by the keyboard", () => {
    render(<Harness list={events(5)} />);
    fireEvent.click(screen.getByRole("button", { name: "Replay" }));
    expect(position()).toBe("5 / 5");
    expect(screen.getByRole("button", { name: "Live" }).getAttribute("aria-pressed")).toBe("true");
    fireEvent.keyDown(document.body, { key: "ArrowLeft" });
    fireEvent.keyDown(document.body, { key: "ArrowLeft" });
    expect(position()).toBe("3 / 5");
    expect(screen.getByRole("button", { name: "Live" }).getAttribute("aria-pressed")).toBe("false");
    fireEvent.keyDown(document.body, { key: "ArrowRight" });
    expect(position()).toBe("4 / 5");
    fireEvent.keyDown(document.body, { key: "Home" });
    expect(position()).toBe("1 / 5");
    fireEvent.keyDown(document.body, { key: "End" });
    expect(position()).toBe("5 / 5");
  });

  it("plays one event per 500 ms divided by the speed, and stops at the end", () => {
    render(<Harness list={events(4)} />);
    fireEvent.click(screen.getByRole("button", { name: "Replay" }));
    fireEvent.change(screen.getByLabelText("Replay position"), { target: { value: "0" } });
    expect(position()).toBe("1 / 4");
    fireEvent.change(screen.getByLabelText("Replay speed"), { target: { value: "2" } });
    fireEvent.click(screen.getByRole("button", { name: "Play" }));
    act(() => void vi.advanceTimersByTime(250));
    expect(position()).toBe("2 / 4");
    act(() => void vi.advanceTimersByTime(1000));
    expect(position()).toBe("4 / 4");
    expect(screen.getByRole("button", { name: "Play" })).toBeTruthy();
  });

  it("pauses with Space and leaves keys typed into a field alone", () => {
    render(<Harness list={events(6)} />);
    fireEvent.click(screen.getByRole("button", { name: "Replay" }));
    fireEvent.click(screen.getByRole("button", { name: "Step back" }));
    expect(position()).toBe("5 / 6");
    fireEvent.keyDown(screen.getByLabelText("Message"), { key: "ArrowLeft" });
    expect(position()).toBe("5 / 6");
    fireEvent.keyDown(document.body, { key: " " });
    expect(screen.getByRole("button", { name: "Pause" })).toBeTruthy();
    fireEvent.keyDown(document.body, { key: " " });
    expect(screen.getByRole("button", { name: "Play" })).toBeTruthy();
  });

  it("has no selection while off and starts at the newest event when turned on", () => {
    const { result } = renderHook(() => useReplay(3));
    expect(result.current.index).toBe(-1);
    act(() => result.current.toggle());
    expect(result.current.index).toBe(2);
  });
});

describe("replay lanes", () => {
  it("marks approvals, errors and browser takeovers along the scrubber", () => {
    const list = events(5).map((e, i): ReplayEvent => ({ ...e, mark: i === 1 ? "approval" : i === 3 ? "error" : i === 4 ? "browser" : null }));
    const { container } = render(<Scrubber events={list} cursor={{ index: 0, live: false, playing: false, speed: 1 }} index={0} send={() => undefined} />);
    expect(screen.getByText("Approvals: 2")).toBeTruthy();
    expect(screen.getByText("Errors: 4")).toBeTruthy();
    expect(screen.getByText("Browser takeovers: 5")).toBeTruthy();
    const error = container.querySelector<HTMLElement>(".lane-error .lane-mark");
    expect(error?.style.left).toBe("75%");
    expect(screen.getByLabelText("Replay event").textContent).toBe("1 / 5");
  });
});
