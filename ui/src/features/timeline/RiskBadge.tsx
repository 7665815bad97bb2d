import type { SecurityRisk } from "../../api/types";

const LABEL: Record<string, string> = { LOW: "low risk", MEDIUM: "medium risk", HIGH: "high risk", UNKNOWN: "risk unknown" };

export function RiskBadge({ risk }: { risk: SecurityRisk | string | undefined | null }) {
  const r = risk ?? "UNKNOWN";
  return (
    <span className={`badge risk risk-${r.toLowerCase()}`} title={`Security risk: ${r}`}>
      {LABEL[r] ?? r}
    </span>
  );
}
