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
