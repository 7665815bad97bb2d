// The REST client of one backend: openapi-fetch over the generated `paths`, plus the session
// key header and one error mapping (`ApiError`). Each call returns the body or throws.
import createClient from "openapi-fetch";
import { ApiError, errorFromStatus, networkError } from "./errors";
import type {
  ConfirmationPolicy,
  StartConversationRequest,
  WireEvent,
  paths,
} from "./types";
import type {
  ApproveEditedRequest,
  ApproveEditedResponse,
  Budget,
  CheckpointList,
  ConversationInfo,
  ExportConversationRequest,
  ForkConversationRequest,
  ImportConversationOptions,
  ImportedConversation,
  MovedTo,
  RejectHunkRequest,
  RejectHunkResponse,
  ReplayState,
  RewindRequest,
  RewindResponse,
  TandemStartFields,
} from "./tandemTypes";
import type { WorkspaceDiff, WorkspaceFile, WorkspaceTree } from "./workspaceTypes";

/** Where a backend is and how to authenticate to it. */
export interface Connection {
  /** Origin (and optional path prefix) of the agent server, without a trailing slash. */
  baseUrl: string;
  /** Session key sent as `X-Session-API-Key`; null when the server needs none. */
  key: string | null;
}

export type FetchLike = (input: Request) => Promise<Response>;

/** `GET /server_info`: read loosely, since servers differ in what they add. */
export interface ServerInfoView {
  title?: string;
  version?: string;
  /** Tandem addition: the model the server's default profile uses (demo detection). */
  llm_model?: string;
  demo?: boolean;
  capabilities?: string[];
  [k: string]: unknown;
}

export function trimBase(url: string): string {
  return url.trim().replace(/\/+$/, "");
}

export function createApi(conn: Connection, fetchImpl?: FetchLike) {
  const baseUrl = trimBase(conn.baseUrl);
  // Resolve fetch at call time so tests (and the Tauri host) can swap the global.
  const doFetch: FetchLike = fetchImpl ?? ((r) => globalThis.fetch(r));
  const headers: Record<string, string> = conn.key ? { "X-Session-API-Key": conn.key } : {};

  const safeFetch: FetchLike = async (req) => {
    try {
      return await doFetch(req);
    } catch (e) {
      throw networkError(baseUrl, e);
    }
  };
  const client = createClient<paths>({ baseUrl, headers, fetch: safeFetch });

  /** Unwraps an openapi-fetch result: the body, or an ApiError named after `what`. */
  async function unwrap<T>(what: string, p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
    const { data, error, response } = await p;
    if (!response.ok) throw errorFromStatus(response.status, error, what);
    return data as T;
  }

  /** For Tandem routes, which upstream's generated `paths` do not describe (their body types come from tandem.gen.ts). */
  async function raw<T>(what: string, method: string, path: string, body?: unknown): Promise<T> {
    const init: RequestInit = { method, headers: { ...headers } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      (init.headers as Record<string, string>)["Content-Type"] = "application/json";
    }
    const res = await safeFetch(new Request(`${baseUrl}${path}`, init));
    const parsed = await readBody(res);
    if (!res.ok) throw errorFromStatus(res.status, parsed, what);
    return parsed as T;
  }

  const cid = (id: string) => ({ path: { conversation_id: id } });
  const enc = encodeURIComponent;

  return {
    baseUrl,
    key: conn.key,

    async serverInfo(): Promise<ServerInfoView> {
      const res = await safeFetch(new Request(`${baseUrl}/server_info`, { headers }));
      if (!res.ok) throw errorFromStatus(res.status, undefined, "server info");
      const body: unknown = await res.json().catch(() => undefined);
      if (typeof body !== "object" || body === null) {
        throw new ApiError("not_agent_server", `${baseUrl} answered, but not like an agent server`);
      }
      return body as ServerInfoView;
    },

    searchConversations(limit = 100, pageId?: string){
      return unwrap(
        "list conversations",
        client.GET("/api/conversations/search", { params: { query: { limit, page_id: pageId ?? null } } }),
      );
    },

    getConversation(id: string){
      return unwrap("get conversation", client.GET("/api/conversations/{conversation_id}", { params: cid(id) }));
    },

    /** Tandem servers also read `budget` (422 naming `budget.max_cost` / `budget.max_tokens` at 0 or less). */
    createConversation(body: StartConversationRequest & TandemStartFields){
      return unwrap("create conversation", client.POST("/api/conversations", { body }));
    },

    deleteConversation(id: string): Promise<unknown> {
      return unwrap("delete conversation", client.DELETE("/api/conversations/{conversation_id}", { params: cid(id) }));
    },

    renameConversation(id: string, title: string): Promise<unknown> {
      return unwrap(
        "rename conversation",
        client.PATCH("/api/conversations/{conversation_id}", { params: cid(id), body: { title } }),
      );
    },

    sendMessage(id: string, text: string, run: boolean): Promise<unknown> {
      return unwrap(
        "send message",
        client.POST("/api/conversations/{conversation_id}/events", {
          params: cid(id),
          body: { role: "user", content: [{ type: "text", text }], run },
        }),
      );
    },

    run(id: string): Promise<unknown> {
      return unwrap("run", client.POST("/api/conversations/{conversation_id}/run", { params: cid(id) }));
    },
    pause(id: string): Promise<unknown> {
      return unwrap("pause", client.POST("/api/conversations/{conversation_id}/pause", { params: cid(id) }));
    },
    interrupt(id: string): Promise<unknown> {
      return unwrap("interrupt", client.POST("/api/conversations/{conversation_id}/interrupt", { params: cid(id) }));
    },

    respondToConfirmation(id: string, accept: boolean, reason?: string): Promise<unknown> {
      return unwrap(
        accept ? "approve" : "reject",
        client.POST("/api/conversations/{conversation_id}/events/respond_to_confirmation", {
          params: cid(id),
          body: reason === undefined ? { accept } : { accept, reason },
        }),
      );
    },

    /**
     * Tandem: the pending action `actionId` runs once with `args` in place of what the agent
     * proposed; the other pending actions keep waiting. An upstream server answers 404/405.
     */
    approveEdited(id: string, actionId: string, args: Record<string, unknown>): Promise<ApproveEditedResponse> {
      const body: ApproveEditedRequest = { action_id: actionId, arguments: args };
      return raw("approve the edited action", "POST", `/api/conversations/${enc(id)}/events/approve_edited`, body);
    },

    /**
     * A new conversation with this one's events (up to and including `from_event_id` when given),
     * its LLM and settings; 201 with the fork's info. Tandem adds `workspace: restore` (the files
     * as they were at that event). 404 naming an unknown event, 409 for an id that exists, 422
     * naming a bad field.
     */
    fork(id: string, body: ForkConversationRequest): Promise<ConversationInfo> {
      return raw("fork", "POST", `/api/conversations/${enc(id)}/fork`, body);
    },

    /** Tandem: what the conversation may spend before its run pauses (absent: no limit). An upstream server answers 404. */
    budget(id: string): Promise<Budget> {
      return raw("budget", "GET", `/api/conversations/${enc(id)}/budget`);
    },
    /**
     * Tandem: sets both limits (an absent one is none) and answers the budget. A run paused on
     * its budget may run again once it is raised (the state's `budget_reached` turns null);
     * 422 naming `max_cost` or `max_tokens` for 0 or less.
     */
    setBudget(id: string, budget: Budget): Promise<Budget> {
      return raw("set the budget", "PUT", `/api/conversations/${enc(id)}/budget`, budget);
    },

    setConfirmationPolicy(id: string, policy: ConfirmationPolicy): Promise<unknown> {
      return unwrap(
        "set confirmation policy",
        client.POST("/api/conversations/{conversation_id}/confirmation_policy", { params: cid(id), body: { policy } }),
      );
    },

    async searchEvents(id: string, pageId?: string, limit = 100): Promise<{ items: WireEvent[]; next_page_id: string | null }> {
      const page = await unwrap(
        "load events",
        client.GET("/api/conversations/{conversation_id}/events/search", {
          params: { ...cid(id), query: { limit, page_id: pageId ?? null } },
        }),
      );
      return readEventPage(page);
    },

    workspaceTree(id: string): Promise<WorkspaceTree> {
      return raw("workspace tree", "GET", `/api/conversations/${enc(id)}/workspace/tree`);
    },
    readFile(id: string, path: string): Promise<WorkspaceFile> {
      return raw("open file", "GET", `/api/conversations/${enc(id)}/workspace/file?path=${enc(path)}`);
    },
    writeFile(id: string, path: string, content: string, expectedMtimeMs: number | null): Promise<WorkspaceFile> {
      return raw("save file", "PUT", `/api/conversations/${enc(id)}/workspace/file`, {
        path,
        content,
        expected_mtime_ms: expectedMtimeMs,
      });
    },
    workspaceDiff(id: string): Promise<WorkspaceDiff> {
      return raw("workspace changes", "GET", `/api/conversations/${enc(id)}/workspace/diff`);
    },
    /**
     * Tandem: reverts one hunk of a file's changes on disk (all of an added file removes it) and
     * tells the agent at its next step which hunk and why. `hunk` is the hunk as the file's
     * `workspaceDiff` shows it; 409 when it is no longer there (the file changed), 422 naming
     * the field for a malformed hunk, a long reason or a binary file.
     */
    rejectHunk(id: string, body: RejectHunkRequest): Promise<RejectHunkResponse> {
      return raw("reject the hunk", "POST", `/api/conversations/${enc(id)}/workspace/reject-hunk`, body);
    },
    /** Tandem: the workspace's checkpoints, oldest first, with who changed which paths. An upstream server answers 404. */
    checkpoints(id: string): Promise<CheckpointList> {
      return raw("checkpoints", "GET", `/api/conversations/${enc(id)}/checkpoints`);
    },
    /**
     * Tandem: the workspace as it was at an event or a checkpoint; with `dry_run` only what would
     * be written, and the diff. 409 while the agent runs or without checkpoints, 422 for an
     * unknown event or checkpoint.
     */
    rewind(id: string, body: RewindRequest): Promise<RewindResponse> {
      return raw("rewind", "POST", `/api/conversations/${enc(id)}/rewind`, body);
    },
    /** Tandem: what the panes showed as of an event (a lane with nothing recorded by then is null). 422 naming an unknown event. */
    replay(id: string, eventId: string): Promise<ReplayState> {
      return raw("replay", "GET", `/api/conversations/${enc(id)}/replay?event_id=${enc(eventId)}`);
    },
    /**
     * Tandem: the conversation's capsule, to import on another server. 409 while it runs or an
     * action waits for approval (`force` pauses it at the end of the step and rejects them), or
     * once it moved away.
     */
    async exportCapsule(id: string, body: ExportConversationRequest): Promise<Blob> {
      const res = await safeFetch(
        new Request(`${baseUrl}/api/conversations/${enc(id)}/export`, {
          method: "POST",
          headers: { ...headers, "Content-Type": "application/json" },
          body: JSON.stringify(body),
        }),
      );
      if (!res.ok) throw errorFromStatus(res.status, await readBody(res), "export");
      return res.blob();
    },
    /** Tandem: a capsule from another server becomes a conversation here (the same id, paused where it was). */
    async importCapsule(capsule: Blob, options: ImportConversationOptions): Promise<ImportedConversation> {
      const form = new FormData();
      form.append("capsule", capsule, "conversation.tandem-capsule");
      form.append("options", JSON.stringify(options));
      const res = await safeFetch(new Request(`${baseUrl}/api/conversations/import`, { method: "POST", headers: { ...headers }, body: form }));
      const parsed = await readBody(res);
      if (!res.ok) throw errorFromStatus(res.status, parsed, "import");
      return parsed as ImportedConversation;
    },
    /** Tandem: the conversation continues at `url` (as `conversation_id`); here it becomes a read-only record. */
    markMoved(id: string, to: MovedTo): Promise<MovedTo> {
      return raw("mark moved", "POST", `/api/conversations/${enc(id)}/moved`, to);
    },
    /** Tandem: where a conversation that moved away went, and the workspace commit this server still holds for a move back (`workspace_base`). */
    movedRecord(id: string): Promise<MovedTo> {
      return raw("moved record", "GET", `/api/conversations/${enc(id)}/moved`);
    },
    /** Tandem: ends a move toward this server: accepted, the arriving conversation runs here; rejected, its copy is deleted. */
    async arrival(id: string, accept: boolean): Promise<void> {
      await raw("arrival", "POST", `/api/conversations/${enc(id)}/arrival`, { accept });
    },
    /** Tandem: a recorded browser frame (a JPEG), by the `frame_id` a ReplayState names. */
    async replayFrame(id: string, frameId: string): Promise<Blob> {
      const res = await safeFetch(new Request(`${baseUrl}/api/conversations/${enc(id)}/replay/frames/${enc(frameId)}`, { headers }));
      if (!res.ok) throw errorFromStatus(res.status, await readBody(res), "browser frame");
      return res.blob();
    },
  };
}

export type Api = ReturnType<typeof createApi>;

/** A response's body: its JSON, else its text (kept for the error message). */
async function readBody(res: Response): Promise<unknown> {
  const text = await res.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

/**
 * Upstream documents the events page as untyped; read `{items, next_page_id}` defensively and
 * keep only objects that look like events (an id and a kind). `isEventLike` is the boundary where
 * untrusted JSON becomes `WireEvent`; consumers switch on `kind` and show kinds they do not know
 * generically (api/kinds.ts).
 */
export function readEventPage(body: unknown): { items: WireEvent[]; next_page_id: string | null } {
  if (typeof body !== "object" || body === null) throw new ApiError("not_agent_server", "Malformed events page");
  const items = "items" in body ? body.items : undefined;
  const next_page_id = "next_page_id" in body ? body.next_page_id : undefined;
  if (!Array.isArray(items)) throw new ApiError("not_agent_server", "Malformed events page (no items)");
  return {
    items: items.filter(isEventLike),
    next_page_id: typeof next_page_id === "string" ? next_page_id : null,
  };
}

/** Whether untrusted JSON is an event: an object with a string `id` and `kind`. */
export function isEventLike(v: unknown): v is WireEvent {
  return typeof v === "object" && v !== null && "id" in v && typeof v.id === "string" && "kind" in v && typeof v.kind === "string";
}

/** `ws(s)://…` for a path on the backend. */
export function socketUrl(baseUrl: string, path: string): string {
  const u = new URL(trimBase(baseUrl) + path);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  return u.toString();
}
