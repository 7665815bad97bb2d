// Whether the timeline follows new rows. It starts stuck to the bottom and stays there while
// rows arrive, even in bursts (catch-up pages) that land before Virtuoso has finished scrolling
// and so briefly report "not at the bottom"; only the person scrolling away unsticks it, and
// reaching the bottom again sticks it back.

export type StickEvent =
  /** The person scrolled up, dragged the scrollbar or pressed a key that scrolls up. */
  | { type: "person-scrolled" }
  /** Virtuoso's at-bottom state changed. */
  | { type: "at-bottom"; atBottom: boolean }
  /** The person asked for the latest rows ("↓ Latest"). */
  | { type: "jump-to-latest" };

export function stickReducer(stuck: boolean, e: StickEvent): boolean {
  switch (e.type) {
    case "person-scrolled":
      return false;
    case "at-bottom":
      return e.atBottom || stuck;
    case "jump-to-latest":
      return true;
  }
}

/** Virtuoso's followOutput answer: follow when stuck or already at the bottom. */
export function follow(stuck: boolean, atBottom: boolean): "auto" | false {
  return stuck || atBottom ? "auto" : false;
}

/** Keys that scroll the list up, away from the newest rows (scrolling down never unsticks). */
export const SCROLL_KEYS = new Set(["ArrowUp", "PageUp", "Home"]);
