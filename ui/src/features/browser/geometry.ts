// Where a pointer on the scaled live view lands on the page. The frame is shown with
// `object-fit: contain`: scaled to fit its box and centred, with bars on two sides when the
// box's shape differs from the image's. Input is sent in CSS pixels of the page viewport
// (the frame's width×height), whatever the image's own pixel size (device scale).

export interface Rect {
  left: number;
  top: number;
  width: number;
  height: number;
}

export interface Size {
  width: number;
  height: number;
}

/**
 * The part of `box` the image covers under `object-fit: contain`. `image` is the image's own
 * size (only its shape matters); a zero size (not decoded yet) fills the box.
 */
export function containedRect(box: Rect, image: Size): Rect {
  if (!(image.width > 0 && image.height > 0) || !(box.width > 0 && box.height > 0)) return box;
  const scale = Math.min(box.width / image.width, box.height / image.height);
  const width = image.width * scale;
  const height = image.height * scale;
  return { left: box.left + (box.width - width) / 2, top: box.top + (box.height - height) / 2, width, height };
}

/**
 * The page point (CSS pixels of the viewport, `page`) under the client point, or null when it
 * falls on the bars around the image or the view has no size yet.
 */
export function toPagePoint(clientX: number, clientY: number, box: Rect, image: Size, page: Size): { x: number; y: number } | null {
  const r = containedRect(box, image.width > 0 && image.height > 0 ? image : page);
  if (!(r.width > 0 && r.height > 0) || !(page.width > 0 && page.height > 0)) return null;
  const fx = (clientX - r.left) / r.width;
  const fy = (clientY - r.top) / r.height;
  if (fx < 0 || fy < 0 || fx > 1 || fy > 1) return null;
  // The last pixel row/column is `size - 1`; two decimals is finer than any screen.
  const round = (v: number, max: number) => Math.min(max, Math.round(v * 100) / 100);
  return { x: round(fx * page.width, page.width - 1), y: round(fy * page.height, page.height - 1) };
}

/** The inverse: where a page point is drawn on the client (for tests that click a page spot). */
export function toClientPoint(x: number, y: number, box: Rect, image: Size, page: Size): { x: number; y: number } {
  const r = containedRect(box, image.width > 0 && image.height > 0 ? image : page);
  return { x: r.left + (x / page.width) * r.width, y: r.top + (y / page.height) * r.height };
}

/** A wheel event's delta in CSS pixels (lines are 16 px, pages the view's height). */
export function wheelPixels(delta: number, mode: number, pageHeight: number): number {
  if (mode === 1) return delta * 16;
  if (mode === 2) return delta * pageHeight;
  return delta;
}

