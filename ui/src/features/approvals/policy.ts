import type { ConfirmationPolicy } from "../../api/types";

export type PolicyChoice = "always" | "risky" | "never";

export function policyFor(choice: PolicyChoice): ConfirmationPolicy {
  switch (choice) {
    case "always":
      return { kind: "AlwaysConfirm" };
    case "risky":
      return { kind: "ConfirmRisky", threshold: "HIGH", confirm_unknown: true };
    case "never":
      return { kind: "NeverConfirm" };
  }
}

export function choiceOf(kind: string | null | undefined): PolicyChoice | null {
  if (kind === "AlwaysConfirm") return "always";
  if (kind === "ConfirmRisky") return "risky";
  if (kind === "NeverConfirm") return "never";
  return null;
}

/**
 * Edit-and-approve. The server has no "run this instead" command (upstream neither), so the
 * original action is rejected with a reason that says it was edited, and a message tells the
 * agent to run the edited version. The UI remembers the edited command and approves the
 * agent's next matching action by itself, so the person approves once.
 */
export const EDIT_REJECT_REASON =
  "The user edited this action before it ran. Do not run the original; the edited version follows in the next user message.";

export function editMessage(tool: string, edited: string): string {
  return tool === "terminal"
    ? `I edited your terminal command before approving it. Run exactly this command instead:\n\n\`\`\`bash\n${edited}\n\`\`\``
    : `I edited the arguments of your ${tool} call before approving it. Call ${tool} with exactly these arguments instead:\n\n\`\`\`json\n${edited}\n\`\`\``;
}
