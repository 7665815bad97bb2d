import { act, fireEvent, render, screen } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { FakeSocket, fakeSocket } from "../../api/fakeSocket";
import { BrowserPane, normaliseUrl } from "./BrowserPane";
import { agentState, jpegFrame } from "./testFrames";

const backend = { baseUrl: "http://127.0.0.1:8000", key: "sk-1" };

function renderPane() {
  render(<BrowserPane backend={backend} conversationId="c1" socketFactory={fakeSocket} />);
  const ws = FakeSocket.last();
  act(() => ws.open());
  return ws;
}

const serve = (ws: FakeSocket, v: unknown) => act(() => ws.frame(v));

describe("BrowserPane", () => {
  beforeEach(() => {
    FakeSocket.all = [];
  });

  it("says honestly what there is to see", () => {
    const ws = renderPane();
    expect(screen.getByRole("note").textContent).toBe("Connecting to the browser…");
    serve(ws, agentState({ running: false, url: "", tabs: [] }));
    expect(screen.getByRole("note").textContent).toBe("The agent has not opened the browser yet.");
    expect(screen.getByRole("status", { name: "Who drives" }).textContent).toBe("Agent drives");
    serve(ws, agentState());
    expect(screen.getByRole("note").textContent).toBe("Waiting for the first picture of the page…");
    serve(ws, jpegFrame());
    expect(screen.queryByRole("note")).toBeNull();
    const img = screen.getByRole("img") as HTMLImageElement;
    expect(img.src).toBe("data:image/jpeg;base64,/9j/4AAQSkZJRg==");
    expect(img.dataset.pageWidth).toBe("1280");
    expect((screen.getByLabelText("Address") as HTMLInputElement).value).toBe("http://127.0.0.1:9/index.html");
    expect((screen.getByLabelText("Address") as HTMLInputElement).readOnly).toBe(true);
    expect(screen.queryByRole("status", { name: "Page loading" })).toBeNull();
    // The page loads (whoever started it): the pane says so until it has.
    serve(ws, agentState({ loading: true }));
    expect(screen.getByRole("status", { name: "Page loading" }).textContent).toBe("loading…");
    serve(ws, agentState({ loading: false }));
    expect(screen.queryByRole("status", { name: "Page loading" })).toBeNull();
  });

  it("explains a conversation without browser tools", () => {
    const ws = renderPane();
    serve(ws, { type: "error", message: "this conversation has no browser tools" });
    act(() => ws.drop(4004));
    expect(screen.getByRole("note").textContent).toContain("This conversation has no browser tools");
  });

  it("shows the agent's handoff request with a Take control that hands the wheel over", () => {
    const ws = renderPane();
    serve(ws, agentState({ handoff: { reason: "Please log in" } }));
    serve(ws, jpegFrame());
    const banner = screen.getByRole("alert", { name: "The agent asks for you" });
    expect(banner.textContent).toContain("Please log in");
    // Nothing the person does reaches the page while the agent drives.
    fireEvent.mouseDown(screen.getByRole("img"), { clientX: 5, clientY: 5 });
    fireEvent.mouseUp(screen.getByRole("img"), { clientX: 5, clientY: 5 });
    expect(ws.frames().map((f) => f.type)).toEqual(["auth"]);

    fireEvent.click(banner.querySelector("button")!);
    expect(ws.frames().pop()).toEqual({ type: "take_control" });
    serve(ws, agentState({ driver: "person", handoff: { reason: "Please log in" } }));
    expect(screen.getByRole("status", { name: "Who drives" }).textContent).toBe("You drive");
    expect(screen.getByRole("alert", { name: "The agent asks for you" }).textContent).toContain("The agent is waiting for you");
    // The keyboard goes to the page at once.
    expect(document.activeElement).toBe(screen.getByLabelText("Type into the page"));

    fireEvent.change(screen.getByLabelText("Note for the agent"), { target: { value: "Logged in as ann" } });
    fireEvent.click(screen.getByRole("button", { name: "Hand back" }));
    expect(ws.frames().pop()).toEqual({ type: "hand_back", note: "Logged in as ann" });
    serve(ws, agentState());
    expect(screen.queryByLabelText("Note for the agent")).toBeNull();
    expect(screen.queryByLabelText("Type into the page")).toBeNull();
  });

  it("maps clicks on the letterboxed picture to the page's CSS pixels, and sends typing as text and keys", () => {
    const ws = renderPane();
    serve(ws, agentState({ driver: "person" }));
    serve(ws, jpegFrame(1280, 720));
    const img = screen.getByRole("img");
    // Shown in a 640×600 box: the picture is 640×360 with 120 px bars above and below.
    img.getBoundingClientRect = () => ({ left: 0, top: 0, width: 640, height: 600, right: 640, bottom: 600, x: 0, y: 0, toJSON: () => ({}) });
    fireEvent.mouseDown(img, { clientX: 100, clientY: 200, button: 0 });
    fireEvent.mouseUp(img, { clientX: 100, clientY: 200, button: 0 });
    expect(ws.frames().pop()).toEqual({ type: "mouse", action: "click", x: 200, y: 160, button: "left", delta_x: 0, delta_y: 0, modifiers: 0 });
    // On the bars: nothing is sent.
    const before = ws.sent.length;
    fireEvent.mouseDown(img, { clientX: 100, clientY: 50, button: 0 });
    fireEvent.mouseUp(img, { clientX: 100, clientY: 50, button: 0 });
    expect(ws.sent.length).toBe(before);
    // A drag is down, moves, up.
    fireEvent.mouseDown(img, { clientX: 10, clientY: 130, button: 0 });
    fireEvent.mouseMove(img, { clientX: 50, clientY: 130, buttons: 1 });
    fireEvent.mouseUp(img, { clientX: 50, clientY: 130, button: 0 });
    expect(ws.frames().slice(-3).map((f) => [f.action, f.x, f.y])).toEqual([
      ["down", 20, 20],
      ["move", 100, 20],
      ["up", 100, 20],
    ]);

    const field = screen.getByLabelText("Type into the page") as HTMLTextAreaElement;
    field.value = "ann";
    fireEvent.input(field);
    expect(field.value).toBe("");
    fireEvent.keyDown(field, { key: "Tab" });
    fireEvent.keyDown(field, { key: "a", ctrlKey: true });
    fireEvent.compositionStart(field);
    field.value = "日本";
    fireEvent.input(field);
    fireEvent.compositionEnd(field, { data: "日本" });
    expect(ws.frames().slice(-4)).toEqual([
      { type: "text", text: "ann" },
      { type: "key", key: "Tab", modifiers: 0 },
      { type: "key", key: "a", modifiers: 2 },
      { type: "text", text: "日本" },
    ]);
  });

  it("navigates from the address bar, switches tabs and shows refusals while the person drives", () => {
    const ws = renderPane();
    serve(
      ws,
      agentState({
        driver: "person",
        tabs: [
          { id: "T1", url: "http://127.0.0.1:9/index.html", title: "Index", active: true },
          { id: "T2", url: "http://127.0.0.1:9/other.html", title: "Other", active: false },
        ],
      }),
    );
    const address = screen.getByLabelText("Address") as HTMLInputElement;
    expect(address.readOnly).toBe(false);
    fireEvent.change(address, { target: { value: "127.0.0.1:9/login.html" } });
    fireEvent.submit(address.closest("form")!);
    expect(ws.frames().pop()).toEqual({ type: "navigate", url: "http://127.0.0.1:9/login.html" });
    fireEvent.click(screen.getByRole("button", { name: "Other" }));
    expect(ws.frames().pop()).toEqual({ type: "switch_tab", tab_id: "T2" });
    fireEvent.click(screen.getByRole("button", { name: "Reload" }));
    expect(ws.frames().pop()).toEqual({ type: "reload" });
    serve(ws, { type: "error", message: "navigation failed: net::ERR_CONNECTION_REFUSED" });
    expect(screen.getByRole("alert").textContent).toContain("net::ERR_CONNECTION_REFUSED");
  });

  it("says when the connection is lost and keeps the last picture, dimmed", () => {
    const ws = renderPane();
    serve(ws, agentState());
    serve(ws, jpegFrame());
    act(() => ws.drop(1006, "gone"));
    expect(screen.getByText(/disconnected — retrying/)).toBeTruthy();
    expect(screen.getByRole("img").closest(".live-view")?.classList.contains("stale")).toBe(true);
  });
});

describe("normaliseUrl", () => {
  it("adds a scheme where there is none", () => {
    expect(normaliseUrl(" example.com/a ")).toBe("https://example.com/a");
    expect(normaliseUrl("localhost:3000")).toBe("http://localhost:3000");
    expect(normaliseUrl("127.0.0.1:9/x")).toBe("http://127.0.0.1:9/x");
    expect(normaliseUrl("http://a.b/")).toBe("http://a.b/");
    expect(normaliseUrl("about:blank")).toBe("about:blank");
  });

  it("marks text as secret from the keyboard, whoever drives", () => {
    const ws = renderPane();
    serve(ws, agentState());
    const field = screen.getByLabelText("Text to keep secret") as HTMLInputElement;
    const button = screen.getByRole("button", { name: "Mark as secret" }) as HTMLButtonElement;
    expect(field.type).toBe("password");
    fireEvent.change(field, { target: { value: "abc" } });
    expect(button.disabled).toBe(true);
    fireEvent.submit(field.form!);
    expect(ws.frames().map((f) => f.type)).toEqual(["auth"]);
    // Typed and submitted with Enter (the form's submit), without the mouse.
    field.focus();
    fireEvent.change(field, { target: { value: "hunter2-token" } });
    expect(button.disabled).toBe(false);
    fireEvent.submit(field.form!);
    expect(ws.frames().pop()).toEqual({ type: "mark_secret", text: "hunter2-token" });
    expect(field.value).toBe("");
  });
});
