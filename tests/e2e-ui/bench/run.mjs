// @ts-check
// UI benchmarks (not tests): `npm run -w tests/e2e-ui bench`. Against a real `tandem serve` in
// Debian's chromium it prints
//   - a 10,000-event timeline: time from clicking the conversation until the virtualised list
//     shows rows (and until it shows the newest one), and frame intervals while scrolling it
//     from top to bottom (requestAnimationFrame sampling);
//   - replay on the same conversation, with its lanes recorded (two terminals with a marker per
//     event, a real JPEG frame every other event, a checkpoint every 20 events: see
//     agent-engine/replay/examples/replay_session.rs): the time from moving the scrubber to a
//     random event, or stepping with →, until the replay panel shows that event with its
//     browser frame loaded (p50/p95);
//   - the browser lane against Playwright's trace (what its trace viewer replays) on the same
//     browser actions: bytes per action;
//   - keystroke-to-echo latency in the terminal pane over the local backend;
//   - the UI bundle size (ui/scripts/bundle-size.mjs),
// each with its ratio to a target (below 1.00 is within the target).
// Options (environment): BENCH_EVENTS (default 10000), BENCH_RUNS (initial renders, default 3),
// BENCH_KEYS (keystrokes, default 50), BENCH_SEEKS (replay seeks and steps, default 100).
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bundleSize } from "../../../ui/scripts/bundle-size.mjs";
import { launch, openUi, visible } from "../lib/browser.mjs";
import { writeConversation } from "../lib/fixture.mjs";
import { repoRoot, uiDir } from "../lib/paths.mjs";
import { Stack } from "../lib/stack.mjs";

const EVENTS = Number(process.env.BENCH_EVENTS ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const KEYS = Number(process.env.BENCH_KEYS ?? 50);
const SEEKS = Number(process.env.BENCH_SEEKS ?? 100);

const TARGETS = {
  initialRenderMs: 1000,
  scrollFrameP95Ms: 1000 / 60,
  keystrokeMedianMs: 50,
  mainJsGzipBytes: 1024 * 1024,
  replaySeekP95Ms: 150,
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

/**
 * Twenty different pages as the replay's browser frames: JPEG screenshots at quality 40 (as the
 * browser lane records them) of the viewport, written to `dir`.
 * @param {import("playwright-core").Browser} browser
 * @param {string} dir
 */
async function framesFor(browser, dir) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  /** @type {string[]} */
  const files = [];
  for (let n = 0; n < 20; n++) {
    const rows = Array.from({ length: 30 }, (_, k) => `<tr><td>${n}.${k}</td><td>item ${k * (n + 1)}</td><td>${"lorem ipsum ".repeat(1 + ((k + n) % 6))}</td></tr>`).join("");
    await page.setContent(`<body style="font:14px sans-serif;background:hsl(${n * 18},40%,96%)"><h1>Page ${n}</h1><table>${rows}</table></body>`);
    const file = join(dir, `frame-${n}.jpg`);
    await page.screenshot({ path: file, type: "jpeg", quality: 40 });
    files.push(file);
  }
  await page.close();
  return files;
}

/**
 * Moves the replay to `count` events (random ones with `how` "seek", the next one with "step")
 * and measures, per move in the page's clock, the time until the panel shows that event
 * (not catching up) with its browser frame loaded.
 * @param {import("playwright-core").Page} page
 * @param {number} count
 * @param {"seek" | "step"} how
 */
async function replayMoves(page, count, how) {
  return page.evaluate(
    async ({ count, how }) => {
      const range = document.querySelector('input[aria-label="Replay position"]');
      if (!(range instanceof HTMLInputElement)) throw new Error("no replay scrubber");
      const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")?.set;
      if (!setValue) throw new Error("no value setter");
      const frame = () => new Promise((r) => requestAnimationFrame(r));
      let seed = 7;
      const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
      const panel = () => document.querySelector(".replay-panel");
      /** @type {number[]} */
      const out = [];
      for (let k = 0; k < count; k++) {
        const before = panel()?.getAttribute("data-event-id");
        const max = Number(range.max);
        const t0 = performance.now();
        if (how === "seek") {
          let target = Math.floor(random() * (max + 1));
          if (String(target) === range.value) target = (target + 1) % (max + 1);
          setValue.call(range, String(target));
          range.dispatchEvent(new Event("input", { bubbles: true }));
        } else {
          if (Number(range.value) >= max) throw new Error("stepped to the end");
          (document.activeElement ?? document.body).dispatchEvent(new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true }));
        }
        for (;;) {
          await frame();
          const p = panel();
          const lane = p?.querySelector('[aria-label="Browser replay"]');
          const img = lane?.querySelector("img.replay-frame");
          const want = lane?.getAttribute("data-frame-id");
          const ready =
            p?.getAttribute("aria-busy") === "false" &&
            p.getAttribute("data-event-id") !== before &&
            (!want || (img instanceof HTMLImageElement && img.getAttribute("data-frame-id") === want && img.complete && img.naturalWidth > 0));
          if (ready) break;
          if (performance.now() - t0 > 20_000) throw new Error(`the replay panel did not show the event within 20 s (busy ${p?.getAttribute("aria-busy")})`);
        }
        out.push(performance.now() - t0);
      }
      return out;
    },
    { count, how },
  );
}

/**
 * The same browser actions (a page opened, a row clicked; `actions` times over the 20 pages of
 * `framesFor`) recorded twice: by Playwright's tracing with screenshots and DOM snapshots (a
 * trace for its trace viewer), and as Tandem's browser lane keeps them (one JPEG of the viewport
 * at quality 40 after each action, deduplicated by content, plus a line of the frame list).
 * @param {import("playwright-core").Browser} browser
 * @param {string} dir
 * @param {number} actions
 */
async function browserLaneVsPlaywrightTrace(browser, dir, actions) {
  const html = (/** @type {number} */ n, /** @type {number} */ i) =>
    `data:text/html,${encodeURIComponent(`<body style="font:14px sans-serif;background:hsl(${n * 18},40%,96%)"><h1>Page ${n}, visit ${i}</h1><table>${Array.from({ length: 30 }, (_, k) => `<tr onclick="this.style.background='%23fd0'"><td>${n}.${k}</td><td>item ${k * (n + 1)}</td><td>${"lorem ipsum ".repeat(1 + ((k + n) % 6))}</td></tr>`).join("")}</table></body>`)}`;
  const run = async (/** @type {(page: import("playwright-core").Page) => Promise<void>} */ after, /** @type {boolean} */ trace) => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    if (trace) await context.tracing.start({ screenshots: true, snapshots: true });
    const page = await context.newPage();
    for (let i = 0; i < actions; i++) {
      await page.goto(html(i % 20, i));
      await after(page);
      await page.locator("tr").nth(i % 30).click();
      await after(page);
    }
    const file = join(dir, "playwright-trace.zip");
    if (trace) await context.tracing.stop({ path: file });
    await context.close();
    return trace ? statSync(file).size : 0;
  };
  /** @type {Map<string, number>} */
  const frames = new Map();
  let listBytes = 0;
  await run(async (page) => {
    const jpeg = await page.screenshot({ type: "jpeg", quality: 40 });
    const hash = createHash("sha256").update(jpeg).digest("hex");
    frames.set(hash, jpeg.length);
    // A line of browser.jsonl: the frame's id, the address, the event and the time.
    listBytes += JSON.stringify({ frame: hash.slice(0, 32), url: page.url().slice(0, 64), event_id: "0".repeat(32), kind: "action", at: 1.5 }).length + 1;
  }, false);
  const tandem = [...frames.values()].reduce((a, b) => a + b, 0) + listBytes;
  const playwright = await run(async () => {}, true);
  return { tandem, playwright, steps: actions * 2 };
}

async function main() {
  const title = "Ten thousand events";
  const lastText = "All loaders validate their data; the tests pass.";
  /** @type {{ id: string, events: number } | undefined} */
  let big;
  console.log(`UI benchmarks (chromium, tandem serve, ${uiDir})`);
  const browser = await launch();
  const scratch = mkdtempSync(join(tmpdir(), "tandem-bench-"));
  const frames = await framesFor(browser, scratch);
  console.log("(building the replay session recorder: cargo build --release -p tandem-replay --example replay_session)");
  execFileSync("cargo", ["build", "--release", "-q", "-p", "tandem-replay", "--example", "replay_session"], { cwd: repoRoot, stdio: "inherit" });
  /** @type {Stack | undefined} */
  let stack;
  try {
    stack = await Stack.start({
      name: "bench",
      prepareHome: (home, ws) => {
        big = writeConversation(home, { title, workspace: ws, pairs: pairsFor(EVENTS) });
        writeConversation(home, { title: "Small conversation", workspace: ws, pairs: 2 });
        const dir = join(home, "conversations", big.id);
        const recorded = execFileSync("cargo", ["run", "--release", "-q", "-p", "tandem-replay", "--example", "replay_session", "--", home, dir, ws, ...frames], { cwd: repoRoot, encoding: "utf8" });
        console.log(`replay lanes: ${recorded.trim()}`);
      },
    });
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

    console.log(`\nReplay: the same conversation with its lanes recorded (${SEEKS} random seeks, ${SEEKS} steps)`);
    {
      // The server's part: the replay route (and the frame it names) for random events.
      const id = big?.id ?? "";
      const ids = readdirSync(join(stack.home, "conversations", id, "events"))
        .filter((n) => /^event-\d+-.+\.json$/.test(n))
        .sort()
        .map((n) => n.replace(/\.json$/, "").split("-").slice(2).join("-"));
      /** @type {number[]} */
      const routes = [];
      /** @type {number[]} */
      const withFrame = [];
      for (let k = 0; k < SEEKS; k++) {
        const event = ids[Math.floor(((k * 7919) % ids.length))] ?? "";
        const t0 = performance.now();
        const state = /** @type {{ browser?: { frame_id: string } | null }} */ (await stack.api(`/api/conversations/${id}/replay?event_id=${event}`));
        routes.push(performance.now() - t0);
        if (state.browser) {
          const res = await fetch(`${stack.baseUrl}/api/conversations/${id}/replay/frames/${state.browser.frame_id}`, { headers: { "X-Session-API-Key": stack.key } });
          await res.arrayBuffer();
        }
        withFrame.push(performance.now() - t0);
      }
      report("replay route (REST, no UI), p50", quantile(routes, 0.5), "ms", null);
      report("replay route (REST, no UI), p95", quantile(routes, 0.95), "ms", null);
      report("replay route and its frame (REST, no UI), p95", quantile(withFrame, 0.95), "ms", null);
    }
    {
      const { context, page } = await openUi(browser, stack.uiUrl);
      await page.getByRole("option").filter({ hasText: title }).click();
      await visible(page.locator(".timeline-list").getByText(lastText), "the newest row", 120_000);
      await page.getByRole("button", { name: "Replay", exact: true }).click();
      await visible(page.locator('.replay-panel[aria-busy="false"] [aria-label="Terminal as of this event"]'), "the replay panel", 60_000);
      await replayMoves(page, 5, "seek"); // warm-up
      const seeks = await replayMoves(page, SEEKS, "seek");
      report("replay seek to a random event, p50", quantile(seeks, 0.5), "ms", null);
      report("replay seek to a random event, p95", quantile(seeks, 0.95), "ms", TARGETS.replaySeekP95Ms);
      // Steps forward from the first event (the Home key), so there are enough to take.
      await page.keyboard.press("Home");
      await page.waitForTimeout(300);
      const steps = await replayMoves(page, SEEKS, "step");
      report("replay step (→), p50", quantile(steps, 0.5), "ms", null);
      report("replay step (→), p95", quantile(steps, 0.95), "ms", TARGETS.replaySeekP95Ms);
      await context.close();
    }

    {
      const { tandem, playwright, steps } = await browserLaneVsPlaywrightTrace(browser, scratch, 100);
      console.log(`\nBrowser lane against a Playwright trace (screenshots and snapshots) of the same ${steps} actions`);
      report("Tandem browser lane, bytes per action", tandem / steps, "KiB", null);
      report("Playwright trace, bytes per action", playwright / steps, "KiB", null);
      console.log(`  Tandem / Playwright: ${(tandem / playwright).toFixed(2)}`);
    }

    console.log(`\nTerminal: keystroke to echo over the local backend (${KEYS} keys)`);
    const { context, page } = await openUi(browser, stack.uiUrl);
    await page.getByRole("option").filter({ hasText: "Small conversation" }).click();
    const lat = await keystrokeEcho(page, KEYS);
    report("keystroke echo median", quantile(lat, 0.5), "ms", TARGETS.keystrokeMedianMs);
    report("keystroke echo p95", quantile(lat, 0.95), "ms", null);
    await context.close();
  } finally {
    await browser.close();
    await stack?.stop();
    rmSync(scratch, { recursive: true, force: true });
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
