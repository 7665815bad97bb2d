import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { createApi, type FetchLike } from "../../api/client";
import type { RejectHunkRequest, RejectHunkResponse } from "../../api/tandemTypes";
import { HunkReview } from "./HunkReview";

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

const FIRST = "@@ -1,3 +1,3 @@\n line 1\n-line 2\n+line two\n line 3\n";
const SECOND = "@@ -24,3 +24,3 @@\n line 24\n-line 25\n+line twenty-five\n line 26\n";
const DIFF = `--- a/notes.txt\n+++ b/notes.txt\n${FIRST}${SECOND}`;

function isRejectRequest(v: unknown): v is RejectHunkRequest {
  return typeof v === "object" && v !== null && "path" in v && "hunk" in v;
}

/** A server's reject-hunk route: answers with `answer(request)`, remembers every request body. */
function reviewServer(answer: (req: RejectHunkRequest) => Response) {
  const bodies: RejectHunkRequest[] = [];
  const fetch: FetchLike = async (req) => {
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/api/conversations/c1/workspace/reject-hunk") return json({ detail: "Not Found" }, 404);
    const body: unknown = await req.json();
    if (!isRejectRequest(body)) return json({ detail: "bad body" }, 400);
    bodies.push(body);
    return answer(body);
  };
  return { api: createApi({ baseUrl: "http://h", key: null }, fetch), bodies };
}

const reverted = (o: Partial<RejectHunkResponse> = {}): RejectHunkResponse => ({ path: "notes.txt", exists: true, agent_told: true, ...o });

function renderReview(server: ReturnType<typeof reviewServer>, extra: { onFilesChanged?: () => void; onReveal?: () => void; diff?: string } = {}) {
  return render(
    <HunkReview
      api={server.api}
      conversationId="c1"
      path="notes.txt"
      diff={extra.diff ?? DIFF}
      onFilesChanged={extra.onFilesChanged ?? (() => undefined)}
      onReveal={extra.onReveal}
    />,
  );
}

describe("hunk review", () => {
  it("lists each hunk with its counts and first changed lines", () => {
    renderReview(reviewServer(() => json(reverted())));
    const region = screen.getByRole("region", { name: "Hunks of notes.txt" });
    expect(region.textContent).toContain("2 hunks");
    const show = screen.getByRole("button", { name: "Show hunk 2 of notes.txt in the diff" });
    expect(show.textContent).toContain("@@ -24,3 +24,3 @@");
    expect(show.textContent).toContain("+1");
    expect(show.textContent).toContain("−1");
    expect(show.textContent).toContain("+line twenty-five");
    expect(screen.getByRole("button", { name: "Accept hunk 1 of notes.txt" })).toBeTruthy();
    expect(screen.getByRole("button", { name: "Reject hunk 2 of notes.txt" })).toBeTruthy();
  });

  it("rejects a hunk with the reason typed, Enter submitting, and says the agent will read why", async () => {
    const server = reviewServer(() => json(reverted()));
    const onFilesChanged = vi.fn();
    renderReview(server, { onFilesChanged });
    fireEvent.click(screen.getByRole("button", { name: "Reject hunk 2 of notes.txt" }));
    const input = screen.getByRole("textbox", { name: /Why reject hunk 2 of notes.txt/ });
    expect(document.activeElement).toBe(input);
    fireEvent.change(input, { target: { value: " 25 stays a number " } });
    fireEvent.submit(input.closest("form")!);
    expect((await screen.findByRole("status")).textContent).toBe("Reverted; the agent will read why at its next step");
    expect(server.bodies).toEqual([{ path: "notes.txt", hunk: SECOND, reason: "25 stays a number" }]);
    expect(onFilesChanged).toHaveBeenCalledTimes(1);
    expect(screen.queryByRole("textbox")).toBeNull();
  });

  it("sends no reason when none is typed, and says when an added file is removed", async () => {
    const server = reviewServer(() => json(reverted({ exists: false })));
    renderReview(server);
    fireEvent.click(screen.getByRole("button", { name: "Reject hunk 1 of notes.txt" }));
    fireEvent.click(screen.getByRole("button", { name: "Revert hunk 1 of notes.txt" }));
    expect((await screen.findByRole("status")).textContent).toBe("Reverted; notes.txt is removed; the agent will read why at its next step");
    expect(server.bodies).toEqual([{ path: "notes.txt", hunk: FIRST }]);
  });

  it("cancels the rejection on Escape without asking the server", () => {
    const server = reviewServer(() => json(reverted()));
    renderReview(server);
    fireEvent.click(screen.getByRole("button", { name: "Reject hunk 1 of notes.txt" }));
    fireEvent.keyDown(screen.getByRole("textbox"), { key: "Escape" });
    expect(screen.queryByRole("textbox")).toBeNull();
    expect(server.bodies).toEqual([]);
  });

  it("reloads the changes when the hunk is no longer in the diff (409)", async () => {
    const server = reviewServer(() => json({ detail: "that hunk is no longer in the diff of notes.txt" }, 409));
    const onFilesChanged = vi.fn();
    renderReview(server, { onFilesChanged });
    fireEvent.click(screen.getByRole("button", { name: "Reject hunk 1 of notes.txt" }));
    fireEvent.submit(screen.getByRole("textbox").closest("form")!);
    expect((await screen.findByRole("alert")).textContent).toBe("This hunk is no longer in the diff (the file changed): the changes are reloaded.");
    expect(onFilesChanged).toHaveBeenCalledTimes(1);
  });

  it("shows the server's words for a refused field (422) and keeps the reason to fix", async () => {
    const server = reviewServer(() => json({ detail: [{ loc: ["body", "reason"], msg: "at most 4000 characters", type: "value_error" }] }, 422));
    const onFilesChanged = vi.fn();
    renderReview(server, { onFilesChanged });
    fireEvent.click(screen.getByRole("button", { name: "Reject hunk 1 of notes.txt" }));
    fireEvent.change(screen.getByRole("textbox"), { target: { value: "too long" } });
    fireEvent.submit(screen.getByRole("textbox").closest("form")!);
    expect((await screen.findByRole("alert")).textContent).toBe("Cannot reject the hunk: body.reason: at most 4000 characters");
    expect(screen.getByRole("textbox")).toHaveProperty("value", "too long");
    expect(onFilesChanged).not.toHaveBeenCalled();
  });

  it("accepts a hunk, collapsed with an Undo, remembered across a reload but not once the hunk changes", () => {
    const server = reviewServer(() => json(reverted()));
    const { unmount } = renderReview(server);
    fireEvent.click(screen.getByRole("button", { name: "Accept hunk 1 of notes.txt" }));
    expect(screen.queryByRole("button", { name: "Reject hunk 1 of notes.txt" })).toBeNull();
    expect(screen.getByRole("region").textContent).toContain("Hunk 1 accepted");
    expect(screen.getByText("2 hunks")).toBeTruthy();
    expect(screen.getByText("1 accepted")).toBeTruthy();
    unmount();

    const again = renderReview(server);
    expect(screen.getByRole("button", { name: "Undo accepting hunk 1 of notes.txt" })).toBeTruthy();
    again.unmount();

    // The agent changed the first hunk since: it is to be reviewed again.
    renderReview(server, { diff: DIFF.replace("+line two", "+line 2!") });
    expect(screen.getByRole("button", { name: "Accept hunk 1 of notes.txt" })).toBeTruthy();
  });

  it("undoes an acceptance", async () => {
    renderReview(reviewServer(() => json(reverted())));
    fireEvent.click(screen.getByRole("button", { name: "Accept hunk 2 of notes.txt" }));
    fireEvent.click(screen.getByRole("button", { name: "Undo accepting hunk 2 of notes.txt" }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Reject hunk 2 of notes.txt" })).toBeTruthy());
    expect(localStorage.getItem("tandem:accepted-hunks:c1")).toBeNull();
  });

  it("shows a hunk in the diff when its summary is pressed", () => {
    const onReveal = vi.fn();
    renderReview(reviewServer(() => json(reverted())), { onReveal });
    fireEvent.click(screen.getByRole("button", { name: "Show hunk 2 of notes.txt in the diff" }));
    expect(onReveal).toHaveBeenCalledWith(expect.objectContaining({ newStart: 24, text: SECOND }));
  });
});
