// @ts-check
// Debian's chromium driven by playwright-core, with the flags a root machine on a closed
// network needs, plus the waits and screenshots the specs share.
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, afterEach, before } from "node:test";
import { chromium } from "playwright-core";
import { artefactDir, chromiumPath, readmeShotsDir } from "./paths.mjs";

/** Without these chromium, as root and offline, refuses to start or floods the network. */
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
];

export const VIEWPORT = { width: 1440, height: 900 };

/**
 * Launches chromium (playwright-core gives it a fresh user-data-dir).
 * @param {{ extraArgs?: string[] }} [o]
 */
export async function launch(o = {}) {
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: [...FLAGS, ...(o.extraArgs ?? [])] });
}

/**
 * A fresh page (fresh localStorage) on the UI of `url`, waiting until the backend says
 * "connected". Page errors are collected in `errors` so a spec can assert there were none.
 * @param {import("playwright-core").Browser} browser
 * @param {string} url
 */
export async function openUi(browser, url) {
  const context = await browser.newContext({ viewport: VIEWPORT, colorScheme: "dark" });
  const page = await context.newPage();
  /** @type {string[]} */
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(url);
  await visible(page.locator(".backend-switcher .conn", { hasText: "connected" }), "the backend to be connected", 20_000);
  return { context, page, errors };
}

/**
 * Waits until `locator` is visible, failing with what was awaited.
 * @param {import("playwright-core").Locator} locator
 * @param {string} what
 * @param {number} [timeout]
 */
export async function visible(locator, what, timeout = 15_000) {
  try {
    await locator.first().waitFor({ state: "visible", timeout });
  } catch (e) {
    throw new Error(`timed out after ${timeout} ms waiting for ${what} (${locator})`, { cause: e });
  }
  return locator.first();
}

/**
 * Waits until `f` (run in the page) returns a truthy value, failing with what was awaited.
 * @param {import("playwright-core").Page} page
 * @param {string} what
 * @param {(arg: string) => boolean} f
 * @param {string} arg
 * @param {number} [timeout]
 */
export async function until(page, what, f, arg, timeout = 15_000) {
  try {
    await page.waitForFunction(f, arg, { timeout, polling: 100 });
  } catch (e) {
    throw new Error(`timed out after ${timeout} ms waiting for ${what}`, { cause: e });
  }
}

/**
 * Waits until `check` returns true (polled from node), failing with what was awaited.
 * @param {string} what
 * @param {() => boolean | Promise<boolean>} check
 * @param {number} [timeout]
 */
export async function eventually(what, check, timeout = 15_000) {
  const end = Date.now() + timeout;
  for (;;) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Saves a screenshot to the artefact folder; with TANDEM_UPDATE_SCREENSHOTS=1 also to
 * docs/screenshots/<readmeName>.png (the README's pictures).
 * @param {import("playwright-core").Page} page
 * @param {string} name
 * @param {{ readme?: string }} [o]
 */
export async function shot(page, name, o = {}) {
  const dir = join(artefactDir(), "screenshots");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.png`);
  await page.screenshot({ path: file });
  if (o.readme && process.env.TANDEM_UPDATE_SCREENSHOTS === "1") {
    mkdirSync(readmeShotsDir, { recursive: true });
    copyFileSync(file, join(readmeShotsDir, `${o.readme}.png`));
  }
  return file;
}

/**
 * Text of the timeline's rendered rows.
 * @param {import("playwright-core").Page} page
 */
export function timelineText(page) {
  return page.locator(".timeline-list").innerText();
}

/**
 * The hooks every UI spec needs. Before its tests: `start()` starts the backends and returns the
 * URL to open, then chromium opens it and `opened` gets the page and its collected page errors.
 * After each test: a screenshot of the page (`end-<test name>`). After all: the browser closes
 * and `stop()` ends the backends, whatever failed. A spec with one Stack uses `stackSession`
 * (session.mjs), which fills these in.
 * @param {{ start: () => Promise<string>, opened: (ui: { page: import("playwright-core").Page, errors: string[] }) => void, stop: () => Promise<unknown> }} o
 */
export function uiSession(o) {
  /** @type {import("playwright-core").Browser | null} */ let browser = null;
  /** @type {import("playwright-core").Page | null} */ let page = null;
  before(async () => {
    const url = await o.start();
    browser = await launch();
    const ui = await openUi(browser, url);
    page = ui.page;
    o.opened(ui);
  });
  afterEach(async (t) => {
    if (page) await shot(page, `end-${t.name.replace(/\W+/g, "-").slice(0, 60)}`).catch(() => undefined);
  });
  after(async () => {
    await browser?.close();
    await o.stop();
  });
}
