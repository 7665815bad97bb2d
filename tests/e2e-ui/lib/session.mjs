// @ts-check
// The fixture of a spec with one backend: a Stack, chromium with the UI open on it, and both
// ended after the spec's tests, whatever failed.
import { uiSession } from "./browser.mjs";
import { Stack } from "./stack.mjs";

/**
 * What the spec's tests use. The `before` hook fills it in: the tests read it, never the
 * describe body (which runs before the hook).
 * @typedef {object} StackSession
 * @property {Stack} stack the backend the UI talks to
 * @property {import("playwright-core").Page} page the UI, connected to `stack`
 * @property {string[]} errors the page's uncaught errors so far (the spec asserts there were none)
 */

/**
 * Registers the spec's hooks (see `uiSession`): before its tests a Stack starts with `options`,
 * then `started` runs and chromium opens the UI on the Stack; after each test a screenshot;
 * after all the browser closes, the Stack stops, then `stopped` runs.
 * @param {import("./stack.mjs").StackOptions | (() => import("./stack.mjs").StackOptions | Promise<import("./stack.mjs").StackOptions>)} options
 *   a function when they depend on something the spec starts first (a site its script names)
 * @param {{ started?: (stack: Stack) => unknown, stopped?: () => unknown }} [hooks]
 *   `started`: what the options cannot say (binary files in the workspace, folders beside it);
 *   `stopped`: ends what the spec started besides the Stack
 * @returns {StackSession}
 */
export function stackSession(options, hooks = {}) {
  const session = /** @type {StackSession} */ ({ errors: /** @type {string[]} */ ([]) });
  uiSession({
    start: async () => {
      session.stack = await Stack.start(typeof options === "function" ? await options() : options);
      await hooks.started?.(session.stack);
      return session.stack.uiUrl;
    },
    opened: (ui) => {
      session.page = ui.page;
      session.errors = ui.errors;
    },
    stop: async () => {
      // Unset when Stack.start failed: the hooks after it still run.
      await /** @type {Stack | undefined} */ (session.stack)?.stop();
      await hooks.stopped?.();
    },
  });
  return session;
}
