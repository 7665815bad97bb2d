// @ts-check
// Budgets against `tandem serve`: a default budget set in Settings (a token limit of 0 refused
// there, naming the field) goes with a new conversation; the scripted LLM's first reply spends
// more tokens than it allows, so the run pauses (not an error) and the banner says what was
// spent; "Raise and resume" raises the limit and the agent finishes. The conversation's budget
// chip and the timeline show what happened; the Costs view lists what it spent.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { shot, visible } from "../lib/browser.mjs";
import { stackSession } from "../lib/session.mjs";
import { startConversation, statusIs, timelineShows } from "../lib/ui.mjs";

// The scripted LLM reports these counts for its first reply (more than the budget's 1,000).
const steps = [
  {
    type: /** @type {const} */ ("reply"),
    text: "First I look around.",
    tool_calls: [{ name: "terminal", arguments: { command: "echo step-one", summary: "Print a marker", security_risk: "LOW" } }],
    usage: { prompt_tokens: 1500, completion_tokens: 199 },
  },
  { type: /** @type {const} */ ("reply"), text: "Done within the raised budget.", usage: { prompt_tokens: 20, completion_tokens: 5 } },
];

describe("budgets", () => {
  const session = stackSession({ name: "budget", script: () => steps });

  it("refuses a limit of 0 in Settings and saves a default budget", async () => {
    const { page } = session;
    await page.getByRole("button", { name: "Settings", exact: true }).click();
    const form = await visible(page.getByRole("form", { name: "Default budget for new conversations" }), "the default budget in Settings");
    await form.getByLabel("Max tokens").fill("0");
    await form.getByRole("button", { name: "Save budget" }).click();
    await visible(form.getByRole("alert").filter({ hasText: "Max tokens must be more than 0" }), "the refusal naming the field");
    await form.getByLabel("Max tokens").fill("1000");
    await form.getByRole("button", { name: "Save budget" }).click();
    await visible(form.getByRole("status").filter({ hasText: "Saved: 1,000 tokens" }), "the saved budget");
    await page.getByRole("button", { name: "Close settings" }).click();
  });

  it("pauses the run at its budget and says what was spent", async () => {
    const { stack, page } = session;
    await startConversation(page, { folder: stack.workspace, policy: "never", task: "Print a marker, then stop" });
    const banner = await visible(page.getByRole("region", { name: "Budget reached" }), "the budget banner", 30_000);
    await statusIs(page, "Paused");
    // The reply's 1,699 tokens, plus whatever else the conversation's LLMs reported.
    assert.match(await banner.innerText(), /Paused at its budget: [\d,]+ tokens of 1,000/);
    assert.equal(await banner.getByLabel("Max tokens").inputValue(), "1000", "the field starts at the current budget");
    await timelineShows(page, "step-one");
    await visible(page.getByRole("button", { name: "Budget: 1,000 tokens" }), "the conversation's budget chip");
    await shot(page, "budget-paused");

    const search = /** @type {{ items: { id: string }[] }} */ (await stack.api("/api/conversations/search"));
    const id = search.items[0]?.id ?? "";
    assert.deepEqual(await stack.api(`/api/conversations/${id}/budget`), { max_tokens: 1000 }, "the conversation was created with the default budget");
  });

  it("raises the budget and resumes: the banner goes and the agent finishes", async () => {
    const { page } = session;
    const banner = page.getByRole("region", { name: "Budget reached" });
    await banner.getByLabel("Max tokens").fill("100000");
    await banner.getByRole("button", { name: "Raise and resume" }).click();
    await timelineShows(page, "Done within the raised budget.");
    await statusIs(page, "Finished");
    assert.equal(await banner.count(), 0, "the banner is gone once budget_reached is null");
    await timelineShows(page, "The budget was raised: the conversation can run again");
    await visible(page.getByRole("button", { name: "Budget: 100,000 tokens" }), "the raised budget on its chip");
  });

  it("lists the conversation's tokens in the Costs view", async () => {
    const { page } = session;
    await page.getByRole("button", { name: "Costs", exact: true }).click();
    const dialog = await visible(page.getByRole("dialog", { name: "Costs" }), "the Costs view");
    const byModel = dialog.getByRole("table", { name: "By model" });
    await visible(byModel.getByText("openai/scripted-e2e"), "the scripted model's row");
    await shot(page, "costs");
    await page.keyboard.press("Escape");
  });

  it("raised no page errors", () => {
    assert.deepEqual(session.errors, []);
  });
});
