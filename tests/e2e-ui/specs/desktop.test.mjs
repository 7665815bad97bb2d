// @ts-check
// The Desktop pane on a real X display: Xvfb painted one known colour, served by x11vnc on
// loopback, and `tandem serve` with TANDEM_VNC_ADDR pointing at it (as the sandbox's entrypoint
// sets it up). The person opens a conversation, brings the Desktop tab to the front, and noVNC's
// canvas shows the display's pixels through the server's authenticated `/sockets/vnc/{id}`.
// It is view-only at first (the mouse over it leaves the X pointer alone); Take control sends
// the mouse to the desktop, Release stops it again.
//
// The same checks run twice: against that desktop on this machine, and against a real Docker
// sandbox (`tandem sandbox start`), whose own server, desktop and UI the page then uses. The
// sandbox run needs a Docker daemon and the image (scripts/test.sh provides both and sets
// TANDEM_REQUIRE_DOCKER=1, which makes their absence a failure instead of a skip).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chown, mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, it } from "node:test";
import { eventually, shot, uiSession, until, visible } from "../lib/browser.mjs";
import { startDesktop } from "../lib/desktop.mjs";
import { artefactDir, tandemBin } from "../lib/paths.mjs";
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
async function startLocalTarget() {
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


const run = promisify(execFile);

/**
 * Whether a Docker daemon answers and the sandbox image exists; a failure instead of false
 * when TANDEM_REQUIRE_DOCKER=1.
 */
async function sandboxAvailable() {
  try {
    await run(tandemBin(), ["sandbox", "ls"]);
    await run("docker", ["image", "inspect", "tandem-sandbox:latest"]);
    return true;
  } catch (e) {
    if (process.env.TANDEM_REQUIRE_DOCKER === "1") throw new Error(`the sandbox is required (TANDEM_REQUIRE_DOCKER=1): ${e}`);
    return false;
  }
}

/**
 * A Docker sandbox started with `tandem sandbox start`: the UI is the one its own server
 * serves, the desktop is its Xvfb, painted through its server's bash endpoint (commands run as
 * the sandbox's user with its DISPLAY), which also asks x11vnc where the pointer is.
 * @returns {Promise<Target>}
 */
async function startSandboxTarget() {
  const work = await mkdtemp(join(tmpdir(), "tandem-desktop-sandbox-"));
  // A person's folder: the sandbox refuses a root-owned one (the agent takes its owner's uid).
  if (process.getuid?.() === 0) await chown(work, 1000, 1000);
  const { stdout } = await run(tandemBin(), ["sandbox", "start", "--workspace", work, "--memory", "2g", "--env", "LLM_MODEL=openai/never-called", "--env", "LLM_BASE_URL=http://127.0.0.1:9/v1", "--env", "LLM_API_KEY=unused"]);
  /** @type {{ id: string, url: string, session_key: string, workspace: string }} */
  const sb = JSON.parse(stdout.trim().split("\n").pop() ?? "{}");
  const stop = async () => {
    await run(tandemBin(), ["sandbox", "stop", sb.id]).catch(() => {});
  };
  /** @param {string} command */
  const bash = async (command) => {
    const r = await fetch(`${sb.url}/api/bash/execute_bash_command`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-Session-API-Key": sb.session_key },
      body: JSON.stringify({ command, timeout: 30 }),
    });
    if (!r.ok) throw new Error(`execute_bash_command ${r.status}: ${await r.text()}`);
    /** @type {{ stdout?: string | null, stderr?: string | null, exit_code?: number | null }} */
    const out = await r.json();
    if (out.exit_code !== 0) throw new Error(`\`${command}\` in the sandbox exited ${out.exit_code}: ${out.stderr ?? ""}${out.stdout ?? ""}`);
    return out.stdout ?? "";
  };
  try {
    await bash(`xsetroot -solid '${COLOUR}'`);
    return {
      uiUrl: `${sb.url}/ui/#key=${sb.session_key}`,
      workspace: sb.workspace,
      size: { width: 1280, height: 800 },
      pointer: async () => {
        const out = await bash('x11vnc -display "$DISPLAY" -sync -query pointer_pos 2>/dev/null');
        const m = out.match(/pointer_pos:(-?\d+),(-?\d+)/);
        if (!m) throw new Error(`x11vnc -query pointer_pos in the sandbox answered ${JSON.stringify(out)}`);
        return { x: Number(m[1]), y: Number(m[2]) };
      },
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
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

for (const [name, startTarget] of /** @type {const} */ ([
  ["desktop on this machine", startLocalTarget],
  ["desktop of a Docker sandbox", startSandboxTarget],
])) describe(name, { skip: name.includes("sandbox") && !(await sandboxAvailable()) ? "no Docker daemon or sandbox image" : false }, () => {
  const slug = name.includes("sandbox") ? "sandbox-desktop" : "desktop";
  /** @type {Target} */ let target;
  /** @type {import("playwright-core").Page} */ let page;
  /** @type {string[]} */ let pageErrors = [];

  // The target is a Stack with a desktop beside it or a Docker sandbox, not a bare Stack: so
  // not `stackSession`.
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
    await shot(page, `${slug}-pane`);
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
    await shot(page, `${slug}-in-control`);

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
