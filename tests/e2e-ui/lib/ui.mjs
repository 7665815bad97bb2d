// @ts-check
// What a person does in the UI, step by step, shared by the specs.
import assert from "node:assert/strict";
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

/**
 * Clicks the page point (x, y) (CSS pixels of the agent's page) on the live picture, mapping it
 * as a person's eye would: the picture is scaled to fit its box and centred (object-fit: contain).
 * @param {import("playwright-core").Page} page
 * @param {{ x: number, y: number }} at
 */
export async function clickOnPage(page, at) {
  const img = await visible(page.locator('[data-pane="browser"] img.live-frame'), "the live picture of the page");
  const g = await img.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const i = /** @type {HTMLImageElement} */ (el);
    return { left: r.left, top: r.top, width: r.width, height: r.height, nw: i.naturalWidth, nh: i.naturalHeight, pw: Number(i.dataset.pageWidth), ph: Number(i.dataset.pageHeight) };
  });
  assert.ok(g.pw > 0 && g.ph > 0, `the picture names the page's size (${g.pw}×${g.ph})`);
  const iw = g.nw || g.pw;
  const ih = g.nh || g.ph;
  const scale = Math.min(g.width / iw, g.height / ih);
  const w = iw * scale;
  const h = ih * scale;
  const left = g.left + (g.width - w) / 2;
  const top = g.top + (g.height - h) / 2;
  await page.mouse.click(left + (at.x / g.pw) * w, top + (at.y / g.ph) * h);
}

/**
 * Waits until the browser pane's address bar shows `part`.
 * @param {import("playwright-core").Page} page
 * @param {string} part
 */
export async function addressShows(page, part) {
  await until(
    page,
    `the address bar to show "${part}"`,
    (p) => (/** @type {HTMLInputElement | null} */ (document.querySelector('[data-pane="browser"] input[aria-label="Address"]'))?.value ?? "").includes(p),
    part,
    30_000,
  );
}
