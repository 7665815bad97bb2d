// @ts-check
// Per-hunk review: the agent changes two distant lines of a 30-line file with one command, which
// the Changes view shows as two hunks. Accepting the first collapses it; rejecting the second
// with a reason reverts only that hunk on disk, and the timeline shows what the agent is told.
// "Fork from here" on the agent's command opens a new conversation that ends there.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { eventually, shot, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { startConversation, statusIs, timelineShows } from "../lib/ui.mjs";

const ORIGINAL = Array.from({ length: 30 }, (_, i) => `line ${i + 1}\n`).join("");
const EDITED = ORIGINAL.replace("line 2\n", "line two\n").replace("line 25\n", "line twenty-five\n");

describe("per-hunk review", () => {
  const session = stackSession(
    {
      name: "review",
      script: (ws) => [
        {
          type: "reply",
          text: "Spelling out two numbers.",
          tool_calls: [
            {
              name: "terminal",
              arguments: {
                command: `sed -i -e 's/^line 2$/line two/' -e 's/^line 25$/line twenty-five/' ${join(ws, "notes.txt")}`,
                summary: "Spell out two numbers",
                security_risk: "LOW",
              },
            },
          ],
        },
        { type: "reply", tool_calls: [{ name: "finish", arguments: { message: "Two numbers are spelled out." } }] },
      ],
    },
    { started: (stack) => writeFileSync(join(stack.workspace, "notes.txt"), ORIGINAL) },
  );
  const notes = () => readFileSync(join(session.stack.workspace, "notes.txt"), "utf8");

  it("shows the agent's change to notes.txt as two hunks", async () => {
    const { stack, page } = session;
    await startConversation(page, { folder: stack.workspace, policy: "never", task: "Spell out two numbers in the notes" });
    await timelineShows(page, "Two numbers are spelled out.");
    await statusIs(page, "Finished");
    assert.equal(notes(), EDITED);
    const editor = page.locator('[data-pane="editor"]');
    await editor.getByRole("tab", { name: "Changes" }).click();
    await editor.getByRole("list", { name: "Changed files" }).getByText("notes.txt").click();
    const hunks = await visible(editor.getByRole("region", { name: "Hunks of notes.txt" }), "the hunks of notes.txt", 20_000);
    await visible(hunks.getByText("2 hunks"), "two hunks");
    await visible(hunks.getByRole("button", { name: "Show hunk 2 of notes.txt in the diff" }).getByText("+line twenty-five"), "the second hunk's preview");
    await visible(editor.locator(".monaco-diff-editor"), "the diff editor", 20_000);
  });

  it("accepts one hunk and rejects the other with a reason: only that hunk is reverted and the agent is told", async () => {
    const { page } = session;
    const hunks = page.locator('[data-pane="editor"]').getByRole("region", { name: "Hunks of notes.txt" });
    await hunks.getByRole("button", { name: "Accept hunk 1 of notes.txt" }).click();
    await visible(hunks.getByText("Hunk 1 accepted"), "the first hunk collapsed as accepted");

    await hunks.getByRole("button", { name: "Reject hunk 2 of notes.txt" }).click();
    const reason = hunks.getByRole("textbox", { name: /Why reject hunk 2 of notes\.txt/ });
    await reason.fill("25 stays a number");
    await shot(page, "review-reject-reason");
    await reason.press("Enter");
    await visible(hunks.getByText("Reverted; the agent will read why at its next step"), "the rejection's confirmation");
    await eventually("notes.txt to lose only the second hunk", () => notes() === ORIGINAL.replace("line 2\n", "line two\n"));
    // The diff reloads: one hunk left, the one accepted.
    await visible(hunks.getByText("1 hunk", { exact: true }), "one hunk left", 20_000);
    await visible(hunks.getByText("Hunk 1 accepted"), "the accepted hunk still accepted");
    await timelineShows(page, "rejected this hunk of");
    await timelineShows(page, "25 stays a number");
    await shot(page, "review-rejected", { readme: "review" });
  });

  it("forks from the agent's command into a new conversation that ends there, and opens it", async () => {
    const { page } = session;
    const command = page.locator(".timeline-row", { hasText: "sed -i" });
    await command.hover();
    await command.getByRole("button", { name: "Fork from here" }).click();
    const dialog = await visible(page.getByRole("dialog", { name: "Fork from here" }), "the fork dialog");
    await visible(dialog.getByRole("radio", { name: "Keep the files as they are now" }), "the choice of files");
    await dialog.getByLabel("Title (optional)").fill("Review fork");
    await shot(page, "fork-dialog");
    await dialog.getByRole("button", { name: "Fork", exact: true }).click();
    const conversations = page.getByRole("listbox", { name: "Conversations" });
    await visible(conversations.locator('[aria-selected="true"]', { hasText: "Review fork" }), "the fork open in the conversation list", 20_000);
    await visible(page.getByRole("status", { name: "Conversation status" }).getByText("Live"), "the fork's event stream to be live", 20_000);
    await timelineShows(page, "Spell out two numbers in the notes");
    await timelineShows(page, "sed -i");
    // The fork ends at the command: the finish and the rejected hunk's message came after.
    const text = await page.locator(".timeline-list").innerText();
    assert.doesNotMatch(text, /Two numbers are spelled out\./);
    assert.doesNotMatch(text, /rejected this hunk of/);
    // Keeping the files: the rejection stays on disk.
    assert.equal(notes(), ORIGINAL.replace("line 2\n", "line two\n"));
    await shot(page, "fork-opened");
  });

  it("raised no page errors", () => {
    assert.deepEqual(session.errors, []);
  });
});
