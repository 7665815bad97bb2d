// Test-only: noVNC's RFB played by the tests (the socket under it is the one fake socket). It
// does what noVNC does with its channel (sets its handlers, speaks once it opens, closes it on
// disconnect) so the session's wiring is exercised; RFB's own protocol is noVNC's business.
import type { RfbChannel } from "./channel";
import type { RfbFactory, RfbLike } from "./session";

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
