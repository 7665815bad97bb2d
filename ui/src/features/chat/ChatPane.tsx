// Send messages (also while the agent runs: they show as queued until the server echoes the
// MessageEvent), pause, interrupt, resume.
import { useRef, useState } from "react";
import type { Api } from "../../api/client";
import { messageOf } from "../../api/errors";
import type { TimelineInput, TimelineState } from "../../store/timeline";

export type ChatApi = Pick<Api, "sendMessage" | "pause" | "interrupt" | "run">;

let seq = 0;
const localId = () => `local-${Date.now().toString(36)}-${++seq}`;

export function ChatPane({
  api,
  conversationId,
  state,
  dispatch,
}: {
  api: ChatApi;
  conversationId: string;
  state: TimelineState;
  dispatch: (input: TimelineInput) => void;
}) {
  const [text, setText] = useState("");
  const [error, setError] = useState<string | null>(null);
  const ref = useRef<HTMLTextAreaElement>(null);
  const status = state.status;
  const running = status === "running";
  const resumable = status === "paused" || status === "error" || status === "stuck" || status === "idle";

  async function send() {
    const body = text.trim();
    if (!body) return;
    const id = localId();
    dispatch({ type: "queue", localId: id, text: body });
    setText("");
    // While the agent runs the message joins its next step; otherwise it starts a run. While
    // actions wait for approval a message must not implicitly approve them.
    const run = !running && status !== "waiting_for_confirmation";
    try {
      await api.sendMessage(conversationId, body, run);
    } catch (e) {
      dispatch({ type: "queueFailed", localId: id, error: messageOf(e) });
    }
  }

  async function command(f: () => Promise<unknown>) {
    setError(null);
    try {
      await f();
    } catch (e) {
      setError(messageOf(e));
    }
  }

  return (
    <div className="chat">
      {state.queued.length > 0 && (
        <ul className="queued" aria-label="Queued messages">
          {state.queued.map((q) => (
            <li key={q.localId} className={q.failed ? "failed" : ""}>
              <span className="badge">{q.failed ? "not sent" : "queued"}</span> {q.text}
              {q.failed && (
                <>
                  <span className="error-text"> {q.failed}</span>
                  <button type="button" className="link" onClick={() => dispatch({ type: "dequeue", localId: q.localId })}>
                    dismiss
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <form
        className="composer"
        onSubmit={(e) => {
          e.preventDefault();
          void send();
        }}
      >
        <textarea
          ref={ref}
          data-autofocus
          aria-label="Message to the agent"
          placeholder={running ? "Message the agent (it reads it at its next step)…" : "Message the agent…"}
          rows={3}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              void send();
            }
          }}
        />
        <div className="composer-actions">
          <button type="submit" className="primary" disabled={!text.trim()}>
            Send
          </button>
          <button type="button" disabled={!running} onClick={() => void command(() => api.pause(conversationId))} title="Pause after the current step">
            Pause
          </button>
          <button
            type="button"
            disabled={!running}
            onClick={() => void command(() => api.interrupt(conversationId))}
            title="Stop the current step now"
          >
            Interrupt
          </button>
          <button type="button" disabled={!resumable} onClick={() => void command(() => api.run(conversationId))}>
            Resume
          </button>
        </div>
      </form>
      {error && (
        <div className="error-text" role="alert">
          {error}
        </div>
      )}
    </div>
  );
}
