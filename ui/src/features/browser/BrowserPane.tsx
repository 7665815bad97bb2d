// The agent's browser, live (`/sockets/browser/{id}`): the page as the screencast shows it, its
// address and tabs, who drives, and the person's Take control / Hand back (with a note the
// agent reads). A handoff request from the agent is the banner at the top.
import { useEffect, useState, type ReactNode } from "react";
import type { SocketFactory } from "../../api/socket";
import type { Backend } from "../backends/backendStore";
import { LiveView } from "./LiveView";
import type { BrowserConn } from "./session";
import { useBrowserSession } from "./useBrowserSession";

/** The shortest text the server keeps as a secret (shorter would hide ordinary words). */
export const MIN_SECRET_LEN = 4;

/** What the address bar sends: a URL with its scheme (loopback and bare hosts get one). */
export function normaliseUrl(text: string): string {
  const t = text.trim();
  if (!t) return t;
  // `host:port` also looks like `scheme:`; only `scheme://` and a few schemes without `//` count.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(t) || /^(about|data|blob|view-source|chrome):/i.test(t)) return t;
  const local = /^(localhost|127\.|\[::1\]|0\.0\.0\.0)/i.test(t);
  return `${local ? "http" : "https"}://${t}`;
}

export function connLabel(c: BrowserConn): { text: string; tone: "ok" | "warn" | "bad" } {
  switch (c.status) {
    case "connecting":
      return { text: c.attempt > 1 ? `reconnecting (attempt ${c.attempt})…` : "connecting…", tone: "warn" };
    case "open":
      return { text: "live", tone: "ok" };
    case "lost":
      return { text: `disconnected — retrying in ${Math.ceil(c.retryInMs / 1000)}s`, tone: "bad" };
    case "unauthorized":
      return { text: "unauthorized", tone: "bad" };
    case "not_found":
      return { text: "not found", tone: "bad" };
    case "no_browser_tools":
      return { text: "no browser tools", tone: "warn" };
    case "closed":
      return { text: "closed", tone: "warn" };
  }
}

export function BrowserPane({ backend, conversationId, socketFactory }: { backend: Pick<Backend, "baseUrl" | "key">; conversationId: string; socketFactory?: SocketFactory }) {
  const { session, snap, attachImage } = useBrowserSession(backend, conversationId, socketFactory);
  const [draft, setDraft] = useState<string | null>(null);
  const [note, setNote] = useState("");
  const [secret, setSecret] = useState("");

  const state = snap?.state ?? null;
  const conn = snap?.conn ?? { status: "connecting", attempt: 1 };
  const open = conn.status === "open";
  const driving = open && state?.driver === "person";
  const handoff = state?.handoff ?? null;
  const label = connLabel(conn);

  // A new driver: forget what was half-typed in the address bar.
  useEffect(() => setDraft(null), [state?.driver]);

  const send = session ? session.send.bind(session) : () => false;
  const takeControl = () => session?.takeControl();
  const handBack = () => {
    if (session?.handBack(note.trim())) setNote("");
  };
  const markSecret = () => {
    if (secret.length >= MIN_SECRET_LEN && send({ type: "mark_secret", text: secret })) setSecret("");
  };

  return (
    <div className="browser-pane">
      {handoff && (
        <div className="handoff" role="alert" aria-label="The agent asks for you">
          <strong>{state?.driver === "person" ? "The agent is waiting for you" : "The agent asks you to take over the browser"}</strong>
          <span className="handoff-reason">{handoff.reason || "(no reason given)"}</span>
          {state?.driver === "person" ? (
            <span className="hint">Hand back when you are done; your note tells the agent what you did.</span>
          ) : (
            <button type="button" className="primary" disabled={!open} onClick={takeControl}>
              Take control
            </button>
          )}
        </div>
      )}
      <div className="toolbar browser-toolbar" role="toolbar" aria-label="Browser">
        <button type="button" aria-label="Back" title="Back" disabled={!driving} onClick={() => send({ type: "back" })}>
          ←
        </button>
        <button type="button" aria-label="Forward" title="Forward" disabled={!driving} onClick={() => send({ type: "forward" })}>
          →
        </button>
        <button type="button" aria-label="Reload" title="Reload" disabled={!driving} onClick={() => send({ type: "reload" })}>
          ⟳
        </button>
        <form
          className="url-form"
          onSubmit={(e) => {
            e.preventDefault();
            const url = normaliseUrl(draft ?? "");
            if (url && send({ type: "navigate", url })) setDraft(null);
          }}
        >
          <input
            className="mono url-bar"
            aria-label="Address"
            title={driving ? "Enter opens the address" : "Take control to type an address"}
            readOnly={!driving}
            value={draft ?? state?.url ?? ""}
            placeholder={state?.running === false ? "no page yet" : ""}
            onChange={(e) => setDraft(e.target.value)}
            onFocus={(e) => driving && e.currentTarget.select()}
            onBlur={() => setDraft(null)}
            onKeyDown={(e) => {
              if (e.key === "Escape" && draft !== null) {
                e.preventDefault();
                setDraft(null);
              }
            }}
          />
        </form>
        {state?.loading && (
          <span className="page-loading" role="status" aria-label="Page loading">
            loading…
          </span>
        )}
        <span className={`driver driver-${state?.driver ?? "none"}`} role="status" aria-label="Who drives">
          {state?.driver === "person" ? "You drive" : "Agent drives"}
        </span>
        {!driving && (
          <button type="button" disabled={!open} onClick={takeControl} title="Drive the page yourself; the agent waits until you hand back">
            Take control
          </button>
        )}
        <span className={`conn conn-${label.tone}`}>
          <span className="dot" aria-hidden /> {label.text}
        </span>
      </div>
      {state && state.tabs.length > 0 && (
        <div className="browser-tabs" role="toolbar" aria-label="Browser tabs">
          {state.tabs.map((t) => (
            <button
              key={t.id}
              type="button"
              className={`tab${t.active ? " on" : ""}`}
              aria-pressed={t.active}
              disabled={!driving && !t.active}
              title={t.url}
              onClick={() => !t.active && send({ type: "switch_tab", tab_id: t.id })}
            >
              {t.title || t.url || t.id}
            </button>
          ))}
        </div>
      )}
      {driving && (
        <form
          className="handback"
          onSubmit={(e) => {
            e.preventDefault();
            handBack();
          }}
        >
          <input
            aria-label="Note for the agent"
            placeholder="What did you do? (the agent reads this)"
            value={note}
            onChange={(e) => setNote(e.target.value)}
          />
          <button type="submit" className="primary">
            Hand back
          </button>
        </form>
      )}
      {open && (
        <form
          className="mark-secret"
          aria-label="Mark as secret"
          onSubmit={(e) => {
            e.preventDefault();
            markSecret();
          }}
        >
          <input
            type="password"
            autoComplete="off"
            aria-label="Text to keep secret"
            placeholder="A password or token the agent must not see"
            value={secret}
            onChange={(e) => setSecret(e.target.value)}
          />
          <button
            type="submit"
            disabled={secret.length < MIN_SECRET_LEN}
            title={`Wherever the agent or the model would see this text (at least ${MIN_SECRET_LEN} characters), they see <secret-hidden>`}
          >
            Mark as secret
          </button>
        </form>
      )}
      {snap?.error && (
        <div className="error-text browser-error" role="alert">
          {snap.error}{" "}
          <button type="button" className="link" aria-label="Dismiss the error" onClick={() => session?.dismissError()}>
            ✕
          </button>
        </div>
      )}
      <Body conn={conn} running={state?.running ?? null} frame={snap?.frameSize ?? null}>
        {snap?.frameSize && (
          <LiveView
            attachImage={attachImage}
            page={snap.frameSize}
            driving={driving}
            dim={!open}
            send={send}
            label={`The agent's browser: ${state?.title || state?.url || "page"}`}
          />
        )}
      </Body>
      {driving && <div className="hint browser-hint">Click the page to type into it; Ctrl+1…5 moves the focus to another pane.</div>}
    </div>
  );
}

/** The live view, or an honest sentence saying why there is none. */
function Body({
  conn,
  running,
  frame,
  children,
}: {
  conn: BrowserConn;
  running: boolean | null;
  frame: { width: number; height: number } | null;
  children: ReactNode;
}) {
  let message: string | null = null;
  switch (conn.status) {
    case "unauthorized":
      message = "Unauthorized: the session key was refused.";
      break;
    case "not_found":
      message = "This conversation is not on this backend.";
      break;
    case "no_browser_tools":
      message = "This conversation has no browser tools.";
      break;
    case "closed":
      message = "Closed.";
      break;
    case "connecting":
    case "lost":
      if (!frame) message = conn.status === "lost" ? `Cannot reach the browser (${conn.reason}); retrying…` : "Connecting to the browser…";
      break;
    case "open":
      if (running === false) message = "The agent has not opened the browser yet.";
      else if (!frame) message = "Waiting for the first picture of the page…";
      break;
  }
  if (message !== null)
    return (
      <div className="empty live-empty" role="note">
        {message}
        {conn.status === "no_browser_tools" && <div className="hint">Start a conversation with “Browser tools” ticked to let the agent browse.</div>}
      </div>
    );
  return <>{children}</>;
}
