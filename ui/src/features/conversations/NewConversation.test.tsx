import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setHostForTests } from "../../host";
import { createBrowserHost } from "../../host/browser";
import { useBackends, type Backend } from "../backends/backendStore";
import { NewConversation, defaultWorkspace } from "./NewConversation";

const backend: Backend = { id: "local", name: "This server", kind: "local", baseUrl: "http://127.0.0.1:1", key: "k" };

function renderForm() {
  render(
    <QueryClientProvider client={new QueryClient()}>
      <NewConversation backend={backend} onCreated={() => {}} onCancel={() => {}} />
    </QueryClientProvider>,
  );
  return screen.getByPlaceholderText("/home/me/project") as HTMLInputElement;
}

function serverSays(info: Record<string, unknown> | undefined) {
  act(() => useBackends.setState({ health: { local: { status: "ok", demo: false, info } } }));
}

describe("defaultWorkspace", () => {
  it("prefers the folder used last, then the server's home folder, then nothing", () => {
    expect(defaultWorkspace("/srv/app", { home_dir: "/home/ann" })).toBe("/srv/app");
    expect(defaultWorkspace("  ", { home_dir: "/home/ann" })).toBe("/home/ann");
    expect(defaultWorkspace(null, { home_dir: "/home/ann" })).toBe("/home/ann");
    expect(defaultWorkspace(null, { home_dir: 42 })).toBe("");
    expect(defaultWorkspace(null, undefined)).toBe("");
  });
});

describe("NewConversation", () => {
  beforeEach(() => {
    localStorage.clear();
    setHostForTests(createBrowserHost());
  });
  afterEach(() => {
    cleanup();
    setHostForTests(null);
    useBackends.setState({ health: {} });
  });

  it("starts with the folder used last", () => {
    localStorage.setItem("tandem.lastWorkspace", JSON.stringify("/work/project"));
    serverSays({ home_dir: "/home/ann" });
    expect(renderForm().value).toBe("/work/project");
  });

  it("starts with the server's home folder when no folder was used yet, also when the info arrives later", () => {
    serverSays(undefined);
    const field = renderForm();
    expect(field.value).toBe("");
    serverSays({ home_dir: "/home/ann", demo: true });
    expect(field.value).toBe("/home/ann");
    expect((screen.getByRole("button", { name: "Start" }) as HTMLButtonElement).disabled).toBe(false);
  });

  it("keeps what the person typed when the server's info changes", () => {
    serverSays({ home_dir: "/home/ann" });
    const field = renderForm();
    fireEvent.change(field, { target: { value: "" } });
    expect(field.value).toBe("");
    fireEvent.change(field, { target: { value: "/tmp/x" } });
    serverSays({ home_dir: "/home/bob" });
    expect(field.value).toBe("/tmp/x");
  });
});
