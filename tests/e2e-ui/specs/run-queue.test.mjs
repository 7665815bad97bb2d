// @ts-check
// The run queue against `tandem serve` with one run at a time: while a first conversation's slow
// step holds the slot, a second one's run waits its turn, and the UI says "Queued, next" in its
// status and in the conversation list instead of "Running"; once the first finishes, the second
// runs and finishes too.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { shot, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { startConversation, statusIs, timelineShows } from "../lib/ui.mjs";

describe("the run queue", () => {
  const session = stackSession({
    name: "run-queue",
    env: { OH_MAX_CONCURRENT_RUNS: "1" },
    // One LLM for both: the first conversation's reply is slow, the second's comes after it.
    script: () => [
      { type: "reply", text: "First one done.", delay_ms: 8000 },
      { type: "reply", text: "Second one done." },
    ],
  });

  it("shows a run waiting for the slot as queued, then running to the end", async () => {
    const { stack, page } = session;
    await startConversation(page, { folder: stack.workspace, policy: "never", task: "Take your time" });
    await statusIs(page, "Running");
    await startConversation(page, { folder: stack.workspace, policy: "never", task: "Wait your turn" });
    await statusIs(page, "Queued, next", 10_000);
    const row = page.getByRole("option", { selected: true });
    await visible(row.locator(".status-pill", { hasText: "Queued, next" }), "the queued place in the conversation list");
    await shot(page, "run-queued");

    await timelineShows(page, "Second one done.", 30_000);
    await statusIs(page, "Finished");
    const search = /** @type {{ items: { execution_status: string }[] }} */ (await stack.api("/api/conversations/search"));
    assert.deepEqual(search.items.map((c) => c.execution_status).sort(), ["finished", "finished"]);
  });

  it("raised no page errors", () => {
    assert.deepEqual(session.errors, []);
  });
});
