// @ts-check
// The Desktop pane on a real X display: Xvfb painted one known colour, served by x11vnc on
// loopback, and `tandem serve` with TANDEM_VNC_ADDR pointing at it (as the sandbox's entrypoint
// sets it up). The person opens a conversation, brings the Desktop tab to the front, and noVNC's
// canvas shows the display's pixels through the server's authenticated `/sockets/vnc/{id}`.
// It is view-only at first (the mouse over it leaves the X pointer alone); Take control sends
// the mouse to the desktop, Release stops it again.
//
// What the pane connects to is set up in `startTarget` alone, so the same spec can run against
// another target (a Docker sandbox) by giving it its URL, key and workspace.
import assert from "node:assert/strict";
import { join } from "node:path";
import { describe, it } from "node:test";
import { eventually, shot, uiSession, until, visible } from "../lib/browser.mjs";
import { startDesktop } from "../lib/desktop.mjs";
import { artefactDir } from "../lib/paths.mjs";
import { Stack } from "../lib/stack.mjs";
import { startConversation } from "../lib/ui.mjs";

/** The desktop's root colour, and what the canvas must show. */
const COLOUR = "#00aa00";
const RGB = [0x00, 0xaa, 0x00];

/**
 * @typedef {object} Target
 * @property {string} uiUrl opens the UI on the server, key included
 * @property {string} workspace the workspace folder as the server sees it
 * @property {{ width: number, height: number }} size the desktop's size in pixels
 * @property {(() => Promise<{ x: number, y: number }>) | null} pointer where the desktop's pointer is (null: this target cannot tell)
 * @property {() => Promise<void>} stop
 */

/**
 * The server whose desktop the pane shows: here `tandem serve` on this machine with Xvfb and
 * x11vnc beside it.
 * @returns {Promise<Target>}
 */
async function startTarget() {
  const desktop = await startDesktop({ colour: COLOUR, width: 1024, height: 768, log: join(artefactDir(), "desktop-x11vnc.log") });
  /** @type {Stack | null} */ let stack = null;
  try {
    stack = await Stack.start({ name: "desktop", env: { TANDEM_VNC_ADDR: desktop.vncAddr, DISPLAY: desktop.display } });
  } catch (e) {
    await desktop.stop();
    throw e;
  }
  const s = stack;
  return {
    uiUrl: s.uiUrl,
    workspace: s.workspace,
    size: desktop.size,
    pointer: desktop.pointer,
    stop: async () => {
      await s.stop();
      await desktop.stop();
    },
  };
}

const CANVAS = '[data-pane="desktop"] .desktop-screen canvas';

/**
 * Where desktop pixel (x, y) is on the page: noVNC scales the framebuffer to the canvas' box.
 * @param {import("playwright-core").Page} page
 * @param {{ x: number, y: number }} at
 */
async function onScreen(page, at) {
  const g = await page.locator(CANVAS).evaluate((el) => {
    const r = el.getBoundingClientRect();
    const c = /** @type {HTMLCanvasElement} */ (el);
    return { left: r.left, top: r.top, width: r.width, height: r.height, cw: c.width, ch: c.height };
  });
  return { x: g.left + ((at.x + 0.5) * g.width) / g.cw, y: g.top + ((at.y + 0.5) * g.height) / g.ch };
}

describe("desktop", () => {
  /** @type {Target} */ let target;
  /** @type {import("playwright-core").Page} */ let page;
  /** @type {string[]} */ let pageErrors = [];

  uiSession({
    start: async () => {
      target = await startTarget();
      return target.uiUrl;
    },
    opened: (ui) => {
      page = ui.page;
      pageErrors = ui.errors;
    },
    stop: async () => {
      await target?.stop();
    },
  });

  it("shows the desktop's pixels in the Desktop pane through the authenticated VNC socket", async () => {
    await startConversation(page, { folder: target.workspace, policy: "never" });
    const tab = await visible(page.getByRole("tab", { name: "Desktop" }), "the Desktop tab (the server says it has a desktop)");
    await tab.click();
    const pane = page.locator('[data-pane="desktop"]');
    await visible(pane.locator(".conn", { hasText: "connected" }), "the desktop to be connected", 30_000);
    await visible(page.locator(CANVAS), "noVNC's canvas");
    // noVNC draws the framebuffer at its own size; the middle pixel is the root window's colour.
    const sample = await until(
      page,
      `the canvas to show the desktop's colour ${COLOUR}`,
      (want) => {
        const c = /** @type {HTMLCanvasElement | null} */ (document.querySelector('[data-pane="desktop"] .desktop-screen canvas'));
        const ctx = c?.getContext("2d");
        if (!c || !ctx || c.width === 0) return false;
        const px = [...ctx.getImageData(Math.floor(c.width / 2), Math.floor(c.height / 2), 1, 1).data];
        /** @type {number[]} */
        const rgb = JSON.parse(want);
        return rgb.every((v, i) => Math.abs((px[i] ?? -99) - v) <= 8) && px[3] === 255;
      },
      JSON.stringify(RGB),
      30_000,
    ).then(() =>
      page.locator(CANVAS).evaluate((el) => {
        const c = /** @type {HTMLCanvasElement} */ (el);
        return { width: c.width, height: c.height };
      }),
    );
    assert.deepEqual(sample, target.size, "the canvas is the desktop's full framebuffer");
    // Scaled to the pane: the canvas fits inside the pane's screen area.
    const fit = await page.locator(CANVAS).evaluate((el) => {
      const box = el.parentElement?.parentElement?.getBoundingClientRect();
      const r = el.getBoundingClientRect();
      return box ? r.width <= box.width + 1 && r.height <= box.height + 1 : false;
    });
    assert.ok(fit, "the desktop is scaled to fit the pane");
    await shot(page, "desktop-pane");
  });

  it("is view-only until the person takes control, and Release gives it back", async () => {
    const pane = page.locator('[data-pane="desktop"]');
    await visible(pane.getByRole("status", { name: "Who controls the desktop" }).getByText("View only"), "view only by default");
    assert.equal(await pane.locator(".desktop-screen").getAttribute("data-view-only"), "true");
    const pointer = target.pointer;
    const spot = { x: 100, y: 80 };
    if (pointer) {
      const before = await pointer();
      const p = await onScreen(page, spot);
      await page.mouse.move(p.x, p.y);
      await page.mouse.move(p.x + 3, p.y + 2);
      // Nothing to wait for: give the move the time it would take to arrive, then check it did not.
      await new Promise((r) => setTimeout(r, 1000));
      assert.deepEqual(await pointer(), before, "a view-only pane sends no mouse to the desktop");
    }

    await pane.getByRole("button", { name: "Take control" }).click();
    await visible(pane.getByRole("status", { name: "Who controls the desktop" }).getByText("You control the desktop"), "the person in control");
    assert.equal(await pane.locator(".desktop-screen").getAttribute("data-view-only"), "false");
    if (pointer) {
      const p = await onScreen(page, spot);
      await page.mouse.move(p.x, p.y);
      await eventually(
        `the desktop's pointer at ${spot.x},${spot.y}`,
        async () => {
          const at = await pointer();
          return Math.abs(at.x - spot.x) <= 2 && Math.abs(at.y - spot.y) <= 2;
        },
        15_000,
      );
    }
    await shot(page, "desktop-in-control");

    await pane.getByRole("button", { name: "Release" }).click();
    await visible(pane.getByRole("status", { name: "Who controls the desktop" }).getByText("View only"), "view only again");
    if (pointer) {
      const before = await pointer();
      const p = await onScreen(page, { x: 300, y: 300 });
      await page.mouse.move(p.x, p.y);
      await new Promise((r) => setTimeout(r, 1000));
      assert.deepEqual(await pointer(), before, "released: the mouse no longer reaches the desktop");
    }
  });

  it("brings the desktop to the front with Ctrl+7", async () => {
    await page.getByRole("tab", { name: "Editor" }).click();
    assert.equal(await page.locator('[data-pane="desktop"]').isVisible(), false, "the desktop is behind the editor");
    await page.locator(".timeline-list").focus();
    await page.keyboard.press("Control+7");
    await visible(page.getByRole("tab", { name: "Desktop", selected: true }), "the Desktop tab in front after Ctrl+7");
    await visible(page.locator('[data-pane="desktop"] .conn', { hasText: "connected" }), "the desktop connected again", 30_000);
  });

  it("raised no page errors", () => {
    assert.deepEqual(pageErrors, []);
  });
});
