import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { Checkpoint } from "../../api/tandemTypes";
import type { WireEvent } from "../../api/types";
import { initialTimeline, timelineReducer } from "../../store/timeline";
import * as E from "../../test/events";
import { llmRetryText } from "./describe";
import { defaultFilter, filterItems } from "./filter";
import { ItemView } from "./ItemView";

const items = (events: WireEvent[]) => timelineReducer(initialTimeline(), { type: "events", events }).items;

describe("timeline rows", () => {
  it("shows a file edit as a diff", () => {
    const a = E.action("edit");
    const obs = {
      ...E.observation(a, "edited"),
      tool_name: "file_editor",
      observation: { kind: "FileEditorObservation", command: "str_replace", path: "/w/a.py", old_content: "x = 1\n", new_content: "x = 2\n", content: [], is_error: false },
    } as unknown as WireEvent;
    const [item] = items([a, obs]);
    render(<ItemView item={item!} pending={false} />);
    expect(screen.getByLabelText("Changes to /w/a.py").textContent).toContain("x = 2");
    expect(document.querySelector(".diff-line.del")?.textContent).toContain("x = 1");
  });

  it("says what an action changed in the workspace when its observation has an agent checkpoint", () => {
    const a = E.action("echo one > notes.txt");
    const obs = E.observation(a, "");
    const [item] = items([a, obs]);
    const changes: Checkpoint = { id: "c1", event_id: obs.id, tree: "t", author: "agent", added: ["notes.txt"], timestamp: "2026-11-28T05:00:00Z" };
    render(<ItemView item={item!} pending={false} changes={changes} />);
    expect(screen.getByText("changed 1 file: 1 added")).toBeTruthy();

    const { container } = render(<ItemView item={item!} pending={false} />);
    expect(container.querySelector(".changed-files")).toBeNull();
  });

  it("names the skills a user message activated", () => {
    const msg = { ...E.userMessage("put it in a docker container and commit with git"), activated_skills: ["docker", "git"] } as unknown as WireEvent;
    const [item] = items([msg]);
    render(<ItemView item={item!} pending={false} />);
    expect(screen.getByTitle("Skills this message activated").textContent).toBe("skills: docker, git");

    const [plain] = items([E.userMessage("hello")]);
    const { container } = render(<ItemView item={plain!} pending={false} />);
    expect(container.querySelector(".badge.skills")).toBeNull();
  });

  it("keeps terminal colours and marks rejections and pending approval", () => {
    const a = E.action("ls --color", "LOW");
    const [done] = items([a, E.observation(a, "\x1b[34mdir\x1b[0m file")]);
    render(<ItemView item={done!} pending={false} />);
    expect((screen.getByText("dir") as HTMLElement).style.color).toBe("var(--ansi-blue)");
    expect(screen.getByText("low risk")).toBeTruthy();

    const b = E.action("rm -rf /", "HIGH");
    const [waiting] = items([b]);
    render(<ItemView item={waiting!} pending />);
    expect(screen.getByText("awaiting approval")).toBeTruthy();
    const [rejected] = items([b, E.rejection(b, "never")]);
    render(<ItemView item={rejected!} pending={false} />);
    expect(screen.getByRole("note").textContent).toContain("Rejected — never");
  });

  it("shows finish's message once, not again as its echoed observation", () => {
    const message = "All tests pass now.";
    const a = {
      ...E.action("finish"),
      tool_name: "finish",
      action: { kind: "FinishAction", message },
      tool_call: { id: "call_f", name: "finish", arguments: JSON.stringify({ message }), origin: "completion" },
    } as unknown as WireEvent;
    const obs = { ...E.observation(a, message), tool_name: "finish", observation: { kind: "FinishObservation", content: [{ type: "text", text: message }], is_error: false } } as unknown as WireEvent;
    const [item] = items([a, obs]);
    const { container } = render(<ItemView item={item!} pending={false} />);
    expect(container.querySelector(".headline")?.textContent).toContain(message);
    expect(container.querySelector(".result")).toBeNull();
  });

  it("shows a browser step with its observation and a screenshot thumbnail that enlarges", () => {
    const a = browserAction("browser_get_state", { include_screenshot: true });
    const obs = browserObservation(a, '{"url": "http://127.0.0.1:9/login.html"}', PNG);
    const [item] = items([a, obs]);
    render(<ItemView item={item!} pending={false} />);
    expect(document.querySelector(".headline")?.textContent).toBe("read the page's state, with a screenshot");
    expect(document.querySelector(".obs-text")?.textContent).toContain("login.html");
    const thumb = screen.getByRole("button", { name: "Enlarge the screenshot: after browser_get_state" });
    expect((thumb.querySelector("img") as HTMLImageElement).src).toBe(`data:image/png;base64,${PNG}`);
    fireEvent.click(thumb);
    const dialog = screen.getByRole("dialog", { name: "Screenshot: after browser_get_state" });
    expect((dialog.querySelector("img.shot-full") as HTMLImageElement).src).toBe(`data:image/png;base64,${PNG}`);
    fireEvent.keyDown(dialog, { key: "Escape" });
    expect(screen.queryByRole("dialog")).toBeNull();
  });

  it("tells a JPEG screenshot by its first bytes, and shows no picture for unknown data", () => {
    const a = browserAction("browser_navigate", { url: "http://127.0.0.1:9/" });
    const [jpeg] = items([a, browserObservation(a, "Navigated", JPEG)]);
    render(<ItemView item={jpeg!} pending={false} />);
    expect((screen.getByRole("img") as HTMLImageElement).src).toBe(`data:image/jpeg;base64,${JPEG}`);
    expect(document.querySelector(".headline")?.textContent).toBe("open http://127.0.0.1:9/");
    const b = browserAction("browser_navigate", { url: "http://127.0.0.1:9/" });
    const [odd] = items([b, browserObservation(b, "Navigated", "R0lGODlh")]);
    const { container } = render(<ItemView item={odd!} pending={false} />);
    expect(container.querySelector("img")).toBeNull();
    expect(container.textContent).toContain("a screenshot in an unknown format");
  });

  it("marks the agent's handoff request as waiting for the person", () => {
    const a = browserAction("browser_request_handoff", { reason: "Please log in" });
    const [item] = items([a]);
    render(<ItemView item={item!} pending={false} />);
    expect(screen.getByText("waiting for you")).toBeTruthy();
    expect(screen.queryByText("running…")).toBeNull();
    expect(document.querySelector(".headline")?.textContent).toBe("ask you to take over the browser: Please log in");
  });

  it("records who took the browser and the note it was handed back with", () => {
    const took = control({ driver: "person", url: "http://127.0.0.1:9/login.html", title: "Log in", reason: "Please log in" });
    const back = control({ driver: "agent", url: "http://127.0.0.1:9/welcome.html", title: "Welcome", note: "Logged in as ann" });
    const [t, b] = items([took, back]);
    const { container } = render(
      <>
        <ItemView item={t!} pending={false} />
        <ItemView item={b!} pending={false} />
      </>,
    );
    expect([...container.querySelectorAll(".browser-control")].map((e) => e.textContent)).toEqual([
      "You took control of the browser at Log in (the agent asked: Please log in)",
      "You handed the browser back: Logged in as ann",
    ]);
  });
});

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const JPEG = "/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAgGBgcGBQgHBwcJCQgKDBQNDAsLDBkSEw8UHRofHh0aHBwgJC4nICIsIxwcKDcpLDAxNDQ0Hyc5PTgyPC4zNDL/";

function browserAction(tool: string, args: Record<string, unknown>): WireEvent {
  const a = E.action(tool) as unknown as Record<string, unknown>;
  const id = `call_${String(a.id)}`;
  return {
    ...a,
    tool_name: tool,
    tool_call_id: id,
    tool_call: { id, name: tool, arguments: JSON.stringify(args), origin: "completion" },
    action: { ...args, kind: "BrowserAction" },
    summary: `${tool}: ${JSON.stringify(args)}`,
  } as unknown as WireEvent;
}

function browserObservation(a: WireEvent, text: string, screenshot: string): WireEvent {
  return {
    ...E.observation(a, text),
    tool_name: (a as { tool_name?: string }).tool_name,
    observation: { kind: "BrowserObservation", content: [{ type: "text", text }], is_error: false, screenshot_data: screenshot },
  } as unknown as WireEvent;
}

function control(value: Record<string, unknown>): WireEvent {
  return { ...E.status("running"), key: "browser_control", value } as unknown as WireEvent;
}

describe("LLM failures", () => {
  const retry = (value: Record<string, unknown>) => ({ ...E.status("running"), key: "llm_retry", value }) as unknown as WireEvent;

  it("shows the retry schedule of a failing LLM call, by default", () => {
    const ev = retry({ model: "openai/gpt", code: "LLMServiceUnavailableError", message: "provider unavailable (HTTP 503): busy", retry: 2, max_retries: 5, wait_seconds: 8 });
    const all = items([ev]);
    render(<ItemView item={all[0]!} pending={false} />);
    const row = screen.getByRole("status");
    expect(row.textContent).toContain("LLM error LLMServiceUnavailableError, retry 2/5 in 8 s");
    expect(row.textContent).toContain("HTTP 503): busy");
    expect(row.textContent).toContain("Pause or interrupt");
    // Shown with the default filter (an error), found by its text.
    expect(filterItems(all, defaultFilter).length).toBe(1);
    expect(filterItems(all, { ...defaultFilter, text: "503" }).length).toBe(1);
    expect(llmRetryText({ code: "LLMRateLimitError", retry: 1, max_retries: 3, wait_seconds: 0.25 })).toBe("LLM error LLMRateLimitError, retry 1/3 in 0.3 s");
    expect(llmRetryText({ code: "x" })).toBeNull();
  });

  it("marks an LLM error that is not retried, with what to do", () => {
    const ev = {
      ...E.status("error"),
      kind: "ConversationErrorEvent",
      code: "LLMConnectionError",
      detail: "cannot reach the LLM at http://llm.invalid/v1: the host name `llm.invalid` does not resolve (check base_url)",
      classification: { kind: "llm", retryable: false, user_action: "fix_config" },
    } as unknown as WireEvent;
    render(<ItemView item={items([ev])[0]!} pending={false} />);
    const row = screen.getByRole("alert");
    expect(row.textContent).toContain("LLM error (not retried)");
    expect(row.textContent).toContain("check base_url");
    expect(row.textContent).toContain("Fix the setting");

    const transient = { ...ev, id: E.nextId(), code: "LLMServiceUnavailableError", classification: { kind: "transient", retryable: true, user_action: "retry" } } as unknown as WireEvent;
    const { container } = render(<ItemView item={items([transient])[0]!} pending={false} />);
    expect(container.textContent).toContain("Conversation error");
    expect(container.querySelector(".permanent")).toBeNull();
  });
  it("shows kinds it does not know (an upstream server's) generically", () => {
    // Untrusted JSON the way an upstream server sends it: its own action, observation and event kinds.
    const wire = (o: object): WireEvent => JSON.parse(JSON.stringify(o));
    const a = wire({ ...E.action("ls"), tool_name: "execute_bash", action: { kind: "ExecuteBashAction", command: "ls", path: "/w" } });
    const obs = wire({ ...E.observation(a, "file.txt"), observation: { kind: "ExecuteBashObservation", content: [{ type: "text", text: "file.txt" }] } });
    const token = wire({ ...E.status("running"), kind: "TokenEvent" });
    const verdict = wire({ ...E.status("running"), kind: "SecurityAnalysisEvent", analyzer: "llm", risks: { a: "HIGH" } });
    const events = [a, obs, token, verdict];
    const [action, other, analysis] = items(events);
    const { container } = render(<ItemView item={action!} pending={false} />);
    expect(container.querySelector(".headline")?.textContent).toBe("ls /w");
    expect(container.querySelector(".obs-text")?.textContent).toBe("file.txt");
    expect(render(<ItemView item={other!} pending={false} />).container.textContent).toBe("TokenEvent");
    expect(render(<ItemView item={analysis!} pending={false} />).container.textContent).toBe("Security analysis (llm): high");
  });
});
