import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { ActionEvent } from "../../api/types";
import * as E from "../../test/events";
import { ApiError } from "../../api/errors";
import { ApprovalPanel, EDIT_NEEDS_TANDEM } from "./ApprovalPanel";
import { PolicySwitch } from "./PolicySwitch";

function fakeApi() {
  return {
    respondToConfirmation: vi.fn(async () => ({ success: true })),
    approveEdited: vi.fn(async () => ({ success: true, security_risk: "MEDIUM" as const })),
    run: vi.fn(async () => ({ success: true })),
  };
}
const pendingAction = (cmd = "rm -rf build", risk = "HIGH") => E.action(cmd, risk) as ActionEvent;

describe("ApprovalPanel", () => {
  it("shows the pending action with its risk and full arguments", () => {
    render(<ApprovalPanel api={fakeApi()} conversationId="c" pending={[pendingAction()]} />);
    expect(screen.getByText("high risk")).toBeTruthy();
    expect(screen.getAllByText(/rm -rf build/).length).toBeGreaterThan(0);
    expect(screen.getByLabelText("Arguments").textContent).toContain('"command": "rm -rf build"');
  });

  it("Approve accepts through respond_to_confirmation", async () => {
    const api = fakeApi();
    render(<ApprovalPanel api={api} conversationId="c" pending={[pendingAction()]} />);
    fireEvent.click(screen.getByRole("button", { name: "Approve" }));
    await waitFor(() => expect(api.respondToConfirmation).toHaveBeenCalledWith("c", true));
  });

  it("shortcut a approves, r opens the reason, Enter rejects with it", async () => {
    const api = fakeApi();
    render(<ApprovalPanel api={api} conversationId="c" pending={[pendingAction()]} />);
    const panel = screen.getByRole("region", { name: "Pending approval" });
    fireEvent.keyDown(panel, { key: "a" });
    await waitFor(() => expect(api.respondToConfirmation).toHaveBeenCalledWith("c", true));
    // Keys are ignored while the approval is in flight: wait until the panel takes them again.
    await waitFor(() => expect((screen.getByRole("button", { name: "Approve" }) as HTMLButtonElement).disabled).toBe(false));
    fireEvent.keyDown(panel, { key: "r" });
    const reason = await screen.findByLabelText("Reason for rejecting");
    // Typing "a" in the reason must not approve.
    fireEvent.keyDown(reason, { key: "a" });
    fireEvent.change(reason, { target: { value: "never delete build" } });
    fireEvent.submit(reason.closest("form")!);
    await waitFor(() => expect(api.respondToConfirmation).toHaveBeenLastCalledWith("c", false, "never delete build"));
    expect(api.respondToConfirmation).toHaveBeenCalledTimes(2);
    // By default the agent then goes on, reading the reason.
    await waitFor(() => expect(api.run).toHaveBeenCalledWith("c"));
  });

  it("rejects without resuming when the person unticks 'then let the agent continue'", async () => {
    const api = fakeApi();
    render(<ApprovalPanel api={api} conversationId="c" pending={[pendingAction()]} />);
    fireEvent.click(screen.getByRole("button", { name: "Reject…" }));
    const reason = await screen.findByLabelText("Reason for rejecting");
    fireEvent.click(screen.getByLabelText("then let the agent continue"));
    fireEvent.change(reason, { target: { value: "stop here" } });
    fireEvent.submit(reason.closest("form")!);
    await waitFor(() => expect(api.respondToConfirmation).toHaveBeenCalledWith("c", false, "stop here"));
    expect(api.run).not.toHaveBeenCalled();
  });

  it("edit-and-approve runs the edited command in place of the original through approve_edited", async () => {
    const api = fakeApi();
    const action = pendingAction("rm -rf build");
    render(<ApprovalPanel api={api} conversationId="c" pending={[action]} />);
    fireEvent.keyDown(screen.getByRole("region", { name: "Pending approval" }), { key: "e" });
    const box = await screen.findByLabelText("Edited action");
    expect((box as HTMLTextAreaElement).value).toBe("rm -rf build");
    fireEvent.change(box, { target: { value: "rm -rf build/tmp" } });
    fireEvent.keyDown(box, { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(api.approveEdited).toHaveBeenCalledTimes(1));
    const [cid, actionId, args] = api.approveEdited.mock.calls[0] as unknown as [string, string, Record<string, unknown>];
    expect([cid, actionId]).toEqual(["c", action.id]);
    // The other arguments stay; only the command is the person's.
    expect(args).toMatchObject({ command: "rm -rf build/tmp" });
    // Nothing is rejected and no message asks the agent to re-issue it.
    expect(api.respondToConfirmation).not.toHaveBeenCalled();
    expect(await screen.findByText(/Approved the edited action \(rated medium risk\)/)).toBeTruthy();
    expect(screen.queryByLabelText("Edited action")).toBeNull();
  });

  it("edits other tools' arguments as JSON and refuses text that is not a JSON object", async () => {
    const api = fakeApi();
    const action = { ...pendingAction(), tool_name: "file_editor", action: { kind: "FileEditorAction", command: "view", path: "/w/a.txt" } } as ActionEvent;
    render(<ApprovalPanel api={api} conversationId="c" pending={[action]} />);
    fireEvent.click(screen.getByRole("button", { name: "Edit and approve…" }));
    const box = (await screen.findByLabelText("Edited action")) as HTMLTextAreaElement;
    expect(JSON.parse(box.value)).toEqual({ command: "view", path: "/w/a.txt" });
    fireEvent.change(box, { target: { value: "{not json" } });
    fireEvent.submit(box.closest("form")!);
    expect((await screen.findByRole("alert")).textContent).toContain("not valid JSON");
    expect(api.approveEdited).not.toHaveBeenCalled();
    fireEvent.change(box, { target: { value: '{"command": "view", "path": "/w/b.txt"}' } });
    fireEvent.submit(box.closest("form")!);
    await waitFor(() =>
      expect(api.approveEdited).toHaveBeenCalledWith("c", action.id, { command: "view", path: "/w/b.txt" }),
    );
  });

  it("keeps the edit open with the server's reason when the tool rejects the arguments", async () => {
    const api = fakeApi();
    api.approveEdited.mockRejectedValueOnce(
      new ApiError("invalid", "Rejected by the server (approve the edited action): body.arguments: missing required field `command`", 422),
    );
    render(<ApprovalPanel api={api} conversationId="c" pending={[pendingAction()]} />);
    fireEvent.click(screen.getByRole("button", { name: "Edit and approve…" }));
    const box = await screen.findByLabelText("Edited action");
    fireEvent.submit(box.closest("form")!);
    expect((await screen.findByRole("alert")).textContent).toContain("`command`");
    expect(screen.getByLabelText("Edited action")).toBeTruthy();
  });

  it("says editing needs a Tandem server when the backend has no such route, and approve still works", async () => {
    for (const status of [404, 405]) {
      const api = fakeApi();
      api.approveEdited.mockRejectedValueOnce(new ApiError(status === 404 ? "not_found" : "server", "no route", status));
      const { unmount } = render(<ApprovalPanel api={api} conversationId="c" pending={[pendingAction()]} />);
      fireEvent.click(screen.getByRole("button", { name: "Edit and approve…" }));
      fireEvent.submit((await screen.findByLabelText("Edited action")).closest("form")!);
      expect(await screen.findByText(EDIT_NEEDS_TANDEM)).toBeTruthy();
      expect(screen.queryByRole("alert")).toBeNull();
      expect((screen.getByRole("button", { name: "Edit and approve…" }) as HTMLButtonElement).disabled).toBe(true);
      expect(api.respondToConfirmation).not.toHaveBeenCalled();
      fireEvent.click(screen.getByRole("button", { name: "Approve" }));
      await waitFor(() => expect(api.respondToConfirmation).toHaveBeenCalledWith("c", true));
      unmount();
    }
  });

  it("offers no edit when the server's capabilities lack approve_edited, and approve/reject still work", async () => {
    const api = fakeApi();
    render(<ApprovalPanel api={api} conversationId="c" pending={[pendingAction()]} canEdit={false} />);
    expect(screen.getByText(EDIT_NEEDS_TANDEM)).toBeTruthy();
    expect((screen.getByRole("button", { name: "Edit and approve…" }) as HTMLButtonElement).disabled).toBe(true);
    const panel = screen.getByRole("region", { name: "Pending approval" });
    fireEvent.keyDown(panel, { key: "e" });
    expect(screen.queryByLabelText("Edited action")).toBeNull();
    fireEvent.keyDown(panel, { key: "r" });
    fireEvent.submit((await screen.findByLabelText("Reason for rejecting")).closest("form")!);
    await waitFor(() => expect(api.respondToConfirmation).toHaveBeenCalledWith("c", false, "User rejected the action."));
    expect(api.approveEdited).not.toHaveBeenCalled();
  });

  it("shows a server error instead of failing silently", async () => {
    const api = fakeApi();
    api.respondToConfirmation.mockRejectedValueOnce(new Error("Conflict (approve): already running"));
    render(<ApprovalPanel api={api} conversationId="c" pending={[pendingAction()]} />);
    fireEvent.click(screen.getByRole("button", { name: "Approve" }));
    expect((await screen.findByRole("alert")).textContent).toContain("already running");
  });
});

describe("PolicySwitch", () => {
  it("posts the chosen policy", async () => {
    const api = { setConfirmationPolicy: vi.fn(async () => ({ success: true })) };
    render(<PolicySwitch api={api} conversationId="c" policyKind="NeverConfirm" />);
    fireEvent.change(screen.getByLabelText("Confirmation policy"), { target: { value: "risky" } });
    expect(api.setConfirmationPolicy).toHaveBeenCalledWith("c", { kind: "ConfirmRisky", threshold: "HIGH", confirm_unknown: true });
    fireEvent.change(screen.getByLabelText("Confirmation policy"), { target: { value: "always" } });
    expect(api.setConfirmationPolicy).toHaveBeenLastCalledWith("c", { kind: "AlwaysConfirm" });
  });
});
