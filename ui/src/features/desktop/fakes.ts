// Test-only: the desktop socket and noVNC's RFB played by the tests. The fake RFB does what
// noVNC does with its channel (sets its handlers, speaks once it opens, closes it on
// disconnect) so the session's wiring is exercised; RFB's own protocol is noVNC's business.
import type { RawSocket } from "./channel";
import type { RfbChannel } from "./channel";
import type { RfbFactory, RfbLike } from "./session";

export class VncSocket implements RawSocket {
  static all: VncSocket[] = [];
  readyState = 0;
  binaryType = "blob";
  sent: unknown[] = [];
  closedWith: number | null = null;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number; reason: string }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  constructor(readonly url: string) {
    VncSocket.all.push(this);
  }
  static last(): VncSocket {
    const s = VncSocket.all[VncSocket.all.length - 1];
    if (!s) throw new Error("no socket was opened");
    return s;
  }
  send(data: unknown) {
    this.sent.push(data);
  }
  close(code = 1000) {
    this.closedWith = code;
    this.readyState = 3;
  }
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  text(v: unknown) {
    this.onmessage?.({ data: JSON.stringify(v) });
  }
  bytes(b: number[]) {
    this.onmessage?.({ data: new Uint8Array(b).buffer });
  }
  /** The server ends the socket. */
  end(code: number, reason = "") {
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
}

export class FakeRfb extends EventTarget implements RfbLike {
  static all: FakeRfb[] = [];
  viewOnly = false;
  scaleViewport = false;
  focused = 0;
  pasted: string[] = [];
  received: ArrayBuffer[] = [];
  opened = false;
  disconnected = false;
  constructor(
    readonly target: HTMLElement,
    readonly channel: RfbChannel,
  ) {
    super();
    FakeRfb.all.push(this);
    channel.onopen = () => {
      this.opened = true;
    };
    channel.onmessage = (ev) => this.received.push(ev.data as ArrayBuffer);
    channel.onclose = () => this.emit("disconnect", { clean: false });
  }
  static last(): FakeRfb {
    const r = FakeRfb.all[FakeRfb.all.length - 1];
    if (!r) throw new Error("no RFB was made");
    return r;
  }
  emit(type: string, detail: unknown) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }
  disconnect() {
    this.disconnected = true;
    this.channel.close();
  }
  clipboardPasteFrom(text: string) {
    this.pasted.push(text);
  }
  focus() {
    this.focused++;
  }
}

export const fakeRfb: RfbFactory = (target, channel) => new FakeRfb(target, channel);
export const loadFakeRfb = () => Promise.resolve(fakeRfb);
export const vncSocket = (url: string) => new VncSocket(url);
