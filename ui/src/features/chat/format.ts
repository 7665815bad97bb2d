export function formatCost(usd: number): string {
  if (usd === 0) return "$0.00";
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}

export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export const STATUS_LABEL: Record<string, string> = {
  idle: "Idle",
  running: "Running",
  paused: "Paused",
  waiting_for_confirmation: "Waiting for approval",
  finished: "Finished",
  error: "Error",
  stuck: "Stuck",
  deleting: "Deleting",
};
