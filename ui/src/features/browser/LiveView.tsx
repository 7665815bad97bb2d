// The page, live: the latest screencast frame scaled to fit (object-fit: contain), and, while
// the person drives, their mouse and keyboard sent to the page. Pointer positions are mapped
// from the scaled, letterboxed image to the page's CSS pixels (geometry.ts). Keys go to the
// page only while the view has focus: a hidden text field takes them, so typing, IME
// composition and paste arrive as text, and other keys as key frames (keys.ts).
import { useEffect, useRef, type MouseEvent as ReactMouseEvent } from "react";
import { toPagePoint, wheelPixels } from "./geometry";
import { keyAction, modifiersOf } from "./keys";
import type { ClientFrame, MouseAction, MouseButton } from "./wire";

const BUTTONS: MouseButton[] = ["left", "middle", "right"];
/** A press that moves further than this (client px) is a drag, not a click. */
const DRAG_PX = 4;
/** Drag moves are sent at most this often: the server applies each input in turn. */
const MOVE_MS = 50;

interface Press {
  x: number;
  y: number;
  clientX: number;
  clientY: number;
  button: MouseButton;
  dragging: boolean;
}

export function LiveView({
  attachImage,
  page,
  driving,
  dim,
  send,
  label,
}: {
  attachImage: (el: HTMLImageElement | null) => void;
  /** The page viewport's size in CSS pixels (the last frame's width×height). */
  page: { width: number; height: number };
  driving: boolean;
  /** The picture may be stale (the socket is down). */
  dim: boolean;
  send: (f: ClientFrame) => boolean;
  label: string;
}) {
  const img = useRef<HTMLImageElement | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const input = useRef<HTMLTextAreaElement>(null);
  const press = useRef<Press | null>(null);
  const lastMove = useRef(0);
  const composing = useRef(false);
  // The latest props for the native wheel listener, which is installed once.
  const live = useRef({ page, driving, send });
  live.current = { page, driving, send };

  const pointAt = (clientX: number, clientY: number) => {
    const el = img.current;
    if (!el) return null;
    const r = el.getBoundingClientRect();
    const { page: p } = live.current;
    return toPagePoint(clientX, clientY, r, { width: el.naturalWidth, height: el.naturalHeight }, p);
  };

  const mouse = (action: MouseAction, at: { x: number; y: number }, button: MouseButton, modifiers: number, dx = 0, dy = 0) =>
    live.current.send({ type: "mouse", action, x: at.x, y: at.y, button, delta_x: dx, delta_y: dy, modifiers });

  // Wheel: a native listener, since React's is passive and cannot keep the app from scrolling.
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const onWheel = (e: WheelEvent) => {
      if (!live.current.driving) return;
      const at = pointAt(e.clientX, e.clientY);
      if (!at) return;
      e.preventDefault();
      const h = live.current.page.height;
      mouse("wheel", at, "left", modifiersOf(e), wheelPixels(e.deltaX, e.deltaMode, h), wheelPixels(e.deltaY, e.deltaMode, h));
    };
    el.addEventListener("wheel", onWheel, { passive: false });
    return () => el.removeEventListener("wheel", onWheel);
    // pointAt and mouse read everything through `live`.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  // Taking control puts the keyboard on the page; handing back takes it away.
  useEffect(() => {
    if (driving) input.current?.focus({ preventScroll: true });
    else press.current = null;
  }, [driving]);

  const onMouseDown = (e: ReactMouseEvent) => {
    if (!driving) return;
    // Keep the focus on the hidden field (and no image drag or text selection).
    e.preventDefault();
    input.current?.focus({ preventScroll: true });
    const at = pointAt(e.clientX, e.clientY);
    if (!at) return;
    press.current = { ...at, clientX: e.clientX, clientY: e.clientY, button: BUTTONS[e.button] ?? "left", dragging: false };
  };

  const onMouseMove = (e: ReactMouseEvent) => {
    if (!driving) return;
    // Only drags move the page's pointer: hover moves would queue up behind each other on the
    // server (every input waits for the page to settle) and delay the clicks that matter.
    const p = press.current;
    const at = pointAt(e.clientX, e.clientY);
    if (!p || !at) return;
    if (!p.dragging && Math.hypot(e.clientX - p.clientX, e.clientY - p.clientY) < DRAG_PX) return;
    if (!p.dragging) {
      p.dragging = true;
      mouse("down", p, p.button, modifiersOf(e));
    }
    const now = performance.now();
    if (now - lastMove.current < MOVE_MS) return;
    lastMove.current = now;
    mouse("move", at, p.button, modifiersOf(e));
  };

  const onMouseUp = (e: ReactMouseEvent) => {
    const p = press.current;
    press.current = null;
    if (!driving || !p) return;
    if (p.dragging) mouse("up", pointAt(e.clientX, e.clientY) ?? p, p.button, modifiersOf(e));
    else mouse("click", p, p.button, modifiersOf(e));
  };

  const onMouseLeave = (e: ReactMouseEvent) => {
    const p = press.current;
    if (!p) return;
    press.current = null;
    if (p.dragging) mouse("up", p, p.button, modifiersOf(e));
  };

  const flushText = () => {
    const el = input.current;
    if (!el || composing.current) return;
    const text = el.value;
    el.value = "";
    if (text) live.current.send({ type: "text", text });
  };

  return (
    <div
      ref={box}
      className={`live-view${driving ? " driving" : ""}${dim ? " stale" : ""}`}
      data-autofocus
      tabIndex={-1}
      onFocus={(e) => {
        if (driving && e.target === e.currentTarget) input.current?.focus({ preventScroll: true });
      }}
      onMouseDown={onMouseDown}
      onMouseMove={onMouseMove}
      onMouseUp={onMouseUp}
      onMouseLeave={onMouseLeave}
      onContextMenu={(e) => driving && e.preventDefault()}
    >
      <img
        ref={(el) => {
          img.current = el;
          attachImage(el);
        }}
        className="live-frame"
        alt={label}
        draggable={false}
        data-page-width={page.width}
        data-page-height={page.height}
      />
      {driving && (
        <textarea
          ref={input}
          className="live-input"
          aria-label="Type into the page"
          autoComplete="off"
          autoCorrect="off"
          autoCapitalize="off"
          spellCheck={false}
          onKeyDown={(e) => {
            const a = keyAction(e.nativeEvent);
            if (a === "app" || a === "native") return;
            e.preventDefault();
            live.current.send({ type: "key", key: a.key, modifiers: a.modifiers });
          }}
          onInput={flushText}
          onCompositionStart={() => {
            composing.current = true;
          }}
          onCompositionEnd={() => {
            composing.current = false;
            flushText();
          }}
        />
      )}
    </div>
  );
}
