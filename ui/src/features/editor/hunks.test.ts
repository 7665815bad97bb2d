import { describe, expect, it } from "vitest";
import { acceptedId, hunkFingerprint, loadAccepted, revealLine, saveAccepted, splitHunks } from "./hunks";

const DIFF = [
  "--- a/notes.txt",
  "+++ b/notes.txt",
  "@@ -1,3 +1,3 @@",
  " line 1",
  "-line 2",
  "+line two",
  " line 3",
  "@@ -24,3 +24,3 @@ section",
  " line 24",
  "-line 25",
  "+line twenty-five",
  " line 26",
  "",
].join("\n");

describe("hunks of a file's diff", () => {
  it("are the text from each @@ line to the next, byte for byte", () => {
    const hunks = splitHunks(DIFF);
    expect(hunks.map((h) => h.text)).toEqual([
      "@@ -1,3 +1,3 @@\n line 1\n-line 2\n+line two\n line 3\n",
      "@@ -24,3 +24,3 @@ section\n line 24\n-line 25\n+line twenty-five\n line 26\n",
    ]);
    // Together they are the diff after its file header.
    expect(hunks.map((h) => h.text).join("")).toBe(DIFF.slice(DIFF.indexOf("@@")));
  });

  it("count the lines added and removed and preview the first changed ones", () => {
    const [first, second] = splitHunks(DIFF);
    expect(first).toMatchObject({ header: "@@ -1,3 +1,3 @@", oldStart: 1, newStart: 1, added: 1, removed: 1, preview: ["-line 2", "+line two"] });
    expect(second).toMatchObject({ header: "@@ -24,3 +24,3 @@ section", oldStart: 24, newStart: 24 });
  });

  it("keep a last hunk without a final newline and the no-newline marker", () => {
    const diff = "@@ -0,0 +1,5 @@\n+a\n+b\n+c\n+d\n+e\n\\ No newline at end of file";
    const [h] = splitHunks(diff);
    expect(h?.text).toBe(diff);
    expect(h).toMatchObject({ added: 5, removed: 0, preview: ["+a", "+b", "+c"], newStart: 1 });
  });

  it("are none for an empty diff or one without hunks", () => {
    expect(splitHunks("")).toEqual([]);
    expect(splitHunks("Binary files differ\n")).toEqual([]);
  });

  it("are shown at their first line, a deletion at the top at line 1", () => {
    expect(revealLine(splitHunks("@@ -1,2 +0,0 @@\n-a\n-b\n")[0]!)).toBe(1);
    expect(revealLine(splitHunks(DIFF)[1]!)).toBe(24);
  });
});

describe("accepted hunks", () => {
  it("are told apart by path and text, not by trailing newlines", () => {
    const [a, b] = splitHunks(DIFF);
    expect(acceptedId("notes.txt", a!.text)).not.toBe(acceptedId("notes.txt", b!.text));
    expect(acceptedId("notes.txt", a!.text)).not.toBe(acceptedId("other.txt", a!.text));
    expect(hunkFingerprint(a!.text)).toBe(hunkFingerprint(a!.text.replace(/\n$/, "")));
  });

  it("are kept per conversation and survive a reload", () => {
    saveAccepted("c1", new Set(["x", "y"]));
    expect([...loadAccepted("c1")]).toEqual(["x", "y"]);
    expect(loadAccepted("c2").size).toBe(0);
    saveAccepted("c1", new Set());
    expect(localStorage.getItem("tandem:accepted-hunks:c1")).toBeNull();
  });

  it("load as none from storage holding something else", () => {
    localStorage.setItem("tandem:accepted-hunks:c1", "{not json");
    expect(loadAccepted("c1").size).toBe(0);
    localStorage.setItem("tandem:accepted-hunks:c1", JSON.stringify({ a: 1 }));
    expect(loadAccepted("c1").size).toBe(0);
  });
});
