import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { createApi, type FetchLike } from "../../api/client";
import type { Checkpoint, RewindRequest, RewindResponse } from "../../api/tandemTypes";
import { ChangedFiles } from "./ChangedFiles";
import { RewindDialog } from "./RewindDialog";
import { RewoundNotice } from "./RewoundNotice";

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

/** Checks untrusted JSON is a rewind request (what the dialog posted). */
function isRewindRequest(v: unknown): v is RewindRequest {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A server's rewind route: answers with `answer(request)`, remembers every request body. */
function rewindServer(answer: (req: RewindRequest) => Response) {
  const bodies: RewindRequest[] = [];
  const fetch: FetchLike = async (req) => {
    const url = new URL(req.url);
    if (req.method !== "POST" || url.pathname !== "/api/conversations/c1/rewind") return json({ detail: "Not Found" }, 404);
    const body: unknown = await req.json();
    if (!isRewindRequest(body)) return json({ detail: "bad body" }, 400);
    bodies.push(body);
    return answer(body);
  };
  return { api: createApi({ baseUrl: "http://h", key: null }, fetch), bodies };
}

const DIFF = ["diff --git a/notes.txt b/notes.txt", "--- a/notes.txt", "+++ b/notes.txt", "@@ -1 +1 @@", "-second", "+first", ""].join("\n");

const preview = (o: Partial<RewindResponse> = {}): RewindResponse => ({
  checkpoint_id: "cp1",
  event_id: "obs1",
  restored: [
    { path: "notes.txt", change: "write" },
    { path: "new.txt", change: "delete" },
  ],
  skipped: [{ path: "mine.txt", reason: "edited by a person since this checkpoint (rewind with files: all to restore it too)" }],
  undo_checkpoint_id: null,
  diff: DIFF,
  dry_run: true,
  ...o,
});

describe("rewind dialog", () => {
  it("previews with a dry run and writes nothing until Rewind is pressed", async () => {
    const server = rewindServer((req) => json(req.dry_run ? preview() : { ...preview({ undo_checkpoint_id: "undo1" }), dry_run: false }));
    const onRewound = vi.fn();
    render(<RewindDialog api={server.api} conversationId="c1" eventId="obs1" onClose={() => undefined} onRewound={onRewound} />);
    const restored = await screen.findByRole("region", { name: "Files to restore" });
    expect(restored.textContent).toContain("restore notes.txt");
    expect(restored.textContent).toContain("delete new.txt");
    expect(screen.getByRole("region", { name: "Files left as they are" }).textContent).toContain("mine.txt — edited by a person");
    const diff = screen.getByLabelText("Changes to notes.txt");
    expect(diff.querySelector(".diff-line.del")?.textContent).toContain("second");
    expect(diff.querySelector(".diff-line.add")?.textContent).toContain("first");
    expect(server.bodies).toEqual([{ event_id: "obs1", files: "agent", dry_run: true, restore: "code" }]);
    expect(onRewound).not.toHaveBeenCalled();

    fireEvent.click(screen.getByRole("button", { name: "Rewind" }));
    await waitFor(() => expect(onRewound).toHaveBeenCalledTimes(1));
    expect(server.bodies[1]).toEqual({ event_id: "obs1", files: "agent", restore: "code" });
    expect(onRewound.mock.calls[0]?.[0]).toMatchObject({ undo_checkpoint_id: "undo1", dry_run: false });
  });

  it("previews again with files: all when a person's edits are to be restored too", async () => {
    const server = rewindServer((req) =>
      json(req.files === "all" ? preview({ restored: [...preview().restored, { path: "mine.txt", change: "write" }], skipped: [] }) : preview()),
    );
    render(<RewindDialog api={server.api} conversationId="c1" eventId="obs1" onClose={() => undefined} onRewound={() => undefined} />);
    await screen.findByRole("region", { name: "Files left as they are" });
    fireEvent.click(screen.getByLabelText("Also restore files a person edited"));
    await waitFor(() => expect(screen.getByRole("region", { name: "Files to restore" }).textContent).toContain("mine.txt"));
    expect(screen.queryByRole("region", { name: "Files left as they are" })).toBeNull();
    expect(server.bodies.map((b) => b.files)).toEqual(["agent", "all"]);
    expect(server.bodies.every((b) => b.dry_run === true)).toBe(true);
  });

  it("shows the server's words when the rewind is refused, and stays open", async () => {
    const server = rewindServer((req) =>
      req.dry_run ? json(preview()) : json({ detail: "the agent is running: pause it before rewinding its workspace" }, 409),
    );
    const onRewound = vi.fn();
    render(<RewindDialog api={server.api} conversationId="c1" eventId="obs1" onClose={() => undefined} onRewound={onRewound} />);
    await screen.findByRole("region", { name: "Files to restore" });
    fireEvent.click(screen.getByRole("button", { name: "Rewind" }));
    expect((await screen.findByRole("alert")).textContent).toBe("Cannot rewind: the agent is running: pause it before rewinding its workspace");
    expect(onRewound).not.toHaveBeenCalled();
  });

  it("says why a preview failed (an unknown event) and offers no Rewind", async () => {
    const server = rewindServer(() => json({ detail: [{ loc: ["body", "event_id"], msg: "no event x in this conversation", type: "value_error" }] }, 422));
    render(<RewindDialog api={server.api} conversationId="c1" eventId="x" onClose={() => undefined} onRewound={() => undefined} />);
    expect((await screen.findByRole("alert")).textContent).toBe("Cannot rewind: body.event_id: no event x in this conversation");
    expect(screen.getByRole("button", { name: "Rewind" })).toHaveProperty("disabled", true);
  });

  it("rewinds the conversation alone: says what happens, previews no files, and posts restore: chat", async () => {
    const chat = { ...preview({ restored: [], skipped: [], diff: null }), leaf_event_id: "obs1" };
    const server = rewindServer((req) => json(req.restore === "code" ? preview() : { ...chat, dry_run: req.dry_run === true }));
    const onRewound = vi.fn();
    render(<RewindDialog api={server.api} conversationId="c1" eventId="obs1" onClose={() => undefined} onRewound={onRewound} />);
    await screen.findByRole("region", { name: "Files to restore" });
    fireEvent.click(screen.getByRole("radio", { name: /Conversation/ }));
    const note = screen.getByRole("note", { name: "What happens to the conversation" });
    expect(note.textContent).toContain("the agent's next run continues from here");
    expect(note.textContent).toContain("another branch");
    expect(note.textContent).toContain("The files are not touched.");
    expect(screen.queryByLabelText("Also restore files a person edited")).toBeNull();
    await waitFor(() => expect(server.bodies.length).toBe(2));
    expect(screen.queryByRole("region", { name: "Files to restore" })).toBeNull();
    const rewind = screen.getByRole("button", { name: "Rewind" });
    await waitFor(() => expect(rewind).toHaveProperty("disabled", false));
    fireEvent.click(rewind);
    await waitFor(() => expect(onRewound).toHaveBeenCalledTimes(1));
    expect(server.bodies).toEqual([
      { event_id: "obs1", files: "agent", dry_run: true, restore: "code" },
      { event_id: "obs1", files: "agent", dry_run: true, restore: "chat" },
      { event_id: "obs1", files: "agent", restore: "chat" },
    ]);
  });

  it("rewinds both: previews the files and says the conversation goes back too", async () => {
    const server = rewindServer((req) => json({ ...preview(), leaf_event_id: req.restore === "code" ? null : "obs1" }));
    const onRewound = vi.fn();
    render(<RewindDialog api={server.api} conversationId="c1" eventId="obs1" onClose={() => undefined} onRewound={onRewound} />);
    fireEvent.click(screen.getByRole("radio", { name: /Both/ }));
    await waitFor(() => expect(server.bodies.map((b) => b.restore)).toEqual(["code", "both"]));
    await screen.findByRole("region", { name: "Files to restore" });
    expect(screen.getByRole("note", { name: "What happens to the conversation" }).textContent).toContain("The files go back too");
    fireEvent.click(screen.getByRole("button", { name: "Rewind" }));
    await waitFor(() => expect(onRewound).toHaveBeenCalledTimes(1));
    expect(server.bodies[2]).toEqual({ event_id: "obs1", files: "agent", restore: "both" });
  });

  it("offers a rewind of the conversation even where the files already match", async () => {
    const server = rewindServer(() => json(preview({ restored: [], skipped: [] })));
    render(<RewindDialog api={server.api} conversationId="c1" eventId="obs1" onClose={() => undefined} onRewound={() => undefined} />);
    await screen.findByText(/Nothing to restore/);
    expect(screen.getByRole("button", { name: "Rewind" })).toHaveProperty("disabled", true);
    fireEvent.click(screen.getByRole("radio", { name: /Conversation/ }));
    await waitFor(() => expect(screen.getByRole("button", { name: "Rewind" })).toHaveProperty("disabled", false));
  });

  it("closes on Cancel and on Escape", async () => {
    const server = rewindServer(() => json(preview()));
    const onClose = vi.fn();
    render(<RewindDialog api={server.api} conversationId="c1" eventId="obs1" onClose={onClose} onRewound={() => undefined} />);
    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    fireEvent.keyDown(screen.getByRole("dialog", { name: "Rewind to here" }), { key: "Escape" });
    expect(onClose).toHaveBeenCalledTimes(2);
    await screen.findByRole("region", { name: "Files to restore" });
  });
});

describe("after a rewind", () => {
  it("says how many files it wrote and undoes it by rewinding to the undo checkpoint", async () => {
    const server = rewindServer(() => json({ ...preview({ restored: [{ path: "notes.txt", change: "write" }], skipped: [] }), checkpoint_id: "undo1", dry_run: false }));
    const onFilesChanged = vi.fn();
    const rewound = { ...preview({ undo_checkpoint_id: "undo1" }), dry_run: false };
    render(<RewoundNotice api={server.api} conversationId="c1" rewound={rewound} onFilesChanged={onFilesChanged} onDismiss={() => undefined} />);
    const notice = screen.getByRole("status", { name: "Rewind" });
    expect(notice.textContent).toContain("Rewound 2 files; 1 file left as it was");
    fireEvent.click(screen.getByRole("button", { name: "Undo rewind" }));
    await waitFor(() => expect(notice.textContent).toContain("Rewind undone: 1 file restored"));
    expect(server.bodies).toEqual([{ checkpoint_id: "undo1", restore: "code" }]);
    expect(onFilesChanged).toHaveBeenCalledTimes(1);
    expect(screen.queryByRole("button", { name: "Undo rewind" })).toBeNull();
  });

  it("says the conversation went back after a chat or both rewind, and undoes only the files", () => {
    const server = rewindServer(() => json(preview()));
    const chat = { ...preview({ restored: [], skipped: [], diff: null }), leaf_event_id: "obs1", dry_run: false };
    const { unmount } = render(<RewoundNotice api={server.api} conversationId="c1" rewound={chat} onFilesChanged={() => undefined} onDismiss={() => undefined} />);
    expect(screen.getByRole("status").textContent).toContain("Rewound the conversation to the chosen event; the later events are on another branch");
    expect(screen.queryByRole("button", { name: /Undo/ })).toBeNull();
    unmount();
    const both = { ...preview({ undo_checkpoint_id: "undo1", skipped: [] }), leaf_event_id: "obs1", dry_run: false };
    render(<RewoundNotice api={server.api} conversationId="c1" rewound={both} onFilesChanged={() => undefined} onDismiss={() => undefined} />);
    expect(screen.getByRole("status").textContent).toContain("Rewound 2 files and the conversation to the chosen event");
    expect(screen.getByRole("button", { name: "Undo the files' rewind" })).toBeTruthy();
  });

  it("offers no undo when nothing was written", () => {
    const server = rewindServer(() => json(preview()));
    render(
      <RewoundNotice
        api={server.api}
        conversationId="c1"
        rewound={{ ...preview({ restored: [], skipped: [] }), dry_run: false }}
        onFilesChanged={() => undefined}
        onDismiss={() => undefined}
      />,
    );
    expect(screen.getByRole("status").textContent).toContain("Nothing was rewound");
    expect(screen.queryByRole("button", { name: "Undo rewind" })).toBeNull();
  });
});

describe("what an action changed", () => {
  const cp: Checkpoint = {
    id: "c",
    event_id: "obs",
    tree: "t",
    author: "agent",
    tool_name: "terminal",
    added: ["src/new.ts"],
    modified: ["README.md"],
    deleted: ["old.txt"],
    timestamp: "2026-11-28T05:00:00Z",
  };

  it("is one line that opens to the paths marked by kind", () => {
    render(<ChangedFiles checkpoint={cp} />);
    const line = screen.getByText("changed 3 files: 1 added, 1 modified, 1 deleted");
    const details = line.closest("details");
    expect(details?.open).toBe(false);
    fireEvent.click(line);
    const list = screen.getByRole("list", { name: "Files this action changed" });
    expect([...list.querySelectorAll("li")].map((li) => li.textContent)).toEqual(["A src/new.ts", "M README.md", "D old.txt"]);
    expect(screen.getByLabelText("deleted").textContent).toBe("D");
  });

  it("shows nothing for a checkpoint without changes", () => {
    const { container } = render(<ChangedFiles checkpoint={{ ...cp, added: [], modified: [], deleted: [] }} />);
    expect(container.textContent).toBe("");
  });
});
