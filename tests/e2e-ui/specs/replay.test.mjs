// @ts-check
// Replay: the agent runs two terminal commands that print different words and finishes. With
// Replay on, choosing the first command's row shows the terminal as it was then (the first word,
// not the second yet) and the file it wrote as a diff; stepping forward by keyboard reaches the second command's answer and its
// word; Live goes back to the newest event. A replay link (`#conversation=ID&replay=1`, as
// `tandem replay open` prints) opens that conversation with replay on.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { shot, until, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { startConversation, statusIs, timelineShows } from "../lib/ui.mjs";

const ONE = "replay-one";
const TWO = "replay-two";
const DONE = "Both words are printed.";

describe("replay", () => {
  const session = stackSession({
    name: "replay",
    script: () => [
      { type: "reply", text: "The first word.", tool_calls: [{ name: "terminal", arguments: { command: `echo ${ONE} | tee one.txt`, summary: "Print the first word", security_risk: "LOW" } }] },
      { type: "reply", text: "The second word.", tool_calls: [{ name: "terminal", arguments: { command: `echo ${TWO}`, summary: "Print the second word", security_risk: "LOW" } }] },
      { type: "reply", tool_calls: [{ name: "finish", arguments: { message: DONE } }] },
    ],
  });

  it("shows the terminal as of each command and goes back to live", async () => {
    const { stack, page } = session;
    await startConversation(page, { folder: stack.workspace, policy: "never", task: "Print two words" });
    await timelineShows(page, DONE);
    await statusIs(page, "Finished");

    const toggle = page.getByRole("button", { name: "Replay", exact: true });
    await toggle.click();
    assert.equal(await toggle.getAttribute("aria-pressed"), "true");
    const bar = await visible(page.getByRole("group", { name: "Replay" }), "the replay scrubber");
    const position = bar.getByLabel("Replay event");
    const live = bar.getByRole("button", { name: "Live" });
    // It starts at the newest event.
    assert.equal(await live.getAttribute("aria-pressed"), "true");

    // The first command's row: its answer, before the second command ran.
    await page.locator(".timeline-row", { hasText: `echo ${ONE}` }).click();
    const terminal = page.getByLabel("Terminal as of this event");
    await visible(terminal, "the replayed terminal", 20_000);
    await until(
      page,
      "the replayed terminal to show the first word only",
      (words) => {
        const [one, two] = JSON.parse(words);
        const text = document.querySelector('[aria-label="Terminal as of this event"]')?.textContent ?? "";
        return text.includes(one) && !text.includes(two) && document.querySelector('.replay-panel[aria-busy="false"]') !== null;
      },
      JSON.stringify([ONE, TWO]),
      20_000,
    );
    assert.equal(await live.getAttribute("aria-pressed"), "false");
    assert.equal(await page.locator('.timeline-row[aria-current="step"]', { hasText: `echo ${ONE}` }).count(), 1);
    // The files: what the command changed, read-only, against the checkpoint before.
    const diff = page.getByRole("region", { name: "Changes since the checkpoint before" });
    await visible(diff, "the checkpoint's diff", 20_000);
    assert.match(await diff.innerText(), /one\.txt[\s\S]*replay-one/);

    // Step forward by keyboard to the second command's answer.
    const summary = bar.locator(".replay-summary");
    for (let i = 0; i < 12; i++) {
      const text = await summary.innerText();
      if (text.startsWith("ObservationEvent") && text.includes(TWO)) break;
      await page.keyboard.press("ArrowRight");
    }
    assert.match(await summary.innerText(), new RegExp(`^ObservationEvent\\s+${TWO}`));
    await until(
      page,
      "the replayed terminal to show the second word",
      (two) => (document.querySelector('[aria-label="Terminal as of this event"]')?.textContent ?? "").includes(two),
      TWO,
      20_000,
    );
    assert.equal(await page.locator('.timeline-row[aria-current="step"]', { hasText: `echo ${TWO}` }).count(), 1);

    // Live: the newest event, whose row is the last.
    await live.click();
    assert.equal(await live.getAttribute("aria-pressed"), "true");
    const [at, of] = (await position.innerText()).split(" / ");
    assert.equal(at, of);
    await visible(page.locator('.timeline-row[aria-current="step"]', { hasText: DONE }), "the newest row selected");
    await shot(page, "replay");
  });

  it("opens a replay link (what `tandem replay open` prints) on that conversation with replay on", async () => {
    const { stack, page } = session;
    const found = /** @type {{items: {id: string}[]}} */ (await stack.api("/api/conversations/search"));
    const id = found.items[0]?.id;
    assert.ok(id, "the conversation");
    await page.goto("about:blank");
    await page.goto(`${stack.uiUrl}&conversation=${id}&replay=1`);
    await timelineShows(page, DONE);
    const toggle = page.getByRole("button", { name: "Replay", exact: true });
    await visible(toggle, "the replay toggle");
    assert.equal(await toggle.getAttribute("aria-pressed"), "true");
    await visible(page.getByLabel("Terminal as of this event"), "the replayed terminal", 20_000);
  });

  it("raised no page errors", () => {
    assert.deepEqual(session.errors, []);
  });
});
