// @ts-check
// Under "ask before acting: always" the person edits the pending terminal command in the
// approval panel and approves it: exactly the edited command runs (its output shows in the
// timeline, with the note saying it was edited), the agent's original command never runs (the
// file it would create never exists), and the result is recorded against the original action.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { shot, timelineText, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { startConversation, statusIs, timelineShows } from "../lib/ui.mjs";

describe("edit and approve", () => {
  const session = stackSession({
    name: "edit-approve",
    script: (ws) => [
      {
        type: "reply",
        text: "I will create the original marker.",
        tool_calls: [
          {
            name: "terminal",
            arguments: { command: `touch ${join(ws, "original-marker.txt")} && echo original-ran`, summary: "Create the marker", security_risk: "LOW" },
          },
        ],
      },
      { type: "reply", text: "Noted: the edited command ran instead." },
    ],
  });

  it("runs the edited command once, in place of the original", async () => {
    const { stack, page } = session;
    const original = join(stack.workspace, "original-marker.txt");
    const edited = join(stack.workspace, "edited-marker.txt");
    await startConversation(page, { folder: stack.workspace, policy: "always", task: "Create the marker file" });
    const panel = await visible(page.getByRole("region", { name: "Pending approval" }), "the approval panel", 30_000);
    await statusIs(page, "Waiting for approval");
    await panel.getByRole("button", { name: "Edit and approve…" }).click();
    const box = panel.getByLabel("Edited action");
    assert.match(await box.inputValue(), /original-marker\.txt/, "the edit starts from the agent's command");
    await box.fill(`echo "edited-$((6*7))" | tee ${edited}`);
    await panel.getByRole("button", { name: /Approve edited/ }).click();

    await timelineShows(page, "edited-42");
    await timelineShows(page, "The person edited this action before it ran");
    await timelineShows(page, "Noted: the edited command ran instead.");
    await statusIs(page, "Finished");
    assert.equal(await page.getByRole("region", { name: "Pending approval" }).count(), 0, "no approval is pending any more");
    assert.equal(readFileSync(edited, "utf8").trim(), "edited-42", "the edited command ran");
    assert.equal(existsSync(original), false, `${original} exists: the agent's original command ran`);
    // The original command shows as what the agent asked for, but its output never appears.
    assert.doesNotMatch(await timelineText(page), /^original-ran$/m);

    // The result answers the original action: same action id and tool call, with the note.
    const convs = /** @type {{items: {id: string}[]}} */ (await stack.api("/api/conversations/search?limit=10"));
    const id = convs.items[0]?.id ?? "";
    const page1 = /** @type {{items: any[]}} */ (await stack.api(`/api/conversations/${id}/events/search?limit=100`));
    const action = page1.items.find((e) => e.kind === "ActionEvent" && e.tool_name === "terminal");
    const observations = page1.items.filter((e) => e.kind === "ObservationEvent" && e.tool_name === "terminal");
    assert.equal(observations.length, 1, "one result, for the one action");
    assert.equal(observations[0].action_id, action.id);
    assert.equal(observations[0].tool_call_id, action.tool_call_id);
    assert.match(observations[0].observation.content[0].text, /^\[The person edited this action before it ran; it ran as: \$ echo "edited-/);
    await shot(page, "edit-approved");
  });

  it("raised no page errors", () => {
    assert.deepEqual(session.errors, []);
  });
});
