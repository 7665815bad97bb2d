import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { ActionEvent } from "../../api/types";
import * as E from "../../test/events";
import { ApprovalPanel } from "./ApprovalPanel";
import { EDIT_REJECT_REASON } from "./policy";
import { PolicySwitch } from "./PolicySwitch";

function fakeApi() {
  return {
    respondToConfirmation: vi.fn(async () => ({ success: true })),
    sendMessage: vi.fn(async () => ({ success: true })),
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
    fireEvent.keyDown(panel, { key: "r" });
    const reason = await screen.findByLabelText("Reason for rejecting");
    // Typing "a" in the reason must not approve.
    fireEvent.keyDown(reason, { key: "a" });
    fireEvent.change(reason, { target: { value: "never delete build" } });
    fireEvent.submit(reason.closest("form")!);
    await waitFor(() => expect(api.respondToConfirmation).toHaveBeenLastCalledWith("c", false, "never delete build"));
    expect(api.respondToConfirmation).toHaveBeenCalledTimes(2);
  });

  it("edit-and-approve rejects the original saying so, then sends the edited command", async () => {
    const api = fakeApi();
    render(<ApprovalPanel api={api} conversationId="c" pending={[pendingAction("rm -rf build")]} />);
    fireEvent.keyDown(screen.getByRole("region", { name: "Pending approval" }), { key: "e" });
    const box = await screen.findByLabelText("Edited action");
    expect((box as HTMLTextAreaElement).value).toBe("rm -rf build");
    fireEvent.change(box, { target: { value: "rm -rf build/tmp" } });
    fireEvent.keyDown(box, { key: "Enter", ctrlKey: true });
    await waitFor(() => expect(api.sendMessage).toHaveBeenCalled());
    expect(api.respondToConfirmation).toHaveBeenCalledWith("c", false, EDIT_REJECT_REASON);
    const [cid, text, run] = api.sendMessage.mock.calls[0] as unknown as [string, string, boolean];
    expect([cid, run]).toEqual(["c", true]);
    expect(text).toContain("rm -rf build/tmp");
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
