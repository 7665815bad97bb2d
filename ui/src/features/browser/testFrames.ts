// Test-only: the browser socket's server frames the tests send through the fake socket.

export const agentState = (over: Record<string, unknown> = {}) => ({
  type: "state",
  driver: "agent",
  url: "http://127.0.0.1:9/index.html",
  title: "Index",
  tabs: [{ id: "T1", url: "http://127.0.0.1:9/index.html", title: "Index", active: true }],
  handoff: null,
  running: true,
  ...over,
});

/** A 1×1 JPEG is enough: nothing decodes it in jsdom. */
export const jpegFrame = (width = 1280, height = 720) => ({ type: "frame", format: "jpeg", data: "/9j/4AAQSkZJRg==", width, height });
