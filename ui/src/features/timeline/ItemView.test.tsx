import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { WireEvent } from "../../api/types";
import { initialTimeline, timelineReducer } from "../../store/timeline";
import * as E from "../../test/events";
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
});
