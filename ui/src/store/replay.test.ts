import { describe, expect, it } from "vitest";
import { cursorIndex, initialCursor, replayStep, tickMs, type ReplayCursor, type ReplayInput } from "./replay";

/** Applies inputs in order to a conversation of `count` events. */
const run = (count: number, inputs: ReplayInput[], from: ReplayCursor = initialCursor) => inputs.reduce((c, i) => replayStep(c, i, count), from);

describe("replay cursor", () => {
  it("starts live, at the newest event, and follows new ones", () => {
    expect(cursorIndex(initialCursor, 5)).toBe(4);
    expect(cursorIndex(initialCursor, 9)).toBe(8);
    expect(cursorIndex(initialCursor, 0)).toBe(-1);
  });

  it("steps back from live and stays put as events arrive", () => {
    const c = run(5, [{ type: "step", by: -1 }]);
    expect(c.live).toBe(false);
    expect(cursorIndex(c, 5)).toBe(3);
    expect(cursorIndex(c, 50)).toBe(3);
  });

  it("steps within the events, never past either end", () => {
    expect(cursorIndex(run(3, [{ type: "seek", index: 0 }, { type: "step", by: -1 }]), 3)).toBe(0);
    expect(cursorIndex(run(3, [{ type: "seek", index: 1 }, { type: "step", by: 1 }, { type: "step", by: 1 }]), 3)).toBe(2);
    expect(cursorIndex(run(3, [{ type: "seek", index: 99 }]), 3)).toBe(2);
    expect(cursorIndex(run(3, [{ type: "seek", index: -4 }]), 3)).toBe(0);
  });

  it("plays one event per tick and stops at the end without turning live", () => {
    let c = run(3, [{ type: "seek", index: 0 }, { type: "play" }]);
    expect(c.playing).toBe(true);
    c = replayStep(c, { type: "tick" }, 3);
    expect(cursorIndex(c, 3)).toBe(1);
    expect(c.playing).toBe(true);
    c = replayStep(c, { type: "tick" }, 3);
    expect(cursorIndex(c, 3)).toBe(2);
    expect(c.playing).toBe(false);
    expect(c.live).toBe(false);
    // A late tick changes nothing.
    expect(replayStep(c, { type: "tick" }, 3)).toBe(c);
  });

  it("plays from the start when at the end or live", () => {
    const c = run(4, [{ type: "play" }]);
    expect(c.playing).toBe(true);
    expect(cursorIndex(c, 4)).toBe(0);
  });

  it("pauses on toggle, on a step and on Live", () => {
    const playing = run(4, [{ type: "seek", index: 1 }, { type: "play" }]);
    expect(run(4, [{ type: "toggle-play" }], playing).playing).toBe(false);
    expect(run(4, [{ type: "step", by: 1 }], playing)).toMatchObject({ playing: false, index: 2 });
    const live = run(4, [{ type: "live" }], playing);
    expect(live).toMatchObject({ playing: false, live: true });
    expect(cursorIndex(live, 4)).toBe(3);
  });

  it("keeps its place when a seek moves it while playing", () => {
    const c = run(10, [{ type: "seek", index: 1 }, { type: "play" }, { type: "seek", index: 6 }, { type: "tick" }]);
    expect(cursorIndex(c, 10)).toBe(7);
    expect(c.playing).toBe(true);
  });

  it("plays faster at a higher speed", () => {
    expect(run(4, [{ type: "speed", speed: 4 }]).speed).toBe(4);
    expect(tickMs(1)).toBe(500);
    expect(tickMs(8)).toBe(62.5);
  });

  it("does nothing to play with no events or one", () => {
    expect(run(0, [{ type: "play" }]).playing).toBe(false);
    expect(run(1, [{ type: "play" }]).playing).toBe(false);
    expect(run(0, [{ type: "seek", index: 3 }])).toBe(initialCursor);
  });
});
