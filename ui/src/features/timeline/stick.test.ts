import { describe, expect, it } from "vitest";
import { follow, stickReducer } from "./stick";

describe("stickReducer", () => {
  it("stays stuck while a burst of rows briefly leaves Virtuoso off the bottom", () => {
    let stuck = true;
    stuck = stickReducer(stuck, { type: "at-bottom", atBottom: false });
    expect(stuck).toBe(true);
    expect(follow(stuck, false)).toBe("auto");
  });

  it("unsticks when the person scrolls away, and sticks again at the bottom", () => {
    let stuck = stickReducer(true, { type: "person-scrolled" });
    expect(follow(stuck, false)).toBe(false);
    stuck = stickReducer(stuck, { type: "at-bottom", atBottom: false });
    expect(stuck).toBe(false);
    stuck = stickReducer(stuck, { type: "at-bottom", atBottom: true });
    expect(stuck).toBe(true);
  });

  it("follows at the bottom even when unstuck, and sticks after jumping to the latest", () => {
    expect(follow(false, true)).toBe("auto");
    expect(stickReducer(false, { type: "jump-to-latest" })).toBe(true);
  });
});
