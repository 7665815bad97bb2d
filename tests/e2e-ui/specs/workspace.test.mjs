// @ts-check
// One conversation through the whole workspace: start it in a folder, send a message, watch the
// agent's events fill the timeline until it finishes; then the editor (the agent's edit in
// Changes, a person's edit saved to disk) and the terminal (a typed command's output).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { eventually, shot, timelineText, until, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { startConversation, statusIs, terminalText, timelineShows } from "../lib/ui.mjs";

describe("a conversation in the workspace", () => {
  const session = stackSession({
    name: "workspace",
    files: {
      "app.py": "greeting = 'hello'\nprint(greeting)\n",
      "NOTES.md": "# Notes\n\nWritten before the conversation.\n",
    },
    script: (ws) => [
      {
        type: "reply",
        text: "Let me check the shell first.",
        // The output (e2e-42) differs from the command text, so seeing it proves the command ran.
        tool_calls: [{ name: "terminal", arguments: { command: "echo \"e2e-$((6*7))\"", summary: "Print a marker", security_risk: "LOW" } }],
      },
      {
        type: "reply",
        text: "Now the greeting.",
        tool_calls: [
          {
            name: "file_editor",
            arguments: { command: "str_replace", path: join(ws, "app.py"), old_str: "greeting = 'hello'", new_str: "greeting = 'hello, tandem'", summary: "Change the greeting", security_risk: "LOW" },
          },
        ],
      },
      { type: "reply", tool_calls: [{ name: "finish", arguments: { message: "Done: the greeting now says hello, tandem." } }] },
    ],
  });

  it("runs the agent from a message and shows its events until it finishes", async () => {
    const { stack, page } = session;
    await startConversation(page, { folder: stack.workspace, policy: "never" });
    await visible(page.getByText("No events yet.").or(page.locator(".timeline-list .item")), "the empty timeline");
    const composer = page.getByLabel("Message to the agent");
    await composer.fill("Make the greeting friendlier");
    await composer.press("Enter");

    await timelineShows(page, "Make the greeting friendlier");
    await timelineShows(page, "e2e-42");
    await timelineShows(page, "Done: the greeting now says hello, tandem.");
    await statusIs(page, "Finished");
    const text = await timelineText(page);
    assert.match(text, /terminal/, "the terminal action is in the timeline");
    assert.match(text, /file_editor/, "the file edit is in the timeline");
    // The agent really edited the file.
    assert.equal(readFileSync(join(stack.workspace, "app.py"), "utf8"), "greeting = 'hello, tandem'\nprint(greeting)\n");
    await shot(page, "timeline-finished");
  });

  it("shows the agent's edit under Changes and saves a person's edit to disk", async () => {
    const { stack, page } = session;
    const editor = page.locator('[data-pane="editor"]');
    await editor.getByRole("tab", { name: "Changes" }).click();
    await visible(editor.getByLabel("Changed files").getByText("app.py"), "app.py among the changed files");
    // Monaco's diff editor shows both sides of the agent's edit.
    await visible(editor.locator(".monaco-diff-editor"), "the diff editor", 20_000);
    await until(
      page,
      "both sides of the edit in the diff editor",
      () => {
        // Monaco renders spaces as no-break spaces.
        const t = (document.querySelector('[data-pane="editor"] .monaco-diff-editor')?.textContent ?? "").replace(/\u00a0/g, " ");
        return t.includes("greeting = 'hello'") && t.includes("greeting = 'hello, tandem'");
      },
      "",
      20_000,
    );
    await shot(page, "editor-changes", { readme: "editor-diff" });

    await editor.getByRole("tab", { name: "Files" }).click();
    await editor.getByRole("treeitem", { name: "NOTES.md" }).click();
    const monaco = editor.locator(".monaco-editor").first();
    await visible(monaco.getByText("Written before the conversation."), "NOTES.md in Monaco", 20_000);
    await monaco.locator(".view-lines").click();
    await page.keyboard.press("Control+End");
    // insertText, like a paste: typed key by key, Monaco's word suggestions may take the Enter.
    await page.keyboard.insertText("Added from the editor.\n");
    await visible(editor.getByText("modified"), "the modified badge");
    await page.keyboard.press("Control+S");
    const file = join(stack.workspace, "NOTES.md");
    await eventually("NOTES.md saved with the new line", () => readFileSync(file, "utf8").includes("Added from the editor."));
    assert.equal(readFileSync(file, "utf8"), "# Notes\n\nWritten before the conversation.\nAdded from the editor.\n");
    await until(page, "the modified badge to go", () => !document.querySelector('[data-pane="editor"] .toolbar .badge'), "");
    await shot(page, "editor-saved");
  });

  it("runs a typed command in the terminal pane and shows its output", async () => {
    const { stack, page } = session;
    const terminal = page.locator('[data-pane="terminal"]');
    await terminal.getByRole("radio", { name: "My shell" }).click();
    await visible(terminal.getByText("attached"), "the terminal to attach", 20_000);
    await terminal.locator(".xterm-host").click();
    await page.keyboard.type("echo term-$((3*5)) && pwd\n");
    await until(
      page,
      "the command's output in the terminal",
      (ws) => {
        const t = document.querySelector('[data-pane="terminal"] .xterm-rows')?.textContent ?? "";
        return t.includes("term-15") && t.includes(ws);
      },
      stack.workspace,
      20_000,
    );
    assert.match(await terminalText(page), /term-15/);
    await shot(page, "terminal", { readme: "terminal" });
  });

  it("raised no page errors", () => {
    assert.deepEqual(session.errors, []);
  });
});
