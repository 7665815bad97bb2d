// Spending across backends, per conversation, per model and per day, from each backend's
// conversation list: every conversation's `stats.usage_to_metrics` (per usage id its model, cost
// and tokens). Pure, so the view and its tests agree.
//
// Per day goes by each conversation's last activity (`updated_at`, else `created_at`), in the
// person's time zone, all of its spending on that day. The list already has that; the `stats`
// state updates would split a conversation across the days it ran, but cost one events search
// per conversation on every backend each time the view opens.
import type { ConversationItem } from "../conversations/queries";
import { conversationTitle } from "../conversations/queries";

/** What was spent: US dollars and tokens. */
export interface Spend {
  cost: number;
  promptTokens: number;
  completionTokens: number;
}

export interface ConversationSpend extends Spend {
  backendId: string;
  backendName: string;
  id: string;
  title: string;
  /** The models it used, most expensive first. */
  models: string[];
  /** Its day (YYYY-MM-DD, local), or null when the server gave no date. */
  day: string | null;
}

export interface ModelSpend extends Spend {
  model: string;
  conversations: number;
}

export interface DaySpend extends Spend {
  day: string;
  conversations: number;
}

export interface CostReport {
  total: Spend;
  /** Conversations that spent something, most expensive first. */
  byConversation: ConversationSpend[];
  /** Most expensive first. */
  byModel: ModelSpend[];
  /** Newest first; conversations without a date are under `UNKNOWN_DAY`. */
  byDay: DaySpend[];
  /** Listed conversations that spent nothing (left out of the rows). */
  withoutSpending: number;
}

/** One backend's conversations. */
export interface CostSource {
  backendId: string;
  backendName: string;
  conversations: readonly ConversationItem[];
}

export const UNKNOWN_MODEL = "unknown model";
export const UNKNOWN_DAY = "no date";

const none = (): Spend => ({ cost: 0, promptTokens: 0, completionTokens: 0 });

function add(into: Spend, s: Spend): void {
  into.cost += s.cost;
  into.promptTokens += s.promptTokens;
  into.completionTokens += s.completionTokens;
}

export const tokensOf = (s: Spend) => s.promptTokens + s.completionTokens;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function spendOf(m: Record<string, unknown>): Spend {
  const t = isRecord(m.accumulated_token_usage) ? m.accumulated_token_usage : {};
  return { cost: num(m.accumulated_cost), promptTokens: num(t.prompt_tokens), completionTokens: num(t.completion_tokens) };
}

/**
 * A conversation's spending per model: its `usage_to_metrics` (agent, condenser, … each naming its
 * model), or, from a server that sends no stats, its `metrics` totals under their model or none.
 */
export function usageOf(c: ConversationItem): { model: string; spend: Spend }[] {
  // Boundary: the list's types differ between servers; read the JSON defensively.
  const item = c as unknown as { stats?: unknown; metrics?: unknown };
  const byUsage = isRecord(item.stats) && isRecord(item.stats.usage_to_metrics) ? Object.values(item.stats.usage_to_metrics).filter(isRecord) : [];
  const metrics = byUsage.length ? byUsage : isRecord(item.metrics) ? [item.metrics] : [];
  return metrics.map((m) => ({ model: typeof m.model_name === "string" && m.model_name ? m.model_name : UNKNOWN_MODEL, spend: spendOf(m) }));
}

/** The local day (YYYY-MM-DD) of an ISO time, or null. */
export function dayOf(iso: string | null | undefined): string | null {
  if (!iso) return null;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return null;
  const pad = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

const spent = (s: Spend) => s.cost > 0 || tokensOf(s) > 0;
const byCost = <T extends Spend>(a: T, b: T) => b.cost - a.cost || tokensOf(b) - tokensOf(a);

/** Totals and the three breakdowns over every conversation of every source. */
export function costReport(sources: readonly CostSource[]): CostReport {
  const total = none();
  const byConversation: ConversationSpend[] = [];
  const models = new Map<string, ModelSpend>();
  const days = new Map<string, DaySpend>();
  let withoutSpending = 0;
  for (const src of sources) {
    for (const c of src.conversations) {
      const usage = usageOf(c);
      const own = none();
      const perModel = new Map<string, Spend>();
      for (const u of usage) {
        add(own, u.spend);
        const m = perModel.get(u.model) ?? none();
        add(m, u.spend);
        perModel.set(u.model, m);
      }
      if (!spent(own)) {
        withoutSpending++;
        continue;
      }
      add(total, own);
      for (const [model, s] of perModel) {
        if (!spent(s)) continue;
        const m = models.get(model) ?? { model, conversations: 0, ...none() };
        add(m, s);
        m.conversations++;
        models.set(model, m);
      }
      const day = dayOf(c.updated_at ?? c.created_at);
      const d = days.get(day ?? UNKNOWN_DAY) ?? { day: day ?? UNKNOWN_DAY, conversations: 0, ...none() };
      add(d, own);
      d.conversations++;
      days.set(d.day, d);
      byConversation.push({
        backendId: src.backendId,
        backendName: src.backendName,
        id: c.id,
        title: conversationTitle(c),
        models: [...perModel].filter(([, s]) => spent(s)).sort((a, b) => byCost(a[1], b[1])).map(([m]) => m),
        day,
        ...own,
      });
    }
  }
  return {
    total,
    byConversation: byConversation.sort(byCost),
    byModel: [...models.values()].sort(byCost),
    // ISO days sort as text; the undated go last.
    byDay: [...days.values()].sort((a, b) => (a.day === UNKNOWN_DAY ? 1 : b.day === UNKNOWN_DAY ? -1 : b.day.localeCompare(a.day))),
    withoutSpending,
  };
}
