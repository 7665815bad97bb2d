import { describe, expect, it } from "vitest";
import type { ConversationItem } from "./queries";
import { buildTree, visibleRows } from "./tree";

function conv(id: string, over: Partial<ConversationItem> = {}): ConversationItem {
  return { id, title: id, created_at: "2026-01-01T00:00:00Z", updated_at: "2026-01-01T00:00:00Z", execution_status: "finished", ...over } as ConversationItem;
}

const items = [
  conv("old", { updated_at: "2026-01-01T00:00:00Z" }),
  conv("parent", { updated_at: "2026-01-03T00:00:00Z", sub_conversation_ids: ["a", "b"] }),
  conv("b", { parent_conversation_id: "parent", created_at: "2026-01-02T00:02:00Z", updated_at: "2026-01-09T00:00:00Z", execution_status: "error" }),
  conv("a", { parent_conversation_id: "parent", created_at: "2026-01-02T00:01:00Z" }),
  conv("grandchild", { parent_conversation_id: "a", execution_status: "running" }),
  conv("orphan", { parent_conversation_id: "gone", updated_at: "2026-01-02T00:00:00Z" }),
];

const ids = (rows: ReturnType<typeof visibleRows>) => rows.map((r) => `${"  ".repeat(r.depth)}${r.item.id}`);

describe("the conversation tree", () => {
  it("nests children under their parent in start order, and keeps orphans at the top level", () => {
    const roots = buildTree(items);
    expect(roots.map((n) => n.item.id)).toEqual(["parent", "orphan", "old"]);
    expect(roots[0]?.children.map((n) => n.item.id)).toEqual(["a", "b"]);
    expect(roots[0]?.children[0]?.children.map((n) => n.item.id)).toEqual(["grandchild"]);
  });

  it("also nests a child only its parent's sub_conversation_ids names", () => {
    const roots = buildTree([conv("p", { sub_conversation_ids: ["c"] }), conv("c")]);
    expect(roots.map((n) => n.item.id)).toEqual(["p"]);
    expect(roots[0]?.children.map((n) => n.item.id)).toEqual(["c"]);
  });

  it("survives a cycle without hiding its members", () => {
    const roots = buildTree([conv("x", { parent_conversation_id: "y" }), conv("y", { parent_conversation_id: "x" })]);
    const all = visibleRows(roots, { query: "", current: null, toggled: { x: true, y: true } });
    expect(new Set(all.map((r) => r.item.id))).toEqual(new Set(["x", "y"]));
  });

  it("expands a parent with a running descendant, counts children and failures below", () => {
    const rows = visibleRows(buildTree(items), { query: "", current: null, toggled: {} });
    expect(ids(rows)).toEqual(["parent", "  a", "    grandchild", "  b", "orphan", "old"]);
    expect(rows[0]).toMatchObject({ childCount: 2, failedBelow: 1, runningBelow: 1, expanded: true });
    expect(rows[1]).toMatchObject({ childCount: 1, runningBelow: 1, expanded: true });
  });

  it("collapses parents without running children unless the open conversation is below, or the person says so", () => {
    const idle = items.map((c) => (c.id === "grandchild" ? { ...c, execution_status: "finished" as const } : c));
    expect(ids(visibleRows(buildTree(idle), { query: "", current: null, toggled: {} }))).toEqual(["parent", "orphan", "old"]);
    expect(ids(visibleRows(buildTree(idle), { query: "", current: "grandchild", toggled: {} }))).toEqual(["parent", "  a", "    grandchild", "  b", "orphan", "old"]);
    expect(ids(visibleRows(buildTree(idle), { query: "", current: null, toggled: { parent: true } }))).toEqual(["parent", "  a", "  b", "orphan", "old"]);
    expect(ids(visibleRows(buildTree(items), { query: "", current: null, toggled: { parent: false } }))).toEqual(["parent", "orphan", "old"]);
  });

  it("shows a matching child under its parent when searching", () => {
    expect(ids(visibleRows(buildTree(items), { query: "GRANDCHILD", current: null, toggled: { parent: false } }))).toEqual(["parent", "  a", "    grandchild"]);
  });
});
