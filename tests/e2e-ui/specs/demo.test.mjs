// @ts-check
// What a newcomer sees first: `tandem serve --llm demo`, a new conversation in a folder of their
// choosing (a fresh temporary one, not the server's default workspace) with the form's defaults
// (ask before risky actions, a browser, sub-agents), and the demo model's whole tour running in
// that folder to the end with no error: plan, terminal, file editor, an approval, the live
// browser on a page the demo serves itself, a takeover to sign in there, a sub-agent's child
// conversation, finish. The New conversation form starts in the server's home folder, and the
// agent's shell shows each command once.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { shot, timelineText, until, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { addressShows, clickOnPage, statusIs, terminalText, timelineShows } from "../lib/ui.mjs";

// Where the demo site's sign-in fields are, in CSS pixels of its page (fixed by the site).
const NAME_FIELD = { x: 190, y: 148 };
const PASSWORD_FIELD = { x: 190, y: 208 };

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

  it("runs the demo tour in the chosen folder: an approval, the browser, a takeover, a sub-agent, and no error", async () => {
    const { stack, page } = session;
    const form = page.getByRole("form", { name: "New conversation" });
    await form.getByLabel("Workspace folder (on the server)").fill(folder);
    await form.getByLabel("Task (optional; starts the agent)").fill("Show me around");
    assert.equal(await form.getByLabel("Ask before acting").inputValue(), "risky", "the default asks before risky actions");
    await form.getByRole("button", { name: "Start" }).click();
    await visible(page.getByRole("status", { name: "Conversation status" }).getByText("Live"), "the conversation's event stream to be live", 20_000);

    // The tour's one risky command waits for the person.
    const panel = await visible(page.getByRole("region", { name: "Pending approval" }), "the approval panel", 60_000);
    assert.match(await panel.innerText(), /An approved command ran/);
    await shot(page, "demo-approval");
    await panel.getByRole("button", { name: "Approve", exact: true }).click();

    // The browser: the demo's own shop, then the agent asks the person to sign in.
    const notice = await visible(page.getByRole("region", { name: "The agent asks for you" }), "the agent's request to sign in", 60_000);
    assert.match(await notice.innerText(), /sign in to the demo shop/);
    await notice.getByRole("button", { name: "Show the browser" }).click();
    const pane = page.locator('[data-pane="browser"]');
    await visible(pane.locator("img.live-frame"), "the live picture of the shop", 30_000);
    await pane.getByRole("alert", { name: "The agent asks for you" }).getByRole("button", { name: "Take control" }).click();
    await visible(page.getByRole("status", { name: "Who drives" }).getByText("You drive"), "who drives: you", 15_000);
    const address = pane.getByLabel("Address");
    const site = (await address.inputValue()).replace(/\/demo\/.*$/, "/demo/");
    assert.match(site, /^http:\/\/127\.0\.0\.1:\d+\/demo\/$/, "the shop is served on this machine");
    await address.fill(`${site}login`);
    await address.press("Enter");
    await addressShows(page, "/demo/login");
    await until(
      page,
      "the live picture to be of the sign-in page",
      () => (document.querySelector('[data-pane="browser"] img.live-frame')?.getAttribute("alt") ?? "").includes("Sign in"),
      "",
      30_000,
    );
    await clickOnPage(page, NAME_FIELD);
    await page.keyboard.type("Ada");
    await clickOnPage(page, PASSWORD_FIELD);
    await page.keyboard.type("not-a-secret");
    await page.keyboard.press("Enter");
    await addressShows(page, "/demo/account");
    await shot(page, "demo-takeover");
    await pane.getByRole("button", { name: "Hand back" }).click();
    await visible(page.getByRole("status", { name: "Who drives" }).getByText("Agent drives"), "who drives: the agent again");

    await timelineShows(page, "Demo finished", 90_000);
    await statusIs(page, "Finished", 60_000);
    await timelineShows(page, "signed in as Ada");
    const text = await timelineText(page);
    assert.doesNotMatch(text, /is outside the workspace/);
    assert.equal(await page.locator(".timeline-list .result.error, .timeline-list .error-event, .timeline-list .item.failed").count(), 0, "no error rows");

    // The whole history, rendered or not: no error event, no failed observation; the sub-agent
    // ran as a child conversation and finished.
    const convs = /** @type {{items: {id: string, parent_conversation_id?: string | null, execution_status: string, workspace: {working_dir: string}}[]}} */ (
      await stack.api("/api/conversations/search?limit=10")
    );
    const top = convs.items.filter((c) => !c.parent_conversation_id);
    assert.equal(top.length, 1);
    const conv = top[0];
    assert.ok(conv);
    assert.equal(conv.workspace.working_dir, folder);
    const child = convs.items.find((c) => c.parent_conversation_id === conv.id);
    assert.ok(child, "a child conversation for the sub-agent");
    assert.equal(child.execution_status, "finished");
    const events = /** @type {{items: any[]}} */ (await stack.api(`/api/conversations/${conv.id}/events/search?limit=100`)).items;
    const kinds = events.map((e) => e.kind);
    assert.ok(!kinds.includes("AgentErrorEvent") && !kinds.includes("ConversationErrorEvent"), kinds.join(", "));
    const failed = events.filter((e) => e.kind === "ObservationEvent" && e.observation?.is_error === true);
    assert.deepEqual(failed, []);
    assert.equal(events.filter((e) => e.kind === "ActionEvent" && e.tool_name === "file_editor").length, 2);
    const tools = events.filter((e) => e.kind === "ActionEvent").map((e) => e.tool_name);
    for (const t of ["browser_navigate", "browser_get_content", "browser_request_handoff", "task"]) assert.ok(tools.includes(t), `${t} in ${tools.join(", ")}`);

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
