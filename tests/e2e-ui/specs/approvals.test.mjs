// @ts-check
// Under "ask before acting: always" every action waits in the approval panel with its risk and
// arguments. One is approved (its output appears); one is rejected with a reason, and the file
// its command would have created never exists.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { shot, timelineText, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { startConversation, statusIs, timelineShows } from "../lib/ui.mjs";

const REASON = "Do not create files in this test";

describe("approvals", () => {
  const session = stackSession({
    name: "approvals",
    script: (ws) => [
      {
        type: "reply",
        text: "First a harmless check.",
        tool_calls: [{ name: "terminal", arguments: { command: "echo \"approved-$((20+22))\"", summary: "Print a marker", security_risk: "MEDIUM" } }],
      },
      {
        type: "reply",
        text: "Now I will create the marker file.",
        tool_calls: [
          { name: "terminal", arguments: { command: `touch ${join(ws, "rejected-marker.txt")} && echo created`, summary: "Create the marker file", security_risk: "HIGH" } },
        ],
      },
      { type: "reply", text: "Understood: I left the marker file alone." },
    ],
  });

  it("shows the pending action with its risk and arguments, and runs it once approved", async () => {
    const { stack, page } = session;
    await startConversation(page, { folder: stack.workspace, policy: "always", task: "Check the shell, then create the marker file" });
    const panel = await visible(page.getByRole("region", { name: "Pending approval" }), "the approval panel", 30_000);
    await statusIs(page, "Waiting for approval");
    await visible(panel.locator(".risk, .badge", { hasText: /medium/i }), "the MEDIUM risk in the approval panel");
    const args = await panel.getByLabel("Arguments").innerText();
    assert.match(args, /"command": "echo \\"approved-\$\(\(20\+22\)\)\\""/, "the panel shows the full arguments");
    assert.match(args, /"is_input": false/);
    // Nothing ran yet: the timeline has the action, awaiting approval, and no output.
    await timelineShows(page, "awaiting approval");
    assert.doesNotMatch(await timelineText(page), /approved-42/);
    await shot(page, "approval-pending", { readme: "timeline-approval" });

    await panel.getByRole("button", { name: "Approve", exact: true }).click();
    await timelineShows(page, "approved-42");
  });

  it("rejects an action with a reason, records the rejection, never runs it, and the agent goes on", async () => {
    const { stack, page } = session;
    const marker = join(stack.workspace, "rejected-marker.txt");
    const panel = await visible(page.getByRole("region", { name: "Pending approval" }).filter({ hasText: "rejected-marker.txt" }), "the second action in the approval panel", 30_000);
    await visible(panel.locator(".risk, .badge", { hasText: /high/i }), "the HIGH risk in the approval panel");
    await panel.getByRole("button", { name: "Reject…" }).click();
    await panel.getByLabel("Reason for rejecting").fill(REASON);
    await panel.getByRole("button", { name: "Reject", exact: true }).click();

    await timelineShows(page, `Rejected — ${REASON}`);
    assert.equal(existsSync(marker), false, `${marker} exists: the rejected command ran`);
    // "then let the agent continue" is ticked by default: the agent reads the reason and goes on.
    await timelineShows(page, "Understood: I left the marker file alone.");
    await statusIs(page, "Finished");
    assert.equal(await page.getByRole("region", { name: "Pending approval" }).count(), 0, "no approval is pending any more");
    // The conversation is over, so nothing can run the command later: it never ran.
    assert.equal(existsSync(marker), false, `${marker} must not exist: the rejected command ran`);
    assert.doesNotMatch(await timelineText(page), /\ncreated\n/);
    await shot(page, "approval-rejected");
  });

  it("raised no page errors", () => {
    assert.deepEqual(session.errors, []);
  });
});
