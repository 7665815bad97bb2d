// The keyring fallback warning: a dismissible banner in the shell on the desktop, and inside
// Settings where keys are entered; both follow the host when a stored secret changes it.
import { act, cleanup, fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { SettingsDialog } from "../features/settings/SettingsDialog";
import { useSettings } from "../features/settings/settingsStore";
import { setHostForTests, type Host } from "../host";
import { useUi } from "../store/ui";
import { KeyringBanner } from "./KeyringBanner";

const FALLBACK =
  "No system keyring is available, so Tandem keeps your API keys and session keys in the file /home/u/.config/dev.tandem.desktop/secrets.json, which only your user account can read.";
const CAUSE = "no Secret Service: Platform secure storage failure: zbus error: I/O error: No such file or directory";

/** A desktop-like host whose warning changes when a secret is stored, as tauri.ts does from
 * keyring_set's answer. */
function fakeHost(kind: Host["kind"], initial: string | null, afterSet: string | null = initial, cause: string | null = null) {
  let warning = initial;
  const listeners = new Set<() => void>();
  const secrets = new Map<string, string>();
  const h: Host = {
    kind,
    get keyringWarning() {
      return warning;
    },
    get keyringWarningCause() {
      return warning ? cause : null;
    },
    onKeyringWarning(l) {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    keyringGet: async (a) => secrets.get(a) ?? null,
    async keyringSet(a, s) {
      secrets.set(a, s);
      warning = afterSet;
      listeners.forEach((l) => l());
    },
    keyringDelete: async (a) => void secrets.delete(a),
    pickFolder: null,
    localBackend: async () => null,
    loadBackends: async () => [],
    saveBackends: async () => {},
    loadPref: () => null,
    savePref: () => {},
  };
  return h;
}

afterEach(() => {
  cleanup();
  setHostForTests(null);
  sessionStorage.clear();
  useUi.setState({ settingsOpen: false });
  useSettings.setState({ profiles: [] });
});

describe("keyring banner", () => {
  it("shows the desktop's fallback warning and hides it for the session when dismissed", () => {
    setHostForTests(fakeHost("tauri", FALLBACK));
    const first = render(<KeyringBanner />);
    const banner = screen.getByRole("alert", { name: "Keyring warning" });
    expect(banner.textContent).toContain("No system keyring is available");
    expect(banner.textContent).toContain("secrets.json, which only your user account can read");
    fireEvent.click(screen.getByRole("button", { name: "Dismiss" }));
    expect(screen.queryByRole("alert", { name: "Keyring warning" })).toBeNull();
    // The shell mounting again in the same session (a reload) keeps it dismissed.
    first.unmount();
    render(<KeyringBanner />);
    expect(screen.queryByRole("alert", { name: "Keyring warning" })).toBeNull();
  });

  it("shows nothing when secrets are in the OS keyring, and appears when a stored secret went to the file", async () => {
    const h = fakeHost("tauri", null, FALLBACK);
    setHostForTests(h);
    render(<KeyringBanner />);
    expect(screen.queryByRole("alert", { name: "Keyring warning" })).toBeNull();
    await act(() => h.keyringSet("llm:p1", "sk-1"));
    expect(screen.getByRole("alert", { name: "Keyring warning" }).textContent).toContain("No system keyring is available");
  });

  it("leads with the sentence and folds the technical cause into details", () => {
    setHostForTests(fakeHost("tauri", FALLBACK, FALLBACK, CAUSE));
    render(<KeyringBanner />);
    const banner = screen.getByRole("alert", { name: "Keyring warning" });
    expect(banner.textContent?.startsWith(FALLBACK)).toBe(true);
    const details = banner.querySelector("details");
    expect(details?.open).toBe(false);
    expect(details?.querySelector("summary")?.textContent).toBe("Technical details");
    expect(details?.textContent).toContain(CAUSE);
    expect(banner.querySelector(`[title="${CAUSE}"]`)).toBeTruthy();
  });

  it("a warning dismissed earlier does not hide a different one", () => {
    sessionStorage.setItem("tandem.keyringBannerDismissed", "an older warning");
    setHostForTests(fakeHost("tauri", FALLBACK));
    render(<KeyringBanner />);
    expect(screen.getByRole("alert", { name: "Keyring warning" })).toBeTruthy();
  });

  it("leaves the browser's standing localStorage warning to Settings", () => {
    setHostForTests(fakeHost("browser", "This browser is not a keyring"));
    render(<KeyringBanner />);
    expect(screen.queryByRole("alert", { name: "Keyring warning" })).toBeNull();
  });
});

describe("settings", () => {
  it("shows the fallback warning where keys are entered, also after the banner was dismissed", () => {
    sessionStorage.setItem("tandem.keyringBannerDismissed", FALLBACK);
    setHostForTests(fakeHost("tauri", FALLBACK));
    useUi.setState({ settingsOpen: true });
    render(<SettingsDialog />);
    const notes = screen.getAllByRole("note").map((n) => n.textContent);
    // LLM profiles (API keys) and Backends (session keys).
    expect(notes).toEqual([FALLBACK, FALLBACK]);
    expect(screen.getByRole("region", { name: "LLM profiles" }).textContent).toContain(FALLBACK);
    expect(screen.getByRole("region", { name: "Backends" }).textContent).toContain(FALLBACK);
  });

  it("shows the warning once saving a key reports the fallback", async () => {
    const h = fakeHost("tauri", null, FALLBACK);
    setHostForTests(h);
    useUi.setState({ settingsOpen: true });
    render(<SettingsDialog />);
    expect(screen.queryAllByRole("note")).toEqual([]);
    fireEvent.change(screen.getByLabelText("Model"), { target: { value: "openai/gpt-5" } });
    fireEvent.change(screen.getByLabelText("API key"), { target: { value: "sk-test" } });
    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: "Add profile" }));
    });
    expect(await h.keyringGet("llm:" + useSettings.getState().profiles[0]?.id)).toBe("sk-test");
    expect(screen.getAllByRole("note").map((n) => n.textContent)).toEqual([FALLBACK, FALLBACK]);
  });

  it("shows why a key could not be deleted instead of dropping the error", async () => {
    const h = fakeHost("tauri", null);
    h.keyringDelete = async () => {
      throw new Error("keyring: the Secret Service did not answer within 4 s");
    };
    setHostForTests(h);
    useSettings.setState({ profiles: [{ id: "p1", name: "Mine", model: "openai/gpt-5", baseUrl: "", hasKey: true }] });
    useUi.setState({ settingsOpen: true });
    render(<SettingsDialog />);
    await act(async () => {
      fireEvent.click(screen.getByRole("button", { name: "delete" }));
    });
    const profiles = screen.getByRole("region", { name: "LLM profiles" });
    expect(profiles.textContent).toContain("the Secret Service did not answer within 4 s");
    // The profile is kept, as its key still is.
    expect(profiles.textContent).toContain("Mine");
  });

  it("shows no warning when the OS keyring holds the keys", () => {
    setHostForTests(fakeHost("tauri", null));
    useUi.setState({ settingsOpen: true });
    render(<SettingsDialog />);
    expect(screen.queryAllByRole("note")).toEqual([]);
  });
});
