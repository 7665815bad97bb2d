// The open conversation is remembered per backend, so a restart or a backend switch reopens
// each backend's own last conversation.
import { afterEach, describe, expect, it } from "vitest";
import { useBackends } from "../features/backends/backendStore";
import { setHostForTests, type Host } from "../host";
import { lastConversationPref, linkFromHash, useUi } from "./ui";

function prefHost(prefs: Map<string, unknown>): Host {
  return {
    kind: "browser",
    keyringWarning: null,
    keyringGet: async () => null,
    keyringSet: async () => {},
    keyringDelete: async () => {},
    pickFolder: null,
    localBackend: async () => null,
    loadBackends: async () => [],
    saveBackends: async () => {},
    loadPref: <T,>(name: string) => (prefs.get(name) as T | undefined) ?? null,
    savePref: (name, value) => void prefs.set(name, value),
  };
}

afterEach(() => setHostForTests(null));

describe("last conversation", () => {
  it("is saved under the active backend and leaves other backends' alone", () => {
    const prefs = new Map<string, unknown>();
    setHostForTests(prefHost(prefs));
    useBackends.setState({ activeId: "local" });
    useUi.getState().openConversation("c-local");
    useBackends.setState({ activeId: "r1" });
    useUi.getState().openConversation("c-remote");
    useUi.getState().openConversation(null);
    expect(prefs.get(lastConversationPref("local"))).toBe("c-local");
    expect(prefs.get(lastConversationPref("r1"))).toBeNull();
    expect(useUi.getState().conversationId).toBeNull();
  });

  it("is not saved when no backend is active", () => {
    const prefs = new Map<string, unknown>();
    setHostForTests(prefHost(prefs));
    useBackends.setState({ activeId: null });
    useUi.getState().openConversation("c1");
    expect(prefs.size).toBe(0);
  });
});

describe("replay links", () => {
  it("reads the conversation and the replay flag from the fragment", () => {
    const id = "60e4f215-bd59-456c-bd42-1dca1b064ab6";
    expect(linkFromHash(`#key=abc&conversation=${id}&replay=1`)).toEqual({ conversation: id, replay: true });
    expect(linkFromHash(`#conversation=${id}`)).toEqual({ conversation: id, replay: false });
    expect(linkFromHash("#key=abc")).toBeNull();
    expect(linkFromHash("#conversation=../../etc")).toBeNull();
    expect(linkFromHash("")).toBeNull();
  });
});
