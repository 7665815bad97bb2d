// Settings: the MCP servers of the active backend. Add (stdio: command, arguments, environment;
// HTTP/SSE: URL, headers), edit, remove, and Test, which asks that backend to start the server
// and list its tools. New conversations on the backend get these servers as `mcp_config`.
import { useState } from "react";
import { ApiError, messageOf } from "../../api/errors";
import { useActiveBackend, type Backend } from "../backends/backendStore";
import { KeyringWarning } from "./KeyringWarning";
import { testMcpServer, type McpTestResult } from "./mcpApi";
import {
  draftOf,
  emptyDraft,
  KEEP_SECRET,
  parseDraft,
  serverSummary,
  splitSecrets,
  testSpec,
  type McpDraft,
  type McpServer,
  type McpTransport,
} from "./mcpServers";
import { loadSecrets, useMcp, useMcpServers } from "./mcpStore";
import "./mcp.css";

/** A test's progress and outcome, as shown under a server or the form. */
export type TestState = { status: "testing" } | { status: "done"; result: McpTestResult } | { status: "failed"; message: string };

const KIND_LABEL: Record<string, string> = {
  timeout: "Timed out",
  connection: "Could not connect",
  unknown: "Failed",
};

/** The outcome of a test: the server's tool names, or the kind of failure and its message. */
export function McpTestResultView({ state }: { state: TestState }) {
  if (state.status === "testing") return <div className="mcp-test muted" role="status">Testing… (starting the server and listing its tools)</div>;
  if (state.status === "failed")
    return (
      <div className="mcp-test bad" role="alert">
        <strong>Test not run:</strong> {state.message}
      </div>
    );
  const r = state.result;
  if (!r.ok)
    return (
      <div className="mcp-test bad" role="alert">
        <strong>{KIND_LABEL[r.errorKind] ?? "Failed"}</strong> <span className="badge">{r.errorKind}</span> {r.error}
      </div>
    );
  return (
    <div className="mcp-test good" role="status">
      <strong>
        ✓ Connected: {r.tools.length} tool{r.tools.length === 1 ? "" : "s"}
      </strong>
      {r.tools.length > 0 && (
        <ul className="mcp-tools" aria-label="Tools">
          {r.tools.map((t) => (
            <li key={t} className="mono">
              {t}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

async function runTest(backend: Backend, server: McpServer, secrets: Parameters<typeof testSpec>[1], set: (s: TestState) => void) {
  set({ status: "testing" });
  try {
    set({ status: "done", result: await testMcpServer(backend, server.name, testSpec(server, secrets)) });
  } catch (e) {
    const noRoute = e instanceof ApiError && e.kind === "not_found";
    set({ status: "failed", message: noRoute ? "This backend has no MCP test route (POST /api/mcp/test answered 404); it may be an older server." : messageOf(e) });
  }
}

function ServerForm({ backend, editing, onDone }: { backend: Backend; editing: McpServer | null; onDone(): void }) {
  const servers = useMcpServers(backend.id);
  const save = useMcp((s) => s.save);
  const [draft, setDraft] = useState<McpDraft>(() => (editing ? draftOf(editing) : emptyDraft));
  const [error, setError] = useState<string | null>(null);
  const [test, setTest] = useState<TestState | null>(null);
  const others = servers.filter((s) => s.name !== editing?.name).map((s) => s.name);
  const field = (k: keyof McpDraft) => ({
    value: draft[k],
    onChange: (e: { target: { value: string } }) => setDraft({ ...draft, [k]: e.target.value }),
  });
  const hasKept = draft.env.includes(KEEP_SECRET) || draft.headers.includes(KEEP_SECRET);

  const testDraft = async () => {
    setError(null);
    try {
      const { server, kept } = parseDraft(draft, others);
      const old = editing ? await loadSecrets(backend.id, editing) : null;
      const split = splitSecrets(server, kept, old);
      await runTest(backend, split.server, split.secrets, setTest);
    } catch (e) {
      setError(messageOf(e));
    }
  };

  return (
    <form
      className="mcp-form"
      aria-label={editing ? `Edit MCP server ${editing.name}` : "Add MCP server"}
      onSubmit={(e) => {
        e.preventDefault();
        setError(null);
        let parsed: ReturnType<typeof parseDraft>;
        try {
          parsed = parseDraft(draft, others);
        } catch (err) {
          setError(messageOf(err));
          return;
        }
        save(backend.id, parsed.server, parsed.kept, editing?.name ?? null)
          .then(() => {
            setDraft(emptyDraft);
            setTest(null);
            onDone();
          })
          .catch((err: unknown) => setError(messageOf(err)));
      }}
    >
      <div className="grid-form">
        <input aria-label="MCP server name" placeholder="Name, e.g. filesystem" {...field("name")} />
        <select aria-label="Transport" value={draft.transport} onChange={(e) => setDraft({ ...draft, transport: e.target.value as McpTransport })}>
          <option value="stdio">stdio (a local command)</option>
          <option value="http">Streamable HTTP</option>
          <option value="sse">SSE (legacy)</option>
        </select>
        {draft.transport === "stdio" ? (
          <>
            <input aria-label="Command" className="mono" placeholder="Command, e.g. npx" {...field("command")} />
            <input aria-label="Arguments" className="mono" placeholder="Arguments, e.g. -y @modelcontextprotocol/server-everything" {...field("args")} />
          </>
        ) : (
          <input aria-label="URL" className="mono span2" placeholder="http://127.0.0.1:3001/mcp" {...field("url")} />
        )}
      </div>
      {draft.transport === "stdio" ? (
        <textarea aria-label="Environment" className="mono" rows={2} placeholder='Environment (JSON), e.g. {"API_TOKEN": "…"}' {...field("env")} />
      ) : (
        <textarea aria-label="Headers" className="mono" rows={2} placeholder='Headers (JSON), e.g. {"Authorization": "Bearer …"}' {...field("headers")} />
      )}
      <p className="hint">
        Values that look like keys or tokens are kept in the keyring and not shown again
        {hasKept ? `; leave ${KEEP_SECRET} to keep a saved one` : ""}.
      </p>
      <div className="row">
        <button type="button" onClick={() => void testDraft()} disabled={test?.status === "testing"}>
          Test
        </button>
        <button type="submit" className="primary">
          {editing ? "Update server" : "Add server"}
        </button>
        {editing && (
          <button type="button" onClick={onDone}>
            Cancel
          </button>
        )}
      </div>
      {error && (
        <div className="error-text" role="alert">
          {error}
        </div>
      )}
      {test && <McpTestResultView state={test} />}
    </form>
  );
}

function ServerRow({ backend, server, onEdit }: { backend: Backend; server: McpServer; onEdit(): void }) {
  const remove = useMcp((s) => s.remove);
  const [test, setTest] = useState<TestState | null>(null);
  const [error, setError] = useState<string | null>(null);
  const secrets = server.secretNames.length;
  return (
    <li aria-label={`MCP server ${server.name}`}>
      <div className="row">
        <strong>{server.name}</strong>
        <span className="badge">{server.transport}</span>
        <span className="mono muted mcp-summary" title={serverSummary(server)}>
          {serverSummary(server)}
        </span>
        {secrets > 0 && (
          <span className="badge" title={server.secretNames.join(", ")}>
            {secrets} secret{secrets === 1 ? "" : "s"} in keyring
          </span>
        )}
        <span className="mcp-actions">
          <button
            type="button"
            className="link"
            disabled={test?.status === "testing"}
            onClick={() => {
              setError(null);
              void loadSecrets(backend.id, server).then((sec) => runTest(backend, server, sec, setTest));
            }}
          >
            test
          </button>
          <button type="button" className="link" onClick={onEdit}>
            edit
          </button>
          <button
            type="button"
            className="link danger"
            onClick={() => {
              setError(null);
              remove(backend.id, server.name).catch((err: unknown) => setError(messageOf(err)));
            }}
          >
            remove
          </button>
        </span>
      </div>
      {error && <div className="error-text">{error}</div>}
      {test && <McpTestResultView state={test} />}
    </li>
  );
}

export function McpServersSection() {
  const backend = useActiveBackend();
  const servers = useMcpServers(backend?.id ?? null);
  const [editing, setEditing] = useState<string | null>(null);
  if (!backend) return null;
  const name = backend.kind === "local" ? "the local engine" : backend.name;
  const edited = servers.find((s) => s.name === editing) ?? null;
  return (
    <section aria-label="MCP servers">
      <h3>
        MCP servers <span className="muted">on {name}</span>
      </h3>
      <p className="hint">
        New conversations on this backend get these servers' tools. The backend runs them: a stdio command starts on its machine
        {backend.kind === "sandbox" ? " (inside the sandbox)" : ""}.
      </p>
      <KeyringWarning />
      <ul className="plain mcp-list">
        {servers.map((s) => (
          <ServerRow key={s.name} backend={backend} server={s} onEdit={() => setEditing(s.name)} />
        ))}
        {servers.length === 0 && <li className="muted">No MCP servers on this backend.</li>}
      </ul>
      {/* Keyed so switching between add and edit (or between servers) starts a fresh form. */}
      <ServerForm key={`${backend.id}:${edited?.name ?? ""}`} backend={backend} editing={edited} onDone={() => setEditing(null)} />
    </section>
  );
}
