import { describe, expect, it } from "vitest";
import { initialTimeline, timelineReducer } from "../../store/timeline";
import * as E from "../../test/events";
import { discriminatorValues } from "../../api/tandem.gen";
import type { Action, ActionEvent, ActionKind, WireEvent } from "../../api/types";
import { actionHeadline, browserControlText, browserHeadline, itemText, searchHeadline } from "./describe";
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

/** A call of `tool_name` whose parsed action is `action`. */
const call = (tool_name: string, action: Action | null, summary?: string): ActionEvent => ({
  kind: "ActionEvent",
  id: "a1",
  timestamp: "2026-11-22T12:00:00",
  source: "agent",
  thought: [],
  tool_name,
  tool_call_id: "c1",
  tool_call: { id: "c1", name: tool_name, arguments: "{}", origin: "completion" },
  llm_response_id: "r",
  action,
  ...(summary === undefined ? {} : { summary }),
});

// One call of every known action kind and its headline; a kind without one does not compile.
const headlines: { [K in ActionKind]: [tool: string, action: Extract<Action, { kind: K }>, headline: string] } = {
  TerminalAction: ["terminal", { kind: "TerminalAction", command: "ls -la" }, "ls -la"],
  FileEditorAction: ["file_editor", { kind: "FileEditorAction", command: "view", path: "/w/a.py" }, "view /w/a.py"],
  TaskTrackerAction: ["task_tracker", { kind: "TaskTrackerAction", command: "plan", task_list: [] }, "task_tracker"],
  ThinkAction: ["think", { kind: "ThinkAction", thought: "first the tests" }, "first the tests"],
  FinishAction: ["finish", { kind: "FinishAction", message: "All done." }, "All done."],
  TaskAction: ["task", { kind: "TaskAction", prompt: "Fix it", description: "Fix the bug" }, "general-purpose sub-agent: Fix the bug"],
  GlobAction: ["glob", { kind: "GlobAction", pattern: "**/*.rs" }, "find files **/*.rs"],
  GrepAction: ["grep", { kind: "GrepAction", pattern: "TODO", path: "/w" }, "search for /TODO/ in /w"],
  MCPToolAction: ["fetch_page", { kind: "MCPToolAction", data: { url: "http://a/" } }, "fetch_page"],
  BrowserNavigateAction: ["browser_navigate", { kind: "BrowserNavigateAction", url: "http://a/" }, "open http://a/"],
  BrowserClickAction: ["browser_click", { kind: "BrowserClickAction", index: 3, new_tab: true }, "click element 3 in a new tab"],
  BrowserTypeAction: ["browser_type", { kind: "BrowserTypeAction", index: 2, text: "hi" }, 'type "hi" into element 2'],
  BrowserGetStateAction: ["browser_get_state", { kind: "BrowserGetStateAction", include_screenshot: true }, "read the page's state, with a screenshot"],
  BrowserGetContentAction: ["browser_get_content", { kind: "BrowserGetContentAction" }, "read the page's content"],
  BrowserScrollAction: ["browser_scroll", { kind: "BrowserScrollAction", direction: "up" }, "scroll up"],
  BrowserGoBackAction: ["browser_go_back", { kind: "BrowserGoBackAction" }, "go back"],
  BrowserListTabsAction: ["browser_list_tabs", { kind: "BrowserListTabsAction" }, "list the tabs"],
  BrowserSwitchTabAction: ["browser_switch_tab", { kind: "BrowserSwitchTabAction", tab_id: "7D4F" }, "switch to tab 7D4F"],
  BrowserCloseTabAction: ["browser_close_tab", { kind: "BrowserCloseTabAction", tab_id: "7D4F" }, "close tab 7D4F"],
  BrowserGetStorageAction: ["browser_get_storage", { kind: "BrowserGetStorageAction" }, "read cookies and storage"],
  BrowserSetStorageAction: ["browser_set_storage", { kind: "BrowserSetStorageAction", storage_state: {} }, "restore cookies and storage"],
  BrowserStartRecordingAction: ["browser_start_recording", { kind: "BrowserStartRecordingAction" }, "start recording"],
  BrowserStopRecordingAction: ["browser_stop_recording", { kind: "BrowserStopRecordingAction" }, "stop recording"],
  BrowserRequestHandoffAction: ["browser_request_handoff", { kind: "BrowserRequestHandoffAction", reason: "a captcha" }, "ask you to take over the browser: a captcha"],
};

describe("actionHeadline", () => {
  it.each(discriminatorValues.Action.map((kind) => [kind, ...headlines[kind]] as const))(
    "describes a %s",
    (_kind, tool, action, headline) => {
      expect(actionHeadline(call(tool, action))).toBe(headline);
    },
  );

  it("reads a kind it does not know, or a call that did not parse, from its arguments", () => {
    const upstream = call("execute_bash", JSON.parse('{"kind": "ExecuteBashAction", "path": "/w", "command": "ls"}'));
    expect(actionHeadline(upstream)).toBe("ls /w");
    const unparsed = { ...call("browser_navigate", null), tool_call: { id: "c1", name: "browser_navigate", arguments: '{"url": "http://b/"}', origin: "completion" } };
    expect(actionHeadline(unparsed)).toBe("open http://b/");
    expect(actionHeadline(call("mystery", null, "mystery: x"))).toBe("mystery: x");
  });
});
