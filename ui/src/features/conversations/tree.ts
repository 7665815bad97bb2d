// Sub-agent conversations nest under their parent. A child names its parent in
// `parent_conversation_id` (the parent also lists it in `sub_conversation_ids`); a child whose
// parent is not in the list (deleted, or beyond the pages loaded) stays at the top level.
import { conversationTitle, workspaceDir, type ConversationItem } from "./queries";

export interface ConvNode {
  item: ConversationItem;
  children: ConvNode[];
}

/** One row of the flattened list: the conversation, how deep it sits, and its children's state. */
export interface ConvRow {
  item: ConversationItem;
  depth: number;
  /** Direct children, listed or not (collapsed). */
  childCount: number;
  /** Descendants whose status is error or stuck: a failing sub-agent shows on its parent. */
  failedBelow: number;
  /** Descendants running now. */
  runningBelow: number;
  expanded: boolean;
}

const byUpdatedDesc = (a: ConvNode, b: ConvNode) => (b.item.updated_at ?? "").localeCompare(a.item.updated_at ?? "");
// Children in the order the parent started them.
const byCreatedAsc = (a: ConvNode, b: ConvNode) => (a.item.created_at ?? "").localeCompare(b.item.created_at ?? "");

/** The parent a conversation nests under, if that parent is listed. */
function parentOf(c: ConversationItem, ids: Set<string>, listedBy: Map<string, string>): string | null {
  const p = c.parent_conversation_id;
  if (typeof p === "string" && p && p !== c.id && ids.has(p)) return p;
  return listedBy.get(c.id) ?? null;
}

/** Parents with their children; top-level conversations most recently updated first. */
export function buildTree(items: ConversationItem[]): ConvNode[] {
  const ids = new Set(items.map((c) => c.id));
  const listedBy = new Map<string, string>();
  for (const c of items) for (const sub of c.sub_conversation_ids ?? []) if (sub !== c.id && ids.has(sub) && !listedBy.has(sub)) listedBy.set(sub, c.id);
  const nodes = new Map(items.map((c) => [c.id, { item: c, children: [] } as ConvNode]));
  const parent = new Map<string, string>();
  for (const c of items) {
    const p = parentOf(c, ids, listedBy);
    if (p) parent.set(c.id, p);
  }
  // A cycle (bad data) would hide its members: such a conversation goes to the top level.
  const reachesSelf = (id: string) => {
    const seen = new Set([id]);
    for (let p = parent.get(id); p; p = parent.get(p)) {
      if (seen.has(p)) return true;
      seen.add(p);
    }
    return false;
  };
  const roots: ConvNode[] = [];
  for (const c of items) {
    const node = nodes.get(c.id) as ConvNode;
    const p = parent.get(c.id);
    const pn = p && !reachesSelf(c.id) ? nodes.get(p) : undefined;
    if (pn) pn.children.push(node);
    else roots.push(node);
  }
  for (const n of nodes.values()) n.children.sort(byCreatedAsc);
  return roots.sort(byUpdatedDesc);
}

const FAILED = new Set(["error", "stuck"]);

function count(n: ConvNode, pred: (c: ConversationItem) => boolean): number {
  return n.children.reduce((sum, ch) => sum + (pred(ch.item) ? 1 : 0) + count(ch, pred), 0);
}

function contains(n: ConvNode, id: string | null): boolean {
  return id !== null && n.children.some((ch) => ch.item.id === id || contains(ch, id));
}

export function matchesQuery(c: ConversationItem, q: string): boolean {
  return `${conversationTitle(c)} ${workspaceDir(c)} ${c.id}`.toLowerCase().includes(q);
}

/**
 * The rows to show. A parent is expanded when the person said so (`toggled`), else when the
 * open conversation or a running one is among its descendants. With a query, a conversation
 * shows when it or a descendant matches, and parents of matches are expanded.
 */
export function visibleRows(roots: ConvNode[], opts: { query: string; current: string | null; toggled: Record<string, boolean> }): ConvRow[] {
  const q = opts.query.trim().toLowerCase();
  const out: ConvRow[] = [];
  const keep = (n: ConvNode): boolean => !q || matchesQuery(n.item, q) || n.children.some(keep);
  const walk = (n: ConvNode, depth: number) => {
    if (!keep(n)) return;
    const runningBelow = count(n, (c) => c.execution_status === "running");
    const auto = contains(n, opts.current) || runningBelow > 0;
    // A search shows its matches whatever was collapsed.
    const searched = q !== "" && n.children.some(keep);
    const expanded = n.children.length > 0 && (searched || (opts.toggled[n.item.id] ?? auto));
    out.push({
      item: n.item,
      depth,
      childCount: n.children.length,
      failedBelow: count(n, (c) => FAILED.has(c.execution_status ?? "")),
      runningBelow,
      expanded,
    });
    if (expanded) for (const ch of n.children) walk(ch, depth + 1);
  };
  for (const r of roots) walk(r, 0);
  return out;
}
