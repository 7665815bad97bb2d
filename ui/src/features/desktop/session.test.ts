import { beforeEach, describe, expect, it } from "vitest";
import { FakeSocket, fakeSocket } from "../../api/fakeSocket";
import { RfbChannel } from "./channel";
import { FakeRfb, loadFakeRfb } from "./fakeRfb";
import { closedStatus, DesktopSession, errorMessage, type DesktopSnapshot } from "./session";

function session(key: string | null = "sk-1") {
  const seen: DesktopSnapshot[] = [];
  const s = new DesktopSession({
    baseUrl: "http://127.0.0.1:8000/",
    sessionKey: key,
    conversationId: "c 1",
    target: document.createElement("div"),
    onChange: (snap) => seen.push(snap),
    loadRfb: loadFakeRfb,
    socketFactory: fakeSocket,
  });
  return { s, seen };
}

async function started(key: string | null = "sk-1") {
  const made = session(key);
  await made.s.start();
  return { ...made, ws: FakeSocket.last(), rfb: FakeRfb.last() };
}

describe("DesktopSession", () => {
  beforeEach(() => {
    FakeSocket.all = [];
    FakeRfb.all = [];
  });

  it("authenticates in the first frame, then gives noVNC the raw RFB bytes", async () => {
    const { s, ws, rfb } = await started();
    expect(ws.url).toBe("ws://127.0.0.1:8000/sockets/vnc/c%201");
    expect(ws.binaryType).toBe("arraybuffer");
    // noVNC must not speak before the auth frame is out: the channel still looks connecting.
    ws.readyState = 1;
    expect(rfb.channel.readyState).toBe(0);
    expect(rfb.opened).toBe(false);
    ws.open();
    expect(ws.sent).toEqual([JSON.stringify({ type: "auth", session_api_key: "sk-1" })]);
    expect(rfb.opened).toBe(true);
    expect(rfb.channel.readyState).toBe(1);
    ws.bytes([82, 70, 66]);
    // A text frame is the server's, not noVNC's.
    ws.frame({ type: "note" });
    expect(rfb.received.map((b) => [...new Uint8Array(b)])).toEqual([[82, 70, 66]]);
    rfb.channel.send(new Uint8Array([1]));
    expect(ws.sent).toHaveLength(2);
    expect(s.snapshot.conn).toEqual({ status: "connecting" });
    rfb.emit("connect", {});
    rfb.emit("desktopname", { name: "sandbox:0" });
    expect(s.snapshot.conn).toEqual({ status: "connected", name: "sandbox:0" });
  });

  it("sends no auth frame to a server without keys", async () => {
    const { ws } = await started(null);
    ws.open();
    expect(ws.sent).toEqual([]);
  });

  it("is view-only and scaled to the pane until the person takes control", async () => {
    const { s, ws, rfb } = await started();
    expect(rfb.viewOnly).toBe(true);
    expect(rfb.scaleViewport).toBe(true);
    ws.open();
    rfb.emit("connect", {});
    expect(s.paste("hello")).toBe(false);
    s.setViewOnly(false);
    expect(rfb.viewOnly).toBe(false);
    expect(rfb.focused).toBe(1);
    expect(s.snapshot.viewOnly).toBe(false);
    expect(s.paste("hello")).toBe(true);
    expect(rfb.pasted).toEqual(["hello"]);
    s.setViewOnly(true);
    expect(rfb.viewOnly).toBe(true);
    expect(s.paste("again")).toBe(false);
  });

  it("keeps what the desktop copies", async () => {
    const { s, rfb } = await started();
    expect(s.snapshot.clipboard).toBeNull();
    rfb.emit("clipboard", { text: "copied on the desktop" });
    expect(s.snapshot.clipboard).toBe("copied on the desktop");
  });

  it("says the server has no desktop when it refuses with an error frame and 4004", async () => {
    const { s, ws } = await started();
    ws.open();
    ws.frame({ type: "error", message: "This server has no desktop (TANDEM_VNC_ADDR is not set)" });
    ws.drop(4004, "This server has no desktop");
    expect(s.snapshot.conn).toEqual({ status: "no_desktop", message: "This server has no desktop (TANDEM_VNC_ADDR is not set)" });
  });

  it("gives the reason a connection ended", async () => {
    const { s, ws } = await started();
    ws.open();
    ws.frame({ type: "error", message: "The desktop's VNC server at 127.0.0.1:5900 cannot be reached" });
    ws.drop(1011);
    expect(s.snapshot.conn).toEqual({ status: "disconnected", reason: "The desktop's VNC server at 127.0.0.1:5900 cannot be reached" });
  });

  it("maps every close code to an honest status", () => {
    expect(closedStatus(4001, "Authentication failed", null)).toEqual({ status: "disconnected", reason: "The server refused the session key." });
    expect(closedStatus(4004, "", null)).toEqual({ status: "disconnected", reason: "The server does not know this conversation." });
    expect(closedStatus(4004, "", "no desktop")).toEqual({ status: "no_desktop", message: "no desktop" });
    expect(closedStatus(1000, "The desktop's VNC server closed the connection", null)).toEqual({
      status: "disconnected",
      reason: "The desktop's VNC server closed the connection",
    });
    expect(closedStatus(1000, "", null)).toEqual({ status: "disconnected", reason: "The desktop session ended." });
    expect(closedStatus(1006, "", null)).toEqual({ status: "disconnected", reason: "The connection was lost (code 1006)." });
    expect(errorMessage('{"type":"error","message":"why"}')).toBe("why");
    expect(errorMessage('{"type":"state"}')).toBeNull();
    expect(errorMessage("not json")).toBeNull();
  });

  it("asks for no password: a VNC server that wants one ends the session with a reason", async () => {
    const { s, ws, rfb } = await started();
    ws.open();
    rfb.emit("credentialsrequired", { types: ["password"] });
    expect(rfb.disconnected).toBe(true);
    ws.drop(ws.closed ?? 1000);
    expect(s.snapshot.conn.status).toBe("disconnected");
    expect(s.snapshot.conn).toMatchObject({ reason: expect.stringContaining("password") });
  });

  it("reconnects on a fresh socket and forgets the old one", async () => {
    const { s, ws, rfb } = await started();
    ws.open();
    ws.drop(1006);
    expect(s.snapshot.conn.status).toBe("disconnected");
    await s.start();
    expect(FakeSocket.all).toHaveLength(2);
    const second = FakeSocket.last();
    expect(second).not.toBe(ws);
    expect(s.snapshot.conn).toEqual({ status: "connecting" });
    // The old RFB's late events change nothing.
    rfb.emit("connect", {});
    expect(s.snapshot.conn).toEqual({ status: "connecting" });
    second.open();
    FakeRfb.last().emit("connect", {});
    expect(s.snapshot.conn.status).toBe("connected");
  });

  it("closes the socket through noVNC when the pane goes away", async () => {
    const { s, ws, rfb, seen } = await started();
    ws.open();
    rfb.emit("connect", {});
    s.stop();
    expect(rfb.disconnected).toBe(true);
    expect(ws.closed).toBe(1000);
    const n = seen.length;
    ws.drop(1000);
    expect(seen).toHaveLength(n);
  });

  it("says when the viewer cannot be loaded", async () => {
    const s = new DesktopSession({
      baseUrl: "http://127.0.0.1:8000",
      sessionKey: "k",
      conversationId: "c",
      target: document.createElement("div"),
      onChange: () => {},
      loadRfb: () => Promise.reject(new Error("chunk missing")),
      socketFactory: fakeSocket,
    });
    await s.start();
    expect(s.snapshot.conn).toEqual({ status: "disconnected", reason: "Cannot load the VNC viewer: Error: chunk missing" });
    expect(FakeSocket.all).toHaveLength(0);
  });
});

describe("RfbChannel", () => {
  it("has every member noVNC's Websock.attach checks for", () => {
    const ch = new RfbChannel({ url: "ws://x", sessionKey: "k", socketFactory: fakeSocket }, { onText() {}, onClose() {} });
    const props = [...Object.keys(ch), ...Object.getOwnPropertyNames(Object.getPrototypeOf(ch))];
    for (const p of ["send", "close", "binaryType", "onerror", "onmessage", "onopen", "protocol", "readyState"]) expect(props).toContain(p);
  });
});
