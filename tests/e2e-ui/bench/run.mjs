// @ts-check
// UI benchmarks (not tests): `npm run -w tests/e2e-ui bench`. Against a real `tandem serve` in
// Debian's chromium it prints
//   - a 10,000-event timeline: time from clicking the conversation until the virtualised list
//     shows rows (and until it shows the newest one), and frame intervals while scrolling it
//     from top to bottom (requestAnimationFrame sampling);
//   - keystroke-to-echo latency in the terminal pane over the local backend;
//   - the UI bundle size (ui/scripts/bundle-size.mjs),
// each with its ratio to a target (below 1.00 is within the target).
// Options (environment): BENCH_EVENTS (default 10000), BENCH_RUNS (initial renders, default 3),
// BENCH_KEYS (keystrokes, default 50).
import { join } from "node:path";
import { bundleSize } from "../../../ui/scripts/bundle-size.mjs";
import { launch, openUi, visible } from "../lib/browser.mjs";
import { writeConversation } from "../lib/fixture.mjs";
import { uiDir } from "../lib/paths.mjs";
import { Stack } from "../lib/stack.mjs";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const KEYS = Number(process.env.BENCH_KEYS ?? 50);

const TARGETS = {
  initialRenderMs: 1000,
  scrollFrameP95Ms: 1000 / 60,
  keystrokeMedianMs: 50,
  mainJsGzipBytes: 1024 * 1024,
};

/**
 * @param {number[]} xs
 * @param {number} q 0..1
 */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
}

/** @type {{ figure: string, value: string, target: string, ratio: string }[]} */
const rows = [];
/**
 * @param {string} figure
 * @param {number} value
 * @param {string} unit
 * @param {number | null} target
 */
function report(figure, value, unit, target) {
  const fmt = (/** @type {number} */ v) => (unit === "KiB" ? `${(v / 1024).toFixed(1)} KiB` : `${v.toFixed(1)} ${unit}`);
  rows.push({ figure, value: fmt(value), target: target === null ? "" : `≤ ${fmt(target)}`, ratio: target === null ? "" : (value / target).toFixed(2) });
  console.log(`  ${figure}: ${fmt(value)}${target === null ? "" : `  (target ≤ ${fmt(target)}, ratio ${(value / target).toFixed(2)})`}`);
}

/**
 * Pairs of action/observation that make about `events` events (see fixture.mjs).
 * @param {number} events
 */
function pairsFor(events) {
  // 5 fixed events, 2 per pair and one progress message per 50 pairs.
  return Math.max(1, Math.round((events - 5) / (2 + 1 / 50)));
}

/**
 * Clicks the conversation and measures, in the page's clock, until the timeline shows rows and
 * until it shows the newest row.
 * @param {import("playwright-core").Page} page
 * @param {string} title
 * @param {string} lastText
 */
async function openAndMeasure(page, title, lastText) {
  await page.evaluate((last) => {
    const w = /** @type {Window & { __bench?: Promise<{ rows: number, newest: number }> }} */ (window);
    w.__bench = new Promise((resolve, reject) => {
      /** @type {number | null} */ let t0 = null;
      const started = performance.now();
      /** @type {number | null} */ let rowsAt = null;
      document.addEventListener("mousedown", () => (t0 ??= performance.now()), { capture: true, once: true });
      const check = () => {
        if (t0 !== null) {
          const list = document.querySelector('.timeline-list [data-testid="virtuoso-item-list"]');
          const shown = list instanceof HTMLElement && list.children.length > 0 && getComputedStyle(list).visibility !== "hidden";
          if (shown && rowsAt === null) rowsAt = performance.now();
          if (shown && (list.textContent ?? "").includes(last)) {
            resolve({ rows: (rowsAt ?? performance.now()) - t0, newest: performance.now() - t0 });
            return;
          }
        }
        if (performance.now() - started > 120_000) {
          const list = document.querySelector('.timeline-list [data-testid="virtuoso-item-list"]');
          reject(new Error(`the timeline did not show "${last}" within 120 s (rows ${rowsAt === null ? "never shown" : "shown"}; list: ${list instanceof HTMLElement ? `${list.children.length} rows, visibility ${getComputedStyle(list).visibility}` : "absent"}; status: ${document.querySelector(".statusbar")?.textContent ?? ""})`));
          return;
        }
        requestAnimationFrame(check);
      };
      requestAnimationFrame(check);
    });
  }, lastText);
  await page.getByRole("option").filter({ hasText: title }).click();
  return page.evaluate(() => /** @type {Window & { __bench?: Promise<{ rows: number, newest: number }> }} */ (window).__bench);
}

/**
 * Scrolls the timeline from top to bottom, a fixed distance per frame, sampling frame intervals.
 * @param {import("playwright-core").Page} page
 */
async function scrollFrames(page) {
  return page.evaluate(async () => {
    const scroller = document.querySelector(".timeline-list [data-virtuoso-scroller], .timeline-list > div");
    if (!(scroller instanceof HTMLElement)) throw new Error("no timeline scroller");
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    // A person's wheel first: the timeline stops following the newest row, as it does for them.
    scroller.dispatchEvent(new WheelEvent("wheel", { deltaY: -100, bubbles: true }));
    scroller.scrollTop = 0;
    for (let i = 0; i < 30; i++) await frame();
    // About one viewport and a half per frame: every frame renders rows it has never shown,
    // the worst case of a fast fling or a scrollbar drag.
    const step = Math.round(scroller.clientHeight * 1.5);
    /** @type {number[]} */
    const intervals = [];
    let last = /** @type {number} */ (await frame());
    let frames = 0;
    while (scroller.scrollTop + scroller.clientHeight < scroller.scrollHeight - 2 && frames < 20_000) {
      scroller.scrollTop += step;
      const now = /** @type {number} */ (await frame());
      intervals.push(now - last);
      last = now;
      frames++;
    }
    return { intervals, distance: scroller.scrollTop, frames };
  });
}

/**
 * Keystroke-to-echo: per key, the time from its keydown in the page until the typed text is in
 * the terminal's rendered rows.
 * @param {import("playwright-core").Page} page
 * @param {number} keys
 */
async function keystrokeEcho(page, keys) {
  const terminal = page.locator('[data-pane="terminal"]');
  await terminal.getByRole("radio", { name: "My shell" }).click();
  await visible(terminal.getByText("attached"), "the terminal to attach", 20_000);
  await terminal.locator(".xterm-host").click();
  await page.keyboard.type("PS1='$ '; clear\n");
  await page.waitForTimeout(500);
  /** @type {number[]} */
  const latencies = [];
  let typed = "";
  for (let i = 0; i < keys; i++) {
    const ch = "abcdefghijklmnopqrstuvwxyz"[i % 26] ?? "a";
    typed += ch;
    await page.evaluate((expected) => {
      const w = /** @type {Window & { __echo?: Promise<number> }} */ (window);
      const rows = document.querySelector('[data-pane="terminal"] .xterm-rows');
      if (!rows) throw new Error("no terminal rows");
      w.__echo = new Promise((resolve, reject) => {
        let keyAt = -1;
        document.addEventListener("keydown", () => (keyAt = performance.now()), { capture: true, once: true });
        const done = () => {
          if (keyAt >= 0 && (rows.textContent ?? "").includes(expected)) {
            mo.disconnect();
            clearTimeout(timer);
            resolve(performance.now() - keyAt);
          }
        };
        const mo = new MutationObserver(done);
        mo.observe(rows, { subtree: true, childList: true, characterData: true });
        const timer = setTimeout(() => {
          mo.disconnect();
          reject(new Error(`no echo of "${expected}" within 5 s`));
        }, 5000);
      });
    }, `$ ${typed}`);
    await page.keyboard.press(ch);
    latencies.push(await page.evaluate(() => /** @type {Window & { __echo?: Promise<number> }} */ (window).__echo ?? Promise.resolve(NaN)));
    await page.waitForTimeout(20);
  }
  return latencies;
}

async function main() {
  const title = "Ten thousand events";
  const lastText = "All loaders validate their data; the tests pass.";
  /** @type {{ id: string, events: number } | undefined} */
  let big;
  console.log(`UI benchmarks (chromium, tandem serve, ${uiDir})`);
  const stack = await Stack.start({
    name: "bench",
    prepareHome: (home, ws) => {
      big = writeConversation(home, { title, workspace: ws, pairs: pairsFor(EVENTS) });
      writeConversation(home, { title: "Small conversation", workspace: ws, pairs: 2 });
    },
  });
  /** @type {import("playwright-core").Browser | undefined} */
  let browser;
  try {
    browser = await launch();
    console.log(`\nTimeline: a conversation of ${big?.events ?? "?"} persisted events`);
    /** @type {{ rows: number, newest: number }[]} */
    const renders = [];
    for (let run = 0; run < RUNS; run++) {
      const { context, page } = await openUi(browser, stack.uiUrl);
      await visible(page.getByRole("option").filter({ hasText: title }), "the big conversation in the list");
      const r = await openAndMeasure(page, title, lastText);
      if (!r) throw new Error("no measurement");
      renders.push(r);
      if (run === RUNS - 1) {
        await page.waitForTimeout(500);
        const s = await scrollFrames(page);
        console.log(`  scrolled ${(s.distance / 1000).toFixed(0)}k px top to bottom in ${s.frames} frames`);
        report("initial render, rows shown (median)", quantile(renders.map((r) => r.rows), 0.5), "ms", TARGETS.initialRenderMs);
        report("initial render, newest row shown (median)", quantile(renders.map((r) => r.newest), 0.5), "ms", null);
        report("scroll frame interval median", quantile(s.intervals, 0.5), "ms", null);
        report("scroll frame interval p95", quantile(s.intervals, 0.95), "ms", TARGETS.scrollFrameP95Ms);
        report("scroll frame interval max", Math.max(...s.intervals), "ms", null);
      }
      await context.close();
    }
    console.log(`  (initial renders: ${renders.map((r) => `${r.rows.toFixed(0)}/${r.newest.toFixed(0)} ms`).join(", ")})`);

    console.log(`\nTerminal: keystroke to echo over the local backend (${KEYS} keys)`);
    const { context, page } = await openUi(browser, stack.uiUrl);
    await page.getByRole("option").filter({ hasText: "Small conversation" }).click();
    const lat = await keystrokeEcho(page, KEYS);
    report("keystroke echo median", quantile(lat, 0.5), "ms", TARGETS.keystrokeMedianMs);
    report("keystroke echo p95", quantile(lat, 0.95), "ms", null);
    await context.close();
  } finally {
    await browser?.close();
    await stack.stop();
  }

  console.log(`\nBundle: ${join(uiDir)}`);
  const size = bundleSize(uiDir);
  report("main JS (entry script) gzip", size.startup.js.gz, "KiB", TARGETS.mainJsGzipBytes);
  report("main CSS gzip", size.startup.css.gz, "KiB", null);
  report(`ui/dist total (${size.files} files)`, size.raw, "KiB", null);
  report("ui/dist total gzip", size.gz, "KiB", null);

  console.log("\n| figure | value | target | ratio |\n|---|---|---|---|");
  for (const r of rows) console.log(`| ${r.figure} | ${r.value} | ${r.target} | ${r.ratio} |`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
