// @ts-check
// What a newcomer sees first: `tandem serve --llm demo`, a new conversation in a folder of their
// choosing (a fresh temporary one, not the server's default workspace), and the demo model's
// tour — plan, terminal, file editor, finish — running in that folder to the end with no error.
// The New conversation form starts in the server's home folder, and the agent's shell shows
// each command once.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { shot, timelineText, until, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { statusIs, terminalText, timelineShows } from "../lib/ui.mjs";

describe("the demo in a workspace of one's own", () => {
  /** @type {string} */ let folder;

  const session = stackSession(
    { name: "demo", demo: true },
    {
      started: () => {
        folder = mkdtempSync(join(tmpdir(), "tandem-e2e-demo-chosen-"));
      },
      stopped: () => {
        if (folder && !process.env.TANDEM_E2E_KEEP) rmSync(folder, { recursive: true, force: true });
      },
    },
  );

  it("starts the New conversation form in the server's home folder", async () => {
    const { page } = session;
    await page.getByRole("button", { name: "New", exact: true }).click();
    const form = await visible(page.getByRole("form", { name: "New conversation" }), "the new-conversation form");
    const field = form.getByLabel("Workspace folder (on the server)");
    const home = process.env.HOME ?? "";
    await until(page, "the workspace field to show the home folder", (h) => {
      const input = /** @type {HTMLInputElement | null} */ (document.querySelector('form[aria-label="New conversation"] input.mono'));
      return input?.value === h;
    }, home);
    assert.equal(await field.inputValue(), home);
  });

  it("runs the demo tour in the chosen folder and finishes with no error", async () => {
    const { stack, page } = session;
    const form = page.getByRole("form", { name: "New conversation" });
    await form.getByLabel("Workspace folder (on the server)").fill(folder);
    await form.getByLabel("Task (optional; starts the agent)").fill("Show me around");
    await form.getByLabel("Ask before acting").selectOption("never");
    await form.getByRole("button", { name: "Start" }).click();
    await visible(page.getByRole("status", { name: "Conversation status" }).getByText("Live"), "the conversation's event stream to be live", 20_000);

    await timelineShows(page, "Demo finished", 60_000);
    await statusIs(page, "Finished", 60_000);
    const text = await timelineText(page);
    assert.doesNotMatch(text, /is outside the workspace/);
    assert.equal(await page.locator(".timeline-list .result.error, .timeline-list .error-event, .timeline-list .item.failed").count(), 0, "no error rows");

    // The whole history, rendered or not: no error event, no failed observation.
    const convs = /** @type {{items: {id: string, workspace: {working_dir: string}}[]}} */ (await stack.api("/api/conversations/search?limit=10"));
    assert.equal(convs.items.length, 1);
    const conv = convs.items[0];
    assert.ok(conv);
    assert.equal(conv.workspace.working_dir, folder);
    const events = /** @type {{items: any[]}} */ (await stack.api(`/api/conversations/${conv.id}/events/search?limit=100`)).items;
    const kinds = events.map((e) => e.kind);
    assert.ok(!kinds.includes("AgentErrorEvent") && !kinds.includes("ConversationErrorEvent"), kinds.join(", "));
    const failed = events.filter((e) => e.kind === "ObservationEvent" && e.observation?.is_error === true);
    assert.deepEqual(failed, []);
    assert.equal(events.filter((e) => e.kind === "ActionEvent" && e.tool_name === "file_editor").length, 2);

    // The notes file is in the chosen folder.
    const notes = join(folder, "tandem-demo-notes.md");
    assert.ok(existsSync(notes), `${notes} exists`);
    assert.match(readFileSync(notes, "utf8"), /Task: Show me around/);
    await shot(page, "demo-finished");
  });

  it("shows each of the agent's commands once in its shell", async () => {
    const { page } = session;
    const terminal = page.locator('[data-pane="terminal"]');
    await terminal.getByRole("radio", { name: "Agent's shell" }).click();
    await visible(terminal.getByText("attached"), "the terminal to attach", 20_000);
    await until(
      page,
      "the demo's greeting in the agent's shell",
      () => (document.querySelector('[data-pane="terminal"] .xterm-rows')?.textContent ?? "").includes("Hello from the Tandem demo model"),
      "",
      20_000,
    );
    // Rows joined, so a command wrapped over two rows still counts.
    const shown = (await terminalText(page)).replace(/\n/g, "");
    // The command once (its output has no "echo"); `ls -la` once too.
    assert.equal(shown.split("echo 'Hello from the Tandem demo model'").length - 1, 1, shown);
    assert.equal(shown.split("ls -la").length - 1, 1, shown);
    await shot(page, "demo-agent-shell");
  });

  it("raised no page errors", () => {
    assert.deepEqual(session.errors, []);
  });
});
