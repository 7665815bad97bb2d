// @ts-check
// The UI against the upstream OpenHands agent server (openhands-agent-server 1.58.2, Python) as a
// remote backend: added in Settings, switched to, a conversation started from the UI runs there
// (its LLM is the scripted one, reached through an LLM profile) and its events fill the timeline.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { shot, uiSession, visible } from "../lib/browser.mjs";
import { Stack } from "../lib/stack.mjs";
import { UpstreamServer } from "../lib/upstream.mjs";
import { statusIs, timelineShows } from "../lib/ui.mjs";

describe("an upstream OpenHands agent server as a remote backend", () => {
  /** @type {Stack} */ let local;
  /** @type {UpstreamServer} */ let upstream;
  /** @type {import("playwright-core").Page} */ let page;
  /** @type {string[]} */ let pageErrors = [];

  // The Stack and the upstream server start side by side (the upstream one takes seconds),
  // which `stackSession`, starting one Stack, does not do.
  uiSession({
    start: async () => {
      // The local server serves the UI; its scripted LLM is also what the upstream agent calls.
      const [l, u] = await Promise.allSettled([
        Stack.start({
          name: "upstream-local",
          script: () => [
            { type: "reply", text: "Checking the upstream shell.", tool_calls: [{ name: "terminal", arguments: { command: "echo \"upstream-$((3*11))\"", summary: "Print a marker", security_risk: "LOW" } }] },
            { type: "reply", tool_calls: [{ name: "finish", arguments: { message: "Upstream run done." } }] },
          ],
        }),
        UpstreamServer.start(),
      ]);
      // Both are kept before any failure is raised, so stop() ends whichever started.
      if (l.status === "fulfilled") local = l.value;
      if (u.status === "fulfilled") upstream = u.value;
      if (l.status === "rejected") throw l.reason;
      if (u.status === "rejected") throw u.reason;
      return local.uiUrl;
    },
    opened: (ui) => {
      page = ui.page;
      pageErrors = ui.errors;
    },
    stop: async () => {
      upstream?.stop();
      await local?.stop();
    },
  });

  it("adds the upstream server and an LLM profile in Settings", async () => {
    await page.getByRole("button", { name: "Settings" }).click();
    const dialog = await visible(page.getByRole("dialog", { name: "Settings" }), "the settings dialog");
    const profiles = dialog.getByRole("region", { name: "LLM profiles" });
    await profiles.getByLabel("Profile name").fill("Scripted");
    await profiles.getByLabel("Model").fill("openai/scripted-e2e");
    await profiles.getByLabel("Base URL").fill(local.llmUrl);
    await profiles.getByLabel("API key").fill("e2e-not-a-real-key");
    await profiles.getByRole("button", { name: "Add profile" }).click();
    await visible(profiles.locator("li", { hasText: "Scripted" }).getByText("key saved"), "the profile with its key saved");

    const backends = dialog.getByRole("region", { name: "Backends" });
    await backends.getByLabel("Backend name").fill("Upstream");
    await backends.getByLabel("Server URL").fill(upstream.baseUrl);
    await backends.getByLabel("Session key").fill(upstream.key);
    await backends.getByRole("button", { name: "Add remote backend" }).click();
    await visible(backends.locator("li", { hasText: "Upstream" }).locator(".badge", { hasText: /^ok$/ }), "the upstream backend to be ok", 20_000);
    await page.getByRole("button", { name: "Close settings" }).click();
  });

  it("starts a conversation on it from the UI and shows its events as they arrive", async () => {
    await page.locator("#backend-select").selectOption({ label: "Remote · Upstream" });
    await visible(page.locator(".backend-switcher .conn", { hasText: "connected" }), "the upstream backend to be connected", 20_000);
    await page.getByRole("button", { name: "New", exact: true }).click();
    const form = await visible(page.getByRole("form", { name: "New conversation" }), "the new-conversation form");
    await form.getByLabel("Workspace folder (on the server)").fill(upstream.workspace);
    await form.getByLabel("Task (optional; starts the agent)").fill("Print a marker on the upstream server");
    await form.getByLabel("LLM").selectOption({ label: "Scripted (openai/scripted-e2e)" });
    await form.getByLabel("Ask before acting").selectOption("never");
    await form.getByRole("button", { name: "Start" }).click();
    await visible(page.getByRole("status", { name: "Conversation status" }).getByText("Live"), "the upstream event stream to be live", 30_000);
    // The agent's turn as the upstream server recorded it: the command it ran, then finish.
    await timelineShows(page, "Checking the upstream shell.", 60_000);
    await timelineShows(page, 'echo "upstream-$((3*11))"');
    await statusIs(page, "Finished", 60_000);
    await timelineShows(page, "Upstream run done.");
    // Editor and terminal need Tandem's own endpoints: the panes say so instead of failing.
    await visible(page.locator('[data-pane="editor"]').getByText("This server has no workspace file API"), "the editor's explanation");
    await visible(page.locator('[data-pane="terminal"]').getByText("This server has no terminal socket"), "the terminal's explanation");
    await visible(page.getByRole("option").filter({ hasText: /Print a marker|End-to-end test/ }), "the conversation in the upstream backend's list", 20_000);
    await shot(page, "upstream-conversation");
  });

  it("raised no page errors", () => {
    assert.deepEqual(pageErrors, []);
  });
});
