// @ts-check
// What a person does in the UI, step by step, shared by the specs.
import { until, visible } from "./browser.mjs";

/**
 * Starts a conversation from the conversations pane and waits until it is open and live.
 * @param {import("playwright-core").Page} page
 * `browserTools: true` ticks "Browser tools" (and fails if the server does not offer them).
 * @param {{ folder: string, task?: string, policy: "always" | "risky" | "never", browserTools?: boolean }} o
 */
export async function startConversation(page, o) {
  await page.getByRole("button", { name: "New", exact: true }).click();
  const form = await visible(page.getByRole("form", { name: "New conversation" }), "the new-conversation form");
  await form.getByLabel("Workspace folder (on the server)").fill(o.folder);
  if (o.task) await form.getByLabel("Task (optional; starts the agent)").fill(o.task);
  await form.getByLabel("Ask before acting").selectOption(o.policy);
  if (o.browserTools) await (await visible(form.getByLabel("Browser tools"), "the Browser tools checkbox")).check();
  await form.getByRole("button", { name: "Start" }).click();
  await visible(page.getByRole("status", { name: "Conversation status" }).getByText("Live"), "the conversation's event stream to be live", 20_000);
}

/**
 * The status pill of the open conversation reaches `label` (e.g. "Finished").
 * @param {import("playwright-core").Page} page
 * @param {string} label
 * @param {number} [timeout]
 */
export async function statusIs(page, label, timeout = 30_000) {
  await visible(page.getByRole("status", { name: "Conversation status" }).locator(".status-pill", { hasText: label }), `the conversation status "${label}"`, timeout);
}

/**
 * Waits until the timeline's rendered rows contain `text`.
 * @param {import("playwright-core").Page} page
 * @param {string} text
 * @param {number} [timeout]
 */
export async function timelineShows(page, text, timeout = 30_000) {
  await until(
    page,
    `the timeline to show "${text}"`,
    (t) => (document.querySelector(".timeline-list")?.textContent ?? "").includes(t),
    text,
    timeout,
  );
}

/**
 * The rendered text of the terminal pane (xterm's DOM renderer rows).
 * @param {import("playwright-core").Page} page
 */
export async function terminalText(page) {
  return page.locator(".xterm-host .xterm-rows").innerText();
}
