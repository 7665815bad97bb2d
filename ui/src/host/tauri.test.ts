// The desktop host over the generated command bindings, with Tauri's IPC replaced by
// @tauri-apps/api/mocks: it asks keyring_status at start, follows keyring_set's answer, turns a
// command's {code, message} rejection into an Error, and follows the sandbox's status event.
import { emit } from "@tauri-apps/api/event";
import { clearMocks, mockIPC } from "@tauri-apps/api/mocks";
import { afterEach, describe, expect, it } from "vitest";
import { DesktopError, createTauriHost } from "./tauri";

const FILE_STATUS = {
  backend: "file",
  warning: "No system keyring is available, so Tandem keeps your API keys and session keys in the file /cfg/secrets.json, which only your user account can read.",
  cause: "no Secret Service: no D-Bus session",
  file: "/cfg/secrets.json",
};
const OS_STATUS = { backend: "os", warning: null, cause: null, file: null };

afterEach(() => clearMocks());

function desktop(status: { start: object; afterSet: object }) {
  const calls: { cmd: string; args: unknown }[] = [];
  mockIPC(
    (cmd, args) => {
      calls.push({ cmd, args });
      switch (cmd) {
        case "session_last":
          return { backend: "local", workspace: "/w" };
        case "keyring_status":
          return status.start;
        case "keyring_set":
          return status.afterSet;
        case "keyring_get":
          throw { code: "keyring", message: "keyring: the keyring did not answer within 10 s" };
        case "sandbox_start":
          return { seq: 1, state: { state: "starting", workspace: (args as { workspace: string }).workspace, step: "connecting" } };
        default:
          return null;
      }
    },
    { shouldMockEvents: true },
  );
  return calls;
}

describe("tauri host", () => {
  it("reads the keyring status at start and shows the fallback warning", async () => {
    const calls = desktop({ start: FILE_STATUS, afterSet: FILE_STATUS });
    const h = await createTauriHost();
    expect(calls.map((c) => c.cmd).sort()).toEqual(["keyring_status", "session_last"]);
    expect(h.keyringWarning).toBe(FILE_STATUS.warning);
    expect(h.keyringWarningCause).toBe(FILE_STATUS.cause);
    expect(h.loadPref("lastWorkspace")).toBe("/w");
  });

  it("has no warning with the OS keyring, and takes the one keyring_set answers", async () => {
    const calls = desktop({ start: OS_STATUS, afterSet: FILE_STATUS });
    const h = await createTauriHost();
    expect(h.keyringWarning).toBeNull();
    expect(h.keyringWarningCause).toBeNull();
    let heard = 0;
    const off = h.onKeyringWarning?.(() => heard++);
    await h.keyringSet("llm:p1", "sk-1");
    expect(calls.at(-1)).toEqual({ cmd: "keyring_set", args: { account: "llm:p1", secret: "sk-1", service: null } });
    expect(h.keyringWarning).toBe(FILE_STATUS.warning);
    expect(heard).toBe(1);
    off?.();
    await h.keyringSet("llm:p1", "sk-2");
    expect(heard).toBe(1);
  });

  it("turns a command's {code, message} rejection into an Error naming it", async () => {
    desktop({ start: OS_STATUS, afterSet: OS_STATUS });
    const h = await createTauriHost();
    const err = await h.keyringGet("llm:p1").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DesktopError);
    expect((err as DesktopError).code).toBe("keyring");
    expect((err as DesktopError).message).toContain("did not answer");
  });

  it("starts the sandbox through sandbox_start and hears its sandbox-status events", async () => {
    const calls = desktop({ start: OS_STATUS, afterSet: OS_STATUS });
    const h = await createTauriHost();
    expect(await h.sandbox?.start("/home/ann/p")).toEqual({ seq: 1, state: { state: "starting", workspace: "/home/ann/p", step: "connecting" } });
    expect(calls.at(-1)).toEqual({ cmd: "sandbox_start", args: { workspace: "/home/ann/p" } });
    const heard: unknown[] = [];
    const off = await h.sandbox?.listen((s) => heard.push(s));
    const failed = { seq: 2, state: { state: "failed", workspace: "/home/ann/p", reason: "no Docker daemon answers", code: "no_docker" } };
    await emit("sandbox-status", failed);
    expect(heard).toEqual([failed]);
    off?.();
    await emit("sandbox-status", { ...failed, seq: 3 });
    expect(heard).toHaveLength(1);
  });
});
