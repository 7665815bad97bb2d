// @ts-check
// Bad input and failures a person meets: a 50 MB file and a binary file in the editor (refused
// or shown read-only, with the reason), and the server dying in the middle of a run (the UI
// says the connection is lost, reconnects when the server is back, and the run resumes from the
// recovered conversation).
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { shot, timelineText, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { startConversation, statusIs, timelineShows } from "../lib/ui.mjs";

describe("bad input and failures", () => {
  const session = stackSession(
    {
      name: "resilience",
      files: { "README.md": "# A small project\n" },
      script: () => [
        { type: "reply", text: "First a marker.", tool_calls: [{ name: "terminal", arguments: { command: "echo \"before-$((40+2))\"", security_risk: "LOW" } }] },
        // The server is killed while this answer is on its way: it never arrives.
        { type: "reply", delay_ms: 6000, tool_calls: [{ name: "terminal", arguments: { command: "echo lost-in-the-crash", security_risk: "LOW" } }] },
        { type: "reply", text: "Carrying on after the restart.", tool_calls: [{ name: "terminal", arguments: { command: "echo \"after-$((50+1))\"", security_risk: "LOW" } }] },
        { type: "reply", tool_calls: [{ name: "finish", arguments: { message: "Done, restart and all." } }] },
      ],
    },
    {
      started: (stack) => {
        // 50 MB of text (over the server's 10 MB editor limit) and a small binary file.
        writeFileSync(join(stack.workspace, "huge.log"), Buffer.alloc(50 * 1024 * 1024, "log line\n"));
        writeFileSync(join(stack.workspace, "blob.bin"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 0, 1, 2, 0xff, 0xfe, 0, 0, 9]));
      },
    },
  );

  it("refuses a 50 MB file and shows a binary file read-only, each with the reason", async () => {
    const { stack, page } = session;
    await startConversation(page, { folder: stack.workspace, policy: "never" });
    const editor = page.locator('[data-pane="editor"]');
    await editor.getByRole("treeitem", { name: "huge.log" }).click();
    await visible(editor.getByText(/huge\.log cannot be opened in the editor: .*52428800 bytes; the editor opens files up to 10485760 bytes/), "the reason the 50 MB file is refused");
    assert.equal(await editor.locator(".monaco-editor").count(), 0, "no editor holds the refused file");

    await editor.getByRole("treeitem", { name: "blob.bin" }).click();
    await visible(editor.getByText("Binary file: shown read-only."), "the read-only reason of the binary file");
    await visible(editor.getByText("Binary file (13 bytes): not shown."), "the binary file's placeholder");
    assert.equal(await editor.getByRole("button", { name: "Save (Ctrl+S)" }).isDisabled(), true, "a binary file cannot be saved");

    // The editor still works for a normal file afterwards.
    await editor.getByRole("treeitem", { name: "README.md" }).click();
    await visible(editor.locator(".monaco-editor").getByText("A small project"), "README.md in Monaco", 20_000);
  });

  it("says the connection is lost when the server dies mid-run, and recovers when it returns", async () => {
    const { stack, page } = session;
    const status = page.getByRole("status", { name: "Conversation status" });
    const chat = page.locator('[data-pane="chat"]');
    await chat.getByLabel("Message to the agent").fill("Print two markers");
    await chat.getByRole("button", { name: "Send" }).click();
    await timelineShows(page, "before-42");
    // The second LLM answer is delayed: the run is in the middle of an LLM call now.
    await statusIs(page, "Running");
    const port = stack.port;
    await stack.killServer();
    await visible(status.getByText(/Connection lost|Reconnecting/), "the UI to say the connection is lost", 15_000);
    await shot(page, "server-lost");

    await stack.startServer(port);
    await visible(status.getByText("Live"), "the event stream to be live again after the restart", 30_000);
    // The conversation was running when the server died: it comes back recovered, in error,
    // with everything before the crash intact.
    await statusIs(page, "Error");
    await timelineShows(page, "before-42");
    assert.doesNotMatch(await timelineText(page), /lost-in-the-crash\n/);

    await chat.getByRole("button", { name: "Resume" }).click();
    await timelineShows(page, "after-51");
    await statusIs(page, "Finished");
    await shot(page, "server-recovered");
  });

  it("raised no page errors", () => {
    // A refused file and a lost connection are answers the page handles, not errors.
    assert.deepEqual(session.errors, []);
  });
});
