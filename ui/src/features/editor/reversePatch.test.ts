import { describe, expect, it } from "vitest";
import { reversePatch } from "./reversePatch";

describe("reversePatch", () => {
  it("recovers the baseline from the current text and a unified diff", () => {
    const diff = "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -6,2 +6,3 @@\n f\n g\n+h\n";
    const current = "a\nB\nc\nd\ne\nf\ng\nh";
    expect(reversePatch(current, diff)).toBe("a\nb\nc\nd\ne\nf\ng");
  });
  it("returns null when the diff does not fit", () => {
    expect(reversePatch("x\ny", "@@ -1,1 +1,1 @@\n-a\n+b\n")).toBeNull();
  });
});
