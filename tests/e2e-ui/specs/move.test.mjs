// @ts-check
// Move: a conversation that ran on the UI's own server moves to a second `tandem serve` with
// "Move to…". The UI switches to that backend with the conversation open (its timeline
// there), the file the agent wrote is in the new workspace folder on the second server, and
// the first server keeps a read-only record that answers a run with 409 and where it went.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { shot, uiSession, visible } from "../lib/browser.mjs";
import { Stack } from "../lib/stack.mjs";
import { startConversation, statusIs, timelineShows } from "../lib/ui.mjs";

const DONE = "The file is written.";

describe("move", () => {
  /** @type {Stack} */ let local;
  /** @type {Stack} */ let second;
  /** @type {import("playwright-core").Page} */ let page;
  /** @type {string[]} */ let errors = [];

  uiSession({
    start: async () => {
      local = await Stack.start({
        name: "move-local",
        script: () => [
          { type: "reply", text: "Writing it.", tool_calls: [{ name: "terminal", arguments: { command: "printf moved-file > moved.txt", summary: "Write a file", security_risk: "LOW" } }] },
          { type: "reply", tool_calls: [{ name: "finish", arguments: { message: DONE } }] },
        ],
      });
      // The page comes from the local server's origin; the second server must allow it (CORS).
      second = await Stack.start({ name: "move-second", allowOrigins: [local.baseUrl] });
      return local.uiUrl;
    },
    opened: (ui) => {
      page = ui.page;
      errors = ui.errors;
    },
    stop: async () => {
      await Promise.all([local?.stop(), second?.stop()]);
    },
  });

  it("moves a conversation to another backend, which opens it, and leaves a record behind", async () => {
    await startConversation(page, { folder: local.workspace, policy: "never", task: "Write a file" });
    await timelineShows(page, DONE);
    await statusIs(page, "Finished");
    const found = /** @type {{items: {id: string}[]}} */ (await local.api("/api/conversations/search"));
    const id = found.items[0]?.id;
    assert.ok(id, "the conversation");

    // The second server as a backend.
    await page.getByRole("button", { name: "Settings" }).click();
    const form = page.getByRole("region", { name: "Backends" });
    await form.getByLabel("Backend name").fill("Second");
    await form.getByLabel("Server URL").fill(second.baseUrl);
    await form.getByLabel("Session key").fill(second.key);
    await form.getByRole("button", { name: "Add remote backend" }).click();
    await visible(form.locator("li", { hasText: "Second" }).locator(".badge", { hasText: /^ok$/ }), "the second backend to be ok");
    await page.getByRole("button", { name: "Close settings" }).click();

    await page.getByRole("button", { name: "Move to…" }).click();
    const dialog = await visible(page.getByRole("dialog", { name: "Move to another backend" }), "the move dialog");
    await dialog.getByRole("radio", { name: /Second/ }).check();
    await dialog.getByRole("button", { name: "Move", exact: true }).click();

    // The dialog closes (or says why it cannot), and the UI follows the conversation.
    const alert = dialog.getByRole("alert");
    await page.waitForFunction(() => !document.querySelector('[aria-label="Move to another backend"]') || document.querySelector('[aria-label="Move to another backend"] [role="alert"]'), null, { timeout: 30_000 });
    assert.equal(await alert.count(), 0, `the move failed: ${(await alert.count()) ? await alert.innerText() : ""}`);
    await visible(page.locator(".backend-switcher .conn", { hasText: "connected" }), "the second backend to be connected");
    assert.match(await page.locator("#backend-select option:checked").innerText(), /Second/);
    await timelineShows(page, DONE);
    await statusIs(page, "Finished");
    await shot(page, "moved");

    const info = /** @type {{workspace: {working_dir: string}}} */ (await second.api(`/api/conversations/${id}`));
    assert.notEqual(info.workspace.working_dir, local.workspace, "a new folder on the second server");
    assert.equal(readFileSync(join(info.workspace.working_dir, "moved.txt"), "utf8"), "moved-file");

    // The first server keeps a read-only record naming where it went.
    const res = await fetch(`${local.baseUrl}/api/conversations/${id}/run`, { method: "POST", headers: { "X-Session-API-Key": local.key } });
    assert.equal(res.status, 409);
    const body = /** @type {{code: string, moved_to: {url: string, conversation_id: string}}} */ (await res.json());
    assert.equal(body.code, "moved");
    assert.equal(body.moved_to.url, second.baseUrl);
    assert.equal(body.moved_to.conversation_id, id);
  });

  it("raised no page errors", () => {
    assert.deepEqual(errors, []);
  });
});
