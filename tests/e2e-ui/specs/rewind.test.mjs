// @ts-check
// Checkpoints in the timeline: the agent writes a file with one terminal command and changes it
// with a second; each observation says it changed 1 file. "Rewind to here" on the first previews
// the diff back to the first version, rewinding writes it (on disk and in the open editor), and
// "Undo rewind" brings the second version back. Rewinding the conversation to the first command
// leaves the files alone and shows the branch that ends there.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { eventually, shot, until, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { startConversation, statusIs, timelineShows } from "../lib/ui.mjs";

const FIRST = "rewind-first-version";
const SECOND = "rewind-second-version";

describe("rewind", () => {
  const session = stackSession({
    name: "rewind",
    script: (ws) => [
      {
        type: "reply",
        text: "Writing the notes.",
        tool_calls: [{ name: "terminal", arguments: { command: `echo ${FIRST} > ${join(ws, "notes.txt")}`, summary: "Write the notes", security_risk: "LOW" } }],
      },
      {
        type: "reply",
        text: "Changing them.",
        tool_calls: [{ name: "terminal", arguments: { command: `echo ${SECOND} > ${join(ws, "notes.txt")}`, summary: "Change the notes", security_risk: "LOW" } }],
      },
      { type: "reply", tool_calls: [{ name: "finish", arguments: { message: "The notes are written." } }] },
    ],
  });
  const notes = () => readFileSync(join(session.stack.workspace, "notes.txt"), "utf8");

  it("says on each observation which files its command changed", async () => {
    const { stack, page } = session;
    await startConversation(page, { folder: stack.workspace, policy: "never", task: "Write the notes, then change them" });
    await timelineShows(page, "The notes are written.");
    await statusIs(page, "Finished");
    assert.equal(notes(), `${SECOND}\n`);
    const first = page.locator(".timeline-row", { hasText: `echo ${FIRST}` });
    const second = page.locator(".timeline-row", { hasText: `echo ${SECOND}` });
    await visible(first.getByText("changed 1 file: 1 added"), "the first command's attribution", 20_000);
    await visible(second.getByText("changed 1 file: 1 modified"), "the second command's attribution", 20_000);
    await second.getByText("changed 1 file: 1 modified").click();
    await visible(second.getByRole("list", { name: "Files this action changed" }).getByText("notes.txt"), "the changed path");
    await shot(page, "rewind-attribution");
  });

  it("previews a rewind to the first command, rewinds, and undoes it", async () => {
    const { page } = session;
    // The file open in the editor follows the rewind without being reopened.
    const editor = page.locator('[data-pane="editor"]');
    await editor.getByRole("treeitem", { name: "notes.txt" }).click();
    const monaco = editor.locator(".monaco-editor").first();
    await visible(monaco.getByText(SECOND), "notes.txt in the editor", 20_000);

    const first = page.locator(".timeline-row", { hasText: `echo ${FIRST}` });
    await first.hover();
    await first.getByRole("button", { name: "Rewind to here" }).click();
    const dialog = await visible(page.getByRole("dialog", { name: "Rewind to here" }), "the rewind preview");
    const restored = await visible(dialog.getByRole("region", { name: "Files to restore" }), "the files the rewind would restore", 20_000);
    assert.match(await restored.innerText(), /restore\s+notes\.txt/);
    const diff = dialog.getByLabel("Changes to notes.txt");
    await visible(diff.locator(".diff-line.del", { hasText: SECOND }), "the second version removed in the preview");
    await visible(diff.locator(".diff-line.add", { hasText: FIRST }), "the first version added in the preview");
    // A preview writes nothing.
    assert.equal(notes(), `${SECOND}\n`);
    await shot(page, "rewind-preview");

    await dialog.getByRole("button", { name: "Rewind", exact: true }).click();
    const notice = await visible(page.getByRole("status", { name: "Rewind" }), "the rewind notice");
    await visible(notice.getByText("Rewound 1 file"), "how many files were rewound");
    await eventually("notes.txt back to its first version", () => notes() === `${FIRST}\n`);
    await until(
      page,
      "the editor to show the first version",
      (text) => (document.querySelector('[data-pane="editor"] .monaco-editor .view-lines')?.textContent ?? "").includes(text),
      FIRST,
      20_000,
    );

    await notice.getByRole("button", { name: "Undo rewind" }).click();
    await visible(notice.getByText("Rewind undone: 1 file restored"), "the undo's result");
    await eventually("notes.txt back to its second version", () => notes() === `${SECOND}\n`);
    await until(
      page,
      "the editor to show the second version again",
      (text) => (document.querySelector('[data-pane="editor"] .monaco-editor .view-lines')?.textContent ?? "").includes(text),
      SECOND,
      20_000,
    );
    await shot(page, "rewind-undone");
  });

  it("rewinds the conversation to the first command: the later events stay on another branch", async () => {
    const { page } = session;
    const first = page.locator(".timeline-row", { hasText: `echo ${FIRST}` });
    await first.hover();
    await first.getByRole("button", { name: "Rewind to here" }).click();
    const dialog = await visible(page.getByRole("dialog", { name: "Rewind to here" }), "the rewind dialog");
    await dialog.getByRole("radio", { name: /Conversation/ }).check();
    await visible(dialog.getByRole("note", { name: "What happens to the conversation" }), "what a rewind of the conversation does");
    await dialog.getByRole("button", { name: "Rewind", exact: true }).click();
    const notice = await visible(page.getByRole("status", { name: "Rewind" }), "the rewind notice");
    await visible(notice.getByText("Rewound the conversation to the chosen event"), "the conversation rewound");
    await visible(page.getByRole("note").getByText(/Showing the active branch/), "the note that other branches are not shown");
    await timelineShows(page, "The conversation went back to an earlier event");
    await until(
      page,
      "the second command and the finish to leave the timeline",
      (text) => !(document.querySelector(".timeline-list")?.textContent ?? "").includes(text),
      `echo ${SECOND}`,
      20_000,
    );
    assert.equal(await page.locator(".timeline-row", { hasText: "The notes are written." }).count(), 0);
    // The files are not touched by a rewind of the conversation.
    assert.equal(notes(), `${SECOND}\n`);
    await shot(page, "rewind-chat");
  });

  it("raised no page errors", () => {
    assert.deepEqual(session.errors, []);
  });
});
