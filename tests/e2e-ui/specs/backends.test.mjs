// @ts-check
// Backends: a second `tandem serve` (its own key and conversations, allowing the first one's
// origin) added in Settings and switched to; a wrong key is "unauthorized" on that backend only;
// a URL where nothing listens says the server is down.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { shot, uiSession, visible } from "../lib/browser.mjs";
import { writeConversation } from "../lib/fixture.mjs";
import { deadPort, Stack } from "../lib/stack.mjs";
import { timelineShows } from "../lib/ui.mjs";

const SECOND_TITLE = "Loaders validate their data";

describe("backends", () => {
  /** @type {Stack} */ let local;
  /** @type {Stack} */ let second;
  /** @type {import("playwright-core").Page} */ let page;
  /** @type {string} */ let downUrl;

  // Two Stacks, the UI's own and the one it adds as a backend: more than `stackSession` holds.
  uiSession({
    start: async () => {
      local = await Stack.start({ name: "backends-local" });
      // The page comes from the local server's origin; the second server must allow it (CORS).
      second = await Stack.start({
        name: "backends-second",
        allowOrigins: [local.baseUrl],
        prepareHome: (home, ws) => {
          // Several catch-up pages (the server sends 100 events a page): the newest row must still show.
          writeConversation(home, { title: SECOND_TITLE, workspace: ws, pairs: 300 });
        },
      });
      downUrl = `http://127.0.0.1:${await deadPort()}`;
      return local.uiUrl;
    },
    opened: (ui) => {
      page = ui.page;
    },
    stop: async () => {
      await Promise.all([local?.stop(), second?.stop()]);
    },
  });

  /**
   * @param {string} name
   * @param {string} url
   * @param {string} key
   */
  async function addBackend(name, url, key) {
    const form = page.getByRole("region", { name: "Backends" });
    await form.getByLabel("Backend name").fill(name);
    await form.getByLabel("Server URL").fill(url);
    await form.getByLabel("Session key").fill(key);
    await form.getByRole("button", { name: "Add remote backend" }).click();
    return visible(form.locator("li", { hasText: name }), `${name} in the backend list`);
  }

  it("adds backends in Settings and says which ones answer", async () => {
    await page.getByRole("button", { name: "Settings" }).click();
    await visible(page.getByRole("dialog", { name: "Settings" }), "the settings dialog");
    const ok = await addBackend("Second", second.baseUrl, second.key);
    await visible(ok.locator(".badge", { hasText: /^ok$/ }), "the second backend to be ok");
    const wrong = await addBackend("Wrong key", second.baseUrl, "not-the-key");
    await visible(wrong.getByText("Unauthorized: the session key was refused"), "the wrong key to be refused");
    const down = await addBackend("Down", downUrl, "any");
    await visible(down.getByText(`Cannot reach ${downUrl}: the server is down or the URL is wrong`), "the down backend's message");
    const local_ = page.getByRole("region", { name: "Backends" }).locator("li", { hasText: "Local" });
    assert.equal(await local_.locator(".badge").innerText(), "ok", "the local backend is still ok");
    await shot(page, "settings-backends", { readme: "settings-backends" });
    await page.getByRole("button", { name: "Close settings" }).click();
  });

  it("switches to the second backend and lists its conversations", async () => {
    await page.locator("#backend-select").selectOption({ label: "Remote · Second" });
    await visible(page.locator(".backend-switcher .conn", { hasText: "connected" }), "the second backend to be connected");
    const item = await visible(page.getByRole("option").filter({ hasText: SECOND_TITLE }), "the second backend's conversation in the list");
    await item.click();
    await timelineShows(page, "All loaders validate their data; the tests pass.");
    await visible(page.getByRole("status", { name: "Conversation status" }).getByText("Live"), "the second backend's event stream");
    await shot(page, "second-backend", { readme: "conversations" });
  });

  it("reports a wrong key as unauthorized on that backend only", async () => {
    await page.locator("#backend-select").selectOption({ label: "Remote · Wrong key" });
    await visible(page.locator(".backend-switcher .conn", { hasText: "unauthorized" }), "the switcher to say unauthorized");
    await visible(page.locator('[data-pane="conversations"]').getByRole("alert").filter({ hasText: "Unauthorized: the session key was refused" }), "the conversations pane to explain");
    await page.locator("#backend-select").selectOption({ label: "Remote · Second" });
    await visible(page.locator(".backend-switcher .conn", { hasText: "connected" }), "the second backend, same server, still connected");
    await visible(page.getByRole("option").filter({ hasText: SECOND_TITLE }), "its conversation listed again");
  });

  it("says clearly when a backend is down", async () => {
    await page.locator("#backend-select").selectOption({ label: "Remote · Down" });
    await visible(page.locator(".backend-switcher .conn", { hasText: "unreachable" }), "the switcher to say unreachable");
    await visible(
      page.locator('[data-pane="conversations"]').getByRole("alert").filter({ hasText: `Cannot reach ${downUrl}: the server is down or the URL is wrong` }),
      "the conversations pane to explain",
    );
    await shot(page, "backend-down");
    await page.locator("#backend-select").selectOption({ label: "Local" });
    await visible(page.locator(".backend-switcher .conn", { hasText: "connected" }), "the local backend to be connected again");
  });
});
