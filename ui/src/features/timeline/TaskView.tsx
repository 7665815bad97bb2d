// The `task` tool (upstream's TaskAction / TaskObservation): the parent agent hands a prompt to a
// sub-agent, which runs as a conversation of its own (listed under the parent) and answers with
// its final message. Rendered from the kind and fields, so any server's tasks read the same:
// the action as "which sub-agent, what for" with its prompt, the observation as the answer (or
// the failure) with its status and a link that opens the child conversation.
import Markdown from "react-markdown";
import remarkGfm from "remark-gfm";
import { useUi } from "../../store/ui";
import { useActiveBackend } from "../backends/backendStore";
import { useConversations } from "../conversations/queries";
import { contentText } from "./describe";
import { findChild } from "./task";

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** Opens the task's child conversation when it is listed; else names the task id. */
function ChildLink({ taskId }: { taskId: string }) {
  const backend = useActiveBackend();
  // Reads the conversation list the conversations pane keeps fresh; fetches nothing itself.
  const list = useConversations(backend, false);
  const parent = useUi((s) => s.conversationId);
  const open = useUi((s) => s.openConversation);
  const child = findChild(list.data ?? [], taskId, parent);
  if (child)
    return (
      <button type="button" className="link" onClick={() => open(child.id)}>
        Open the sub-agent's conversation →
      </button>
    );
  return taskId && taskId !== "unknown" ? (
    <span className="muted">
      task <code>{taskId}</code>
    </span>
  ) : null;
}

/** The task's prompt (the headline shows its description), folded when long. */
export function TaskPrompt({ args }: { args: Record<string, unknown> }) {
  const prompt = str(args.prompt);
  if (!prompt) return null;
  const resume = str(args.resume);
  return (
    <>
      <details className="task-prompt" open={prompt.length <= 400}>
        <summary>Prompt</summary>
        <div className="thinking-body">{prompt}</div>
      </details>
      {resume && <ChildLink taskId={resume} />}
    </>
  );
}

/** A TaskObservation: the sub-agent's answer (or failure), its status, and its conversation. */
export function TaskResult({ obs }: { obs: Record<string, unknown> }) {
  const status = str(obs.status) || (obs.is_error === true ? "error" : "completed");
  const failed = obs.is_error === true || status === "error";
  const text = contentText(obs.content);
  return (
    <div className="task-result">
      <div className="row">
        <span className={`status-pill small ${failed ? "st-error" : "st-finished"}`}>sub-agent {status}</span>
        {str(obs.subagent) && <span className="badge">{str(obs.subagent)}</span>}
        <ChildLink taskId={str(obs.task_id)} />
      </div>
      {text && failed && <pre className="obs-text">{text}</pre>}
      {text && !failed && (
        <div className="markdown">
          <Markdown remarkPlugins={[remarkGfm]}>{text}</Markdown>
        </div>
      )}
    </div>
  );
}
