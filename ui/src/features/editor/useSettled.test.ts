import { act, renderHook } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { useSettled } from "./useSettled";

describe("useSettled", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it("takes the value only once it has stopped changing", () => {
    const { result, rerender } = renderHook(({ v }) => useSettled(v, 300), { initialProps: { v: 0 } });
    for (const v of [100, 200, 300]) {
      rerender({ v });
      act(() => vi.advanceTimersByTime(100));
    }
    expect(result.current).toBe(0);
    act(() => vi.advanceTimersByTime(300));
    expect(result.current).toBe(300);
  });
});
