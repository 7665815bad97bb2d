// The `task` tool's words, without React: which actions are tasks, their one-line headline, and
// which listed conversation a task ran in. The rows themselves are in TaskView.tsx.
import type { ActionEvent } from "../../api/types";
import type { ConversationItem } from "../conversations/queries";

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** Whether an action is a sub-agent task. */
export function isTaskAction(ev: ActionEvent): boolean {
  return ev.action?.kind === "TaskAction" || ev.tool_name === "task";
}

/** One line for a task: the sub-agent type and the task's description (else its prompt's first line). */
export function taskHeadline(a: Record<string, unknown>): string {
  const type = str(a.subagent_type) || "general-purpose";
  const what = str(a.description).trim() || str(a.prompt).trim().split("\n")[0] || "(no prompt)";
  const resume = str(a.resume);
  return `${type} sub-agent: ${what}${resume ? ` (resuming task ${resume})` : ""}`;
}

/**
 * The child conversation a task ran in: the conversation whose id is the task id (Tandem's
 * sub-agents use the child's id), else a child of `parentId` that carries the task id (in
 * `task_id` or its tags). Null while none is listed.
 */
export function findChild(items: ConversationItem[], taskId: string, parentId: string | null): ConversationItem | null {
  if (!taskId) return null;
  // The task id is the child's id; servers write UUIDs with or without dashes.
  const norm = (id: string) => id.replace(/-/g, "").toLowerCase();
  const byId = items.find((c) => norm(c.id) === norm(taskId));
  if (byId) return byId;
  return (
    items.find((c) => {
      if (!parentId || c.parent_conversation_id !== parentId) return false;
      const x = c as unknown as { task_id?: unknown; tags?: unknown };
      const tags = typeof x.tags === "object" && x.tags !== null ? Object.values(x.tags) : [];
      return x.task_id === taskId || tags.includes(taskId);
    }) ?? null
  );
}

