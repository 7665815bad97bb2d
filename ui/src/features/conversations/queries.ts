// Conversation lists per backend, in TanStack Query (server state). Keys carry the backend id
// so switching backends never shows another backend's conversations.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Api } from "../../api/client";
import type { TandemStartFields } from "../../api/tandemTypes";
import type { StartConversationRequest } from "../../api/types";
import { apiFor, type Backend } from "../backends/backendStore";
import { infoQueuedAhead } from "../chat/queue";

/** A conversation as the search route returns it (as openapi-fetch types the response). */
export type ConversationItem = Awaited<ReturnType<Api["searchConversations"]>>["items"][number];

export const conversationsKey = (backendId: string) => ["conversations", backendId] as const;

/** A backend's conversations: up to 500; older ones are reachable through search on the server. */
export async function listConversations(api: Pick<Api, "searchConversations">): Promise<ConversationItem[]> {
  const out: ConversationItem[] = [];
  let page: string | undefined;
  for (let i = 0; i < 5; i++) {
    const res = await api.searchConversations(100, page);
    out.push(...res.items);
    if (!res.next_page_id) break;
    page = res.next_page_id;
  }
  return out;
}

/** How often the list is polled: more often while a run waits in the queue (its place moves without an event). */
export function listPollMs(items: readonly ConversationItem[] | undefined): number {
  return items?.some((c) => infoQueuedAhead(c) !== null) ? 2000 : 5000;
}

export function useConversations(b: Backend | null, enabled: boolean) {
  return useQuery({
    queryKey: conversationsKey(b?.id ?? "none"),
    enabled: Boolean(b) && enabled,
    refetchInterval: (q) => listPollMs(q.state.data),
    retry: false,
    queryFn: () => (b ? listConversations(apiFor(b)) : Promise.resolve([])),
  });
}

export function useConversationMutations(b: Backend | null) {
  const qc = useQueryClient();
  const invalidate = () => qc.invalidateQueries({ queryKey: conversationsKey(b?.id ?? "none") });
  const need = () => {
    if (!b) throw new Error("No backend selected");
    return apiFor(b);
  };
  return {
    create: useMutation({
      mutationFn: (req: StartConversationRequest & TandemStartFields) => need().createConversation(req),
      onSuccess: invalidate,
    }),
    remove: useMutation({ mutationFn: (id: string) => need().deleteConversation(id), onSuccess: invalidate }),
    /** Pauses a running conversation (a sub-agent's child too): upstream's pause route. */
    pause: useMutation({ mutationFn: (id: string) => need().pause(id), onSuccess: invalidate }),
    rename: useMutation({
      mutationFn: ({ id, title }: { id: string; title: string }) => need().renameConversation(id, title),
      onSuccess: invalidate,
    }),
  };
}

export function conversationTitle(c: ConversationItem): string {
  return c.title?.trim() || `Conversation ${c.id.slice(0, 8)}`;
}

export function workspaceDir(c: ConversationItem): string {
  const w = c.workspace as { working_dir?: unknown } | undefined;
  return typeof w?.working_dir === "string" ? w.working_dir : "";
}

export function conversationCost(c: ConversationItem): number {
  const m = c.metrics as { accumulated_cost?: unknown } | null | undefined;
  return typeof m?.accumulated_cost === "number" ? m.accumulated_cost : 0;
}
