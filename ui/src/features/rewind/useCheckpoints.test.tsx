import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { describe, expect, it } from "vitest";
import { createApi, type FetchLike } from "../../api/client";
import type { Checkpoint } from "../../api/tandemTypes";
import { useCheckpoints } from "./useCheckpoints";

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

const agent = (n: number): Checkpoint => ({
  id: `c${n}`,
  event_id: `obs${n}`,
  tree: "t",
  author: "agent",
  modified: ["a.txt"],
  timestamp: "2026-11-28T05:00:00Z",
});

/** Lets time pass (the debounce) with React's updates applied. */
const wait = (ms: number) => act(() => new Promise<void>((r) => setTimeout(r, ms)));

function wrapper({ children }: { children: ReactNode }) {
  return <QueryClientProvider client={new QueryClient()}>{children}</QueryClientProvider>;
}

describe("the checkpoint list", () => {
  it("is fetched on open and again when observations arrive, never twice at once", async () => {
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const release: (() => void)[] = [];
    const fetch: FetchLike = async () => {
      calls++;
      inFlight++;
      most = Math.max(most, inFlight);
      const n = calls;
      await new Promise<void>((r) => release.push(r));
      inFlight--;
      return json({ workspace: "/w", checkpoints: Array.from({ length: n }, (_, i) => agent(i + 1)) });
    };
    const api = createApi({ baseUrl: "http://h", key: null }, fetch);
    const { result, rerender } = renderHook(({ obs }) => useCheckpoints(api, "c1", obs), { wrapper, initialProps: { obs: 0 } });
    await waitFor(() => expect(calls).toBe(1));
    // Observations arrive while the first request is out: no second request yet.
    rerender({ obs: 1 });
    rerender({ obs: 2 });
    await wait(500);
    expect(calls).toBe(1);
    act(() => release.shift()?.());
    // Answered: the change that arrived meanwhile is fetched once.
    await waitFor(() => expect(calls).toBe(2));
    act(() => release.shift()?.());
    await waitFor(() => expect(result.current.byObservation.has("obs2")).toBe(true));
    expect(result.current.canRewind).toBe(true);
    expect(most).toBe(1);
    await wait(500);
    expect(calls).toBe(2);
  });

  it("on a host without the route: no attribution, no rewind, no more requests", async () => {
    let calls = 0;
    const fetch: FetchLike = async () => {
      calls++;
      return json({ detail: "Not Found" }, 404);
    };
    const api = createApi({ baseUrl: "http://h", key: null }, fetch);
    const { result, rerender } = renderHook(({ obs }) => useCheckpoints(api, "c1", obs), { wrapper, initialProps: { obs: 0 } });
    await waitFor(() => expect(calls).toBe(1));
    rerender({ obs: 3 });
    await wait(600);
    expect(calls).toBe(1);
    expect(result.current.canRewind).toBe(false);
    expect(result.current.byObservation.size).toBe(0);
  });
});
