// @ts-check
// The Browser pane with the agent's real Chromium: the agent opens a small site served here,
// reads the page and asks the person to log in; the person sees the request (outside the pane,
// then in it), takes control, clicks the link and the form's fields on the live picture by
// their coordinates, types, submits, and hands back with a note; the agent reads the new page
// and finishes. The timeline keeps the takeover, the handback and the screenshots.
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { describe, it } from "node:test";
import { shot, timelineText, until, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { addressShows, clickOnPage, startConversation, statusIs, timelineShows } from "../lib/ui.mjs";

const USER = "ann";
const PASSWORD = "not-a-secret";
const NOTE = `Logged in as ${USER}`;

// Where the site's controls are, in CSS pixels of the page: the person clicks these spots on
// the scaled live picture.
const LINK = { x: 100, y: 60 };
const USERNAME = { x: 190, y: 118 };
const PASSWORD_FIELD = { x: 190, y: 178 };

const PAGES = {
  "/index.html": `<!doctype html><html><head><title>The shop</title><style>
    body { margin: 0; font: 18px sans-serif; }
    a { position: absolute; left: 40px; top: 40px; width: 200px; height: 40px; display: block; }
  </style></head><body><a href="login.html">Log in</a></body></html>`,
  "/login.html": `<!doctype html><html><head><title>Log in</title><style>
    body { margin: 0; font: 16px sans-serif; }
    input, button { position: absolute; left: 40px; width: 300px; height: 36px; font: inherit; }
  </style></head><body><form action="welcome.html" method="get">
    <input name="username" aria-label="Username" style="top: 100px">
    <input name="password" type="password" aria-label="Password" style="top: 160px">
    <button type="submit" style="top: 220px; width: 120px">Sign in</button>
  </form></body></html>`,
  "/welcome.html": `<!doctype html><html><head><title>Welcome</title></head><body><h1 id="w"></h1><script>
    const user = new URLSearchParams(location.search).get("username") || "";
    document.getElementById("w").textContent = "Welcome, " + user;
    document.title = "Welcome, " + user;
  </script></body></html>`,
};

/**
 * The site on a free loopback port; `requests` lists every path and query asked for.
 * @returns {Promise<{ url: string, requests: string[], close: () => Promise<void> }>}
 */
async function serveSite() {
  /** @type {string[]} */
  const requests = [];
  const server = createServer((req, res) => {
    const u = new URL(req.url ?? "/", "http://127.0.0.1");
    requests.push(u.pathname + u.search);
    const body = PAGES[/** @type {keyof typeof PAGES} */ (u.pathname)];
    if (!body) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(body);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve(undefined))),
  };
}

describe("browser", () => {
  /** @type {Awaited<ReturnType<typeof serveSite>>} */ let site;

  const session = stackSession(
    async () => {
      site = await serveSite();
      return {
        name: "browser",
        script: () => [
          { type: "reply", text: "Opening the shop.", tool_calls: [{ name: "browser_navigate", arguments: { url: `${site.url}/index.html` } }] },
          { type: "reply", tool_calls: [{ name: "browser_get_state", arguments: { include_screenshot: true } }] },
          { type: "reply", text: "The shop needs a login.", tool_calls: [{ name: "browser_request_handoff", arguments: { reason: "Please log in" } }] },
          { type: "reply", tool_calls: [{ name: "browser_get_state", arguments: { include_screenshot: true } }] },
          { type: "reply", text: "done" },
        ],
      };
    },
    {
      stopped: async () => {
        await site?.close();
      },
    },
  );

  it("shows the agent's request for a person outside the Browser pane, then in it", async () => {
    const { stack, page } = session;
    await startConversation(page, { folder: stack.workspace, policy: "never", task: "Log in to the shop", browserTools: true });
    // The editor is in front: the request shows above the timeline and on the Browser tab.
    const notice = await visible(page.getByRole("region", { name: "The agent asks for you" }), "the handoff notice above the timeline", 60_000);
    assert.match(await notice.innerText(), /Please log in/);
    await visible(page.getByRole("tab", { name: /Browser/ }).getByText("needs you"), "the badge on the Browser tab");
    await timelineShows(page, "ask you to take over the browser: Please log in");
    await timelineShows(page, "waiting for you");
    await shot(page, "browser-handoff-notice");

    await notice.getByRole("button", { name: "Show the browser" }).click();
    const banner = await visible(page.locator('[data-pane="browser"]').getByRole("alert", { name: "The agent asks for you" }), "the handoff banner in the Browser pane");
    assert.match(await banner.innerText(), /Please log in/);
    await visible(page.getByRole("status", { name: "Who drives" }).getByText("Agent drives"), "who drives: the agent");
    await addressShows(page, "/index.html");
    await visible(page.locator('[data-pane="browser"] img.live-frame'), "the live picture of the page", 30_000);
  });

  it("takes control, logs in on the live picture and hands back with a note", async () => {
    const { page } = session;
    const pane = page.locator('[data-pane="browser"]');
    await pane.getByRole("alert", { name: "The agent asks for you" }).getByRole("button", { name: "Take control" }).click();
    await visible(page.getByRole("status", { name: "Who drives" }).getByText("You drive"), "who drives: you", 15_000);
    await timelineShows(page, "You took control of the browser at The shop");

    await clickOnPage(page, LINK);
    await addressShows(page, "/login.html");
    await clickOnPage(page, USERNAME);
    await page.keyboard.type(USER);
    await clickOnPage(page, PASSWORD_FIELD);
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press("Enter");
    await addressShows(page, "/welcome.html");
    assert.ok(
      site.requests.includes(`/welcome.html?username=${USER}&password=${PASSWORD}`),
      `the site got the login the person typed; it saw ${JSON.stringify(site.requests)}`,
    );
    await until(
      page,
      "the live picture to be of the welcome page",
      (t) => (document.querySelector('[data-pane="browser"] img.live-frame')?.getAttribute("alt") ?? "").includes(t),
      `Welcome, ${USER}`,
    );
    await shot(page, "browser-person-drives");

    await pane.getByLabel("Note for the agent").fill(NOTE);
    await pane.getByRole("button", { name: "Hand back" }).click();
    await visible(page.getByRole("status", { name: "Who drives" }).getByText("Agent drives"), "who drives: the agent again");
  });

  it("lets the agent finish, and the timeline keeps the takeover, the handback and the screenshots", async () => {
    const { page } = session;
    await timelineShows(page, `You handed the browser back: ${NOTE}`);
    await timelineShows(page, "done", 60_000);
    await statusIs(page, "Finished");
    assert.equal(await page.getByRole("region", { name: "The agent asks for you" }).count(), 0, "no handoff is pending any more");

    // The two page reads, step by step: before the login and after it, each with its picture.
    await page.getByLabel("Filter text").fill("read the page's state");
    await until(page, "both page reads in the filtered timeline", () => document.querySelectorAll(".timeline-list .shot-thumb").length === 2, "", 15_000);
    const text = await timelineText(page);
    assert.match(text, /\/index\.html/, "the first read is of the index");
    assert.match(text, /\/welcome\.html/, "the agent's read after the handback names the page the person reached");
    await page.locator(".timeline-list .shot-thumb").last().click();
    const dialog = await visible(page.getByRole("dialog", { name: /Screenshot/ }), "the enlarged screenshot");
    assert.ok(await dialog.locator("img.shot-full").evaluate((el) => /** @type {HTMLImageElement} */ (el).naturalWidth > 0), "the screenshot decodes");
    await shot(page, "browser-screenshot");
    await page.keyboard.press("Escape");
    await page.getByLabel("Filter text").fill("");
  });

  it("brings the editor and the browser to the front from the keyboard", async () => {
    const { page } = session;
    await page.locator(".timeline-list").focus();
    await page.keyboard.press("Control+4");
    await visible(page.getByRole("tab", { name: "Editor", selected: true }), "the Editor tab in front after Ctrl+4");
    assert.equal(await page.locator('[data-pane="browser"]').isVisible(), false, "the browser is behind the editor");
    await page.keyboard.press("Control+6");
    await visible(page.getByRole("tab", { name: "Browser", selected: true }), "the Browser tab in front after Ctrl+6");
    await until(page, "the focus in the Browser pane", () => Boolean(document.activeElement?.closest('[data-pane="browser"]')), "");
  });

  it("raised no page errors", () => {
    assert.deepEqual(session.errors, []);
  });
});
