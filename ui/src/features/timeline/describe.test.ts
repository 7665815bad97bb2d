import { describe, expect, it } from "vitest";
import { initialTimeline, timelineReducer } from "../../store/timeline";
import * as E from "../../test/events";
import type { WireEvent } from "../../api/types";
import { browserControlText, browserHeadline, itemText, searchHeadline } from "./describe";
import { filterItems, defaultFilter } from "./filter";

describe("browserHeadline", () => {
  it("says what each browser tool does, and nothing for other tools", () => {
    expect(browserHeadline("browser_navigate", { url: "http://a/", new_tab: true })).toBe("open http://a/ in a new tab");
    expect(browserHeadline("browser_click", { index: 3 })).toBe("click element 3");
    expect(browserHeadline("browser_type", { index: 2, text: 'ann "x"' })).toBe('type "ann \\"x\\"" into element 2');
    expect(browserHeadline("browser_get_state", {})).toBe("read the page's state");
    expect(browserHeadline("browser_scroll", {})).toBe("scroll down");
    expect(browserHeadline("browser_switch_tab", { tab_id: "7D4F" })).toBe("switch to tab 7D4F");
    expect(browserHeadline("terminal", { command: "ls" })).toBeNull();
  });
});

describe("searchHeadline", () => {
  it("says what glob and grep look for and where, and nothing for other tools", () => {
    expect(searchHeadline("glob", { pattern: "**/*.rs" })).toBe("find files **/*.rs");
    expect(searchHeadline("glob", { pattern: "*.ts", path: "/w/src" })).toBe("find files *.ts in /w/src");
    expect(searchHeadline("grep", { pattern: "fn\\s+main", include: "*.{rs,toml}" })).toBe("search for /fn\\s+main/ in *.{rs,toml} files");
    expect(searchHeadline("grep", { pattern: "TODO", path: "/w" })).toBe("search for /TODO/ in /w");
    expect(searchHeadline("terminal", { pattern: "x" })).toBeNull();
  });
});

describe("browserControlText", () => {
  it("reads the browser_control update, falling back from title to URL", () => {
    expect(browserControlText({ driver: "person", url: "http://a/", title: "" })).toBe("You took control of the browser at http://a/");
    expect(browserControlText({ driver: "agent", url: "http://a/", title: "A", note: "  " })).toBe("You handed the browser back at A");
    expect(browserControlText({ driver: "agent", title: "A", note: "done" })).toBe("You handed the browser back: done");
    expect(browserControlText("person")).toBeNull();
    expect(browserControlText({ driver: "robot" })).toBeNull();
  });

  it("is shown by the default filter and found by text, unlike other state updates", () => {
    const took = { ...E.status("running"), key: "browser_control", value: { driver: "person", url: "u", title: "Log in" } } as unknown as WireEvent;
    const items = timelineReducer(initialTimeline(), { type: "events", events: [E.status("running"), took] }).items;
    const shown = filterItems(items, defaultFilter);
    expect(shown.map((i) => itemText(i))).toEqual(["You took control of the browser at Log in"]);
    expect(filterItems(items, { ...defaultFilter, text: "took control" })).toHaveLength(1);
  });
});
