import { describe, expect, it } from "vitest";
import type { Checkpoint } from "../../api/tandemTypes";
import type { WireEvent } from "../../api/types";
import { initialTimeline, timelineReducer } from "../../store/timeline";
import * as E from "../../test/events";
import { parseUnifiedDiff } from "../timeline/unifiedDiff";
import { agentChangesByEvent, changeSummary, observationCount, observationIdOf, rewindEventIdOf } from "./attribution";

const checkpoint = (o: Partial<Checkpoint>): Checkpoint => ({
  id: "c",
  event_id: "e",
  tree: "t",
  author: "agent",
  added: [],
  modified: [],
  deleted: [],
  timestamp: "2026-11-28T05:00:00Z",
  ...o,
});

describe("attribution line", () => {
  it("counts files with singular and plural right and names only the kinds present", () => {
    expect(changeSummary(checkpoint({ modified: ["a.txt"] }))).toBe("changed 1 file: 1 modified");
    expect(changeSummary(checkpoint({ added: ["a"], modified: ["b"], deleted: ["c"] }))).toBe("changed 3 files: 1 added, 1 modified, 1 deleted");
    expect(changeSummary(checkpoint({ added: ["a", "b"], deleted: ["c"] }))).toBe("changed 3 files: 2 added, 1 deleted");
  });

  it("names changes outside the workspace and whether a rewind can take them back", () => {
    const home = { path: "/home/u/.bashrc", change: "modified", restorable: false } as const;
    const pkg = { path: "/home/u/.local/lib/tool", change: "added", restorable: false } as const;
    expect(changeSummary(checkpoint({ added: ["a"], outside: [home] }))).toBe(
      "changed 1 file: 1 added; and 1 path outside the workspace (not restorable)",
    );
    expect(changeSummary(checkpoint({ outside: [home, pkg] }))).toBe("changed 2 paths outside the workspace (not restorable)");
    expect(changeSummary(checkpoint({ outside: [home, { ...pkg, restorable: true }] }))).toBe(
      "changed 2 paths outside the workspace (1 not restorable)",
    );
    expect([...agentChangesByEvent([checkpoint({ event_id: "obs", outside: [pkg] })]).keys()]).toEqual(["obs"]);
  });

  it("says nothing when nothing changed (lists empty or absent)", () => {
    expect(changeSummary(checkpoint({}))).toBeNull();
    expect(changeSummary({})).toBeNull();
  });

  it("attributes only the agent's checkpoints with changes, by their observation", () => {
    const by = agentChangesByEvent([
      checkpoint({ id: "1", event_id: "obs1", modified: ["a"] }),
      checkpoint({ id: "2", event_id: "obs2" }),
      checkpoint({ id: "3", event_id: "act3", author: "person", modified: ["b"] }),
      checkpoint({ id: "4", event_id: "obs4", author: "rewind", modified: ["a"] }),
    ]);
    expect([...by.keys()]).toEqual(["obs1"]);
  });
});

describe("rows and their events", () => {
  const items = (events: WireEvent[]) => timelineReducer(initialTimeline(), { type: "events", events }).items;

  it("an action with its observation rewinds to the observation; other rows to themselves", () => {
    const a = E.action("echo one > f.txt");
    const o = E.observation(a, "");
    const b = E.action("still running");
    const m = E.agentMessage("done");
    const [done, running, message] = items([a, o, b, m]);
    expect(observationIdOf(done!)).toBe(o.id);
    expect(rewindEventIdOf(done!)).toBe(o.id);
    expect(observationIdOf(running!)).toBeUndefined();
    expect(rewindEventIdOf(running!)).toBe(b.id);
    expect(rewindEventIdOf(message!)).toBe(m.id);
    expect(observationCount(items([a, o, b, m]))).toBe(1);
  });

  it("a rejection is not an observation", () => {
    const a = E.action("rm -rf /");
    const list = items([a, E.rejection(a, "no")]);
    expect(observationIdOf(list[0]!)).toBeUndefined();
    expect(observationCount(list)).toBe(0);
  });
});

describe("unified diff", () => {
  it("reads git's diff into one block per file with line numbers and hunk gaps", () => {
    const text = [
      "diff --git a/notes.txt b/notes.txt",
      "index 1111111..2222222 100644",
      "--- a/notes.txt",
      "+++ b/notes.txt",
      "@@ -1,2 +1,2 @@",
      " keep",
      "-second",
      "+first",
      "@@ -10 +10 @@",
      "-x",
      "+y",
      "\\ No newline at end of file",
      "diff --git a/new.txt b/new.txt",
      "deleted file mode 100644",
      "index 3333333..0000000",
      "--- a/new.txt",
      "+++ /dev/null",
      "@@ -1 +0,0 @@",
      "-gone",
      "diff --git a/img.png b/img.png",
      "Binary files a/img.png and b/img.png differ",
      "",
    ].join("\n");
    const files = parseUnifiedDiff(text);
    expect(files.map((f) => f.path)).toEqual(["notes.txt", "new.txt", "img.png"]);
    expect(files[0]!.rows).toEqual([
      { op: " ", text: "keep", oldNo: 1, newNo: 1 },
      { op: "-", text: "second", oldNo: 2 },
      { op: "+", text: "first", newNo: 2 },
      null,
      { op: "-", text: "x", oldNo: 10 },
      { op: "+", text: "y", newNo: 10 },
    ]);
    expect(files[1]!.rows).toEqual([{ op: "-", text: "gone", oldNo: 1 }]);
    expect(files[2]!.note).toContain("Binary");
  });

  it("reads nothing from an empty diff", () => {
    expect(parseUnifiedDiff("")).toEqual([]);
  });
});
