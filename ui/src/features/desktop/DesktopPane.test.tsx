import { act, fireEvent, render, screen } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { FakeSocket, fakeSocket } from "../../api/fakeSocket";
import { DesktopPane } from "./DesktopPane";
import { FakeRfb, loadFakeRfb } from "./fakeRfb";

const backend = { baseUrl: "http://127.0.0.1:8000", key: "sk-1" };

async function renderPane() {
  await act(async () => {
    render(<DesktopPane backend={backend} conversationId="c1" loadRfb={loadFakeRfb} socketFactory={fakeSocket} />);
  });
  return { ws: FakeSocket.last(), rfb: FakeRfb.last() };
}

async function connected() {
  const made = await renderPane();
  act(() => {
    made.ws.open();
    made.rfb.emit("connect", {});
  });
  return made;
}

const takeControl = () => screen.getByRole("button", { name: "Take control" });

describe("DesktopPane", () => {
  beforeEach(() => {
    FakeSocket.all = [];
    FakeRfb.all = [];
  });

  it("shows the desktop in the pane, view-only until the person takes control", async () => {
    const { ws, rfb } = await renderPane();
    expect(screen.getByRole("status", { name: "" }).textContent).toBe("Connecting to the desktop…");
    expect(takeControl()).toHaveProperty("disabled", true);
    const screenEl = screen.getByLabelText("The sandbox's desktop");
    expect(rfb.target).toBe(screenEl);
    expect(screenEl.dataset.viewOnly).toBe("true");
    act(() => {
      ws.open();
      rfb.emit("connect", {});
    });
    expect(screen.queryByText("Connecting to the desktop…")).toBeNull();
    expect(screen.getByRole("status", { name: "Who controls the desktop" }).textContent).toBe("View only");
    fireEvent.click(takeControl());
    expect(rfb.viewOnly).toBe(false);
    expect(screenEl.dataset.viewOnly).toBe("false");
    expect(screen.getByRole("status", { name: "Who controls the desktop" }).textContent).toBe("You control the desktop");
    fireEvent.click(screen.getByRole("button", { name: "Release" }));
    expect(rfb.viewOnly).toBe(true);
    expect(screenEl.dataset.viewOnly).toBe("true");
  });

  it("shows what the desktop copies and sends text to its clipboard while in control", async () => {
    const { rfb } = await connected();
    const send = screen.getByRole("button", { name: "Send to desktop" });
    const field = screen.getByLabelText("Text for the desktop's clipboard");
    fireEvent.change(field, { target: { value: "from me" } });
    expect(send).toHaveProperty("disabled", true);
    fireEvent.click(takeControl());
    expect(send).toHaveProperty("disabled", false);
    fireEvent.click(send);
    expect(rfb.pasted).toEqual(["from me"]);
    expect((field as HTMLInputElement).value).toBe("");
    act(() => rfb.emit("clipboard", { text: "from the desktop" }));
    expect((screen.getByLabelText("The desktop's clipboard") as HTMLTextAreaElement).value).toBe("from the desktop");
  });

  it("says when the server has no desktop", async () => {
    const { ws } = await renderPane();
    act(() => {
      ws.open();
      ws.frame({ type: "error", message: "This server has no desktop (TANDEM_VNC_ADDR is not set)" });
      ws.drop(4004);
    });
    const note = screen.getByRole("note");
    expect(note.textContent).toContain("This server has no desktop. Only a Docker sandbox has one.");
    expect(note.textContent).toContain("TANDEM_VNC_ADDR is not set");
    expect(screen.getByLabelText("The sandbox's desktop").hidden).toBe(true);
  });

  it("gives the reason it disconnected and reconnects on request", async () => {
    const { ws } = await connected();
    act(() => ws.drop(1000, "The desktop's VNC server closed the connection"));
    expect(screen.getByRole("alert").textContent).toBe("Disconnected: The desktop's VNC server closed the connection");
    expect(takeControl()).toHaveProperty("disabled", true);
    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: "Reconnect" }));
    });
    expect(FakeSocket.all).toHaveLength(2);
    act(() => {
      FakeSocket.last().open();
      FakeRfb.last().emit("connect", {});
    });
    expect(screen.queryByRole("alert")).toBeNull();
    expect(screen.queryByRole("button", { name: "Reconnect" })).toBeNull();
  });

  it("closes its connection when it unmounts, and opens none if it goes before noVNC loads", async () => {
    let pane: ReturnType<typeof render> | null = null;
    await act(async () => {
      pane = render(<DesktopPane backend={backend} conversationId="c1" loadRfb={loadFakeRfb} socketFactory={fakeSocket} />);
    });
    act(() => pane?.unmount());
    expect(FakeSocket.last().closed).toBe(1000);
    expect(FakeRfb.last().disconnected).toBe(true);

    await act(async () => {
      render(<DesktopPane backend={backend} conversationId="c2" loadRfb={loadFakeRfb} socketFactory={fakeSocket} />).unmount();
    });
    expect(FakeSocket.all).toHaveLength(1);
  });
});
