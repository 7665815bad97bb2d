import { describe, expect, it } from "vitest";
import { containedRect, toClientPoint, toPagePoint, wheelPixels } from "./geometry";

// A 1280×720 page whose screencast image is 2560×1440 (device scale 2).
const page = { width: 1280, height: 720 };
const image = { width: 2560, height: 1440 };

describe("toPagePoint", () => {
  it("scales a view of the page's own shape", () => {
    const box = { left: 100, top: 50, width: 640, height: 360 };
    expect(toPagePoint(100, 50, box, image, page)).toEqual({ x: 0, y: 0 });
    expect(toPagePoint(420, 230, box, image, page)).toEqual({ x: 640, y: 360 });
    expect(toPagePoint(100 + 160, 50 + 90, box, image, page)).toEqual({ x: 320, y: 180 });
  });

  it("accounts for bars above and below when the view is taller than the page", () => {
    // 640×600 box: the image is 640×360, centred, with 120 px bars above and below.
    const box = { left: 0, top: 0, width: 640, height: 600 };
    expect(containedRect(box, image)).toEqual({ left: 0, top: 120, width: 640, height: 360 });
    expect(toPagePoint(320, 120 + 180, box, image, page)).toEqual({ x: 640, y: 360 });
    expect(toPagePoint(10, 130, box, image, page)).toEqual({ x: 20, y: 20 });
    // On the bars: nothing is under the pointer.
    expect(toPagePoint(320, 60, box, image, page)).toBeNull();
    expect(toPagePoint(320, 590, box, image, page)).toBeNull();
  });

  it("accounts for bars left and right when the view is wider than the page", () => {
    // 1000×360 box: the image is 640×360 with 180 px bars on each side.
    const box = { left: 20, top: 10, width: 1000, height: 360 };
    expect(toPagePoint(20 + 180, 10, box, image, page)).toEqual({ x: 0, y: 0 });
    expect(toPagePoint(20 + 180 + 64, 10 + 36, box, image, page)).toEqual({ x: 128, y: 72 });
    expect(toPagePoint(100, 100, box, image, page)).toBeNull();
    expect(toPagePoint(1000, 100, box, image, page)).toBeNull();
  });

  it("keeps the far edge inside the page and uses the page's shape until the image is decoded", () => {
    const box = { left: 0, top: 0, width: 640, height: 360 };
    expect(toPagePoint(640, 360, box, image, page)).toEqual({ x: 1279, y: 719 });
    expect(toPagePoint(320, 180, box, { width: 0, height: 0 }, page)).toEqual({ x: 640, y: 360 });
    expect(toPagePoint(1, 1, { left: 0, top: 0, width: 0, height: 0 }, image, page)).toBeNull();
  });

  it("is the inverse of toClientPoint", () => {
    const box = { left: 37, top: 11, width: 913, height: 802 };
    const c = toClientPoint(250, 400, box, image, page);
    const p = toPagePoint(c.x, c.y, box, image, page);
    expect(p?.x).toBeCloseTo(250, 1);
    expect(p?.y).toBeCloseTo(400, 1);
  });
});

describe("wheelPixels", () => {
  it("turns lines and pages into pixels", () => {
    expect(wheelPixels(120, 0, 720)).toBe(120);
    expect(wheelPixels(3, 1, 720)).toBe(48);
    expect(wheelPixels(-1, 2, 720)).toBe(-720);
  });
});
