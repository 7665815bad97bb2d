// The browser socket's frames (`/sockets/browser/{id}`) and the REST mirror's bodies, named
// from the server's OpenAPI document (tandem.gen.ts), and read defensively: the server's frames
// are untrusted JSON until they have the fields we use.
import type { components } from "../../api/tandem.gen";

type Schemas = components["schemas"];

/** One open tab of the agent's browser. */
export type BrowserTab = Schemas["BrowserTab"];

/**
 * Who drives the browser and where it is: the `state` frame and `GET …/browser/state`, as
 * `readState` normalises it (`handoff` always present: the agent's pending request or null;
 * `running`: whether Chromium is up — before the agent's first browser action it is not).
 */
export type BrowserState = Omit<Schemas["BrowserState"], "handoff"> & { handoff: Schemas["BrowserHandoff"] | null };

/** The latest screencast frame: a JPEG of the page, `width`×`height` CSS pixels of its viewport. */
export type BrowserFrame = Omit<Extract<Schemas["BrowserServerFrame"], { type: "frame" }>, "type">;

export type ServerFrame =
  | ({ type: "frame" } & BrowserFrame)
  | ({ type: "state" } & BrowserState)
  | { type: "error"; message: string };

/** CDP's modifier bitmask. */
export const MOD = { alt: 1, ctrl: 2, meta: 4, shift: 8 } as const;

export type MouseAction = "click" | "down" | "up" | "move" | "wheel";
export type MouseButton = "left" | "middle" | "right";

/** What the pane sends: the wire's client frames, with the strings the server accepts spelled out. */
export type ClientFrame =
  | { type: "auth"; session_api_key: string }
  | { type: "take_control" }
  | { type: "hand_back"; note: string }
  | {
      type: "mouse";
      action: MouseAction;
      x: number;
      y: number;
      button: MouseButton;
      delta_x: number;
      delta_y: number;
      modifiers: number;
    }
  | { type: "key"; key: string; modifiers: number }
  | { type: "text"; text: string }
  | { type: "navigate"; url: string }
  | { type: "back" }
  | { type: "forward" }
  | { type: "reload" }
  | { type: "switch_tab"; tab_id: string }
  | { type: "mark_secret"; text: string };

/** Frames that act on the page: the server refuses them unless the person drives. */
export const INPUT_FRAMES: ReadonlySet<ClientFrame["type"]> = new Set([
  "mouse",
  "key",
  "text",
  "navigate",
  "back",
  "forward",
  "reload",
  "switch_tab",
]);

/** Any frame the pane may send is a wire frame (a compile-time check, see `toWire`). */
export function toWire(f: ClientFrame): Schemas["BrowserClientFrame"] {
  return f;
}

/** `POST …/browser/hand_back`'s body. */
export type HandBackRequest = Schemas["HandBackRequest"];

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

function readTab(v: unknown): BrowserTab | null {
  if (!isRecord(v)) return null;
  const id = typeof v.id === "string" ? v.id : typeof v.id === "number" ? String(v.id) : "";
  if (!id) return null;
  return { id, url: str(v.url), title: str(v.title), active: v.active === true };
}

/** A state object (socket frame or REST body) → BrowserState, or null if it is not one. */
export function readState(v: unknown): BrowserState | null {
  if (!isRecord(v)) return null;
  if (v.driver !== "agent" && v.driver !== "person") return null;
  const tabs = Array.isArray(v.tabs) ? v.tabs.map(readTab).filter((t): t is BrowserTab => t !== null) : [];
  const handoff = isRecord(v.handoff) ? { reason: str(v.handoff.reason) } : null;
  const url = str(v.url);
  return {
    driver: v.driver,
    url,
    title: str(v.title),
    tabs,
    handoff,
    // A server that does not say: a browser with a page is up.
    running: typeof v.running === "boolean" ? v.running : url !== "",
    loading: v.loading === true,
  };
}

/** One text frame from the server → a typed frame, or null for anything we do not understand. */
export function parseServerFrame(data: unknown): ServerFrame | null {
  if (typeof data !== "string") return null;
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    return null;
  }
  if (!isRecord(v)) return null;
  switch (v.type) {
    case "frame": {
      const { width, height } = v;
      if (typeof v.data !== "string" || !v.data) return null;
      if (typeof width !== "number" || typeof height !== "number" || !(width > 0) || !(height > 0)) return null;
      return { type: "frame", format: str(v.format) || "jpeg", data: v.data, width, height };
    }
    case "state": {
      const s = readState(v);
      return s ? { type: "state", ...s } : null;
    }
    case "error":
      return { type: "error", message: str(v.message) || str(v.detail) || "The browser refused that." };
    default:
      return null;
  }
}

/** A frame's image as a URL an <img> can show. */
export function frameSrc(f: BrowserFrame): string {
  const mime = f.format === "png" ? "image/png" : f.format === "webp" ? "image/webp" : "image/jpeg";
  return `data:${mime};base64,${f.data}`;
}
