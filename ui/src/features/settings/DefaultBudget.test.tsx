// Settings' default budget: refused in the form when a limit is 0 or less (naming the field),
// kept in the host's preferences otherwise, and read back on the next start.
import { act, cleanup, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { setHostForTests } from "../../host";
import { createBrowserHost } from "../../host/browser";
import { DefaultBudget } from "./DefaultBudget";
import { useSettings } from "./settingsStore";

const saved = () => JSON.parse(localStorage.getItem("tandem.defaultBudget") ?? "null") as unknown;

describe("the default budget in Settings", () => {
  beforeEach(() => {
    localStorage.clear();
    setHostForTests(createBrowserHost());
    useSettings.getState().load();
  });
  afterEach(() => {
    cleanup();
    setHostForTests(null);
    useSettings.setState({ budget: {} });
  });

  const fill = (label: string, value: string) => fireEvent.change(screen.getByLabelText(label), { target: { value } });
  const save = () => fireEvent.click(screen.getByRole("button", { name: "Save budget" }));

  it("refuses 0 or a negative limit with a message naming the field, and saves nothing", async () => {
    render(<DefaultBudget />);
    expect(screen.getByRole("form", { name: "Default budget for new conversations" })).toBeTruthy();
    fill("Max cost (US$)", "0");
    save();
    expect((await screen.findByRole("alert")).textContent).toBe("Max cost must be more than 0");
    expect(screen.getByLabelText("Max cost (US$)").getAttribute("aria-invalid")).toBe("true");
    fill("Max cost (US$)", "");
    fill("Max tokens", "-100");
    save();
    await waitFor(() => expect(screen.getByRole("alert").textContent).toBe("Max tokens must be more than 0"));
    expect(saved()).toBeNull();
    expect(useSettings.getState().budget).toEqual({});
  });

  it("saves the limits to the preferences, reads them back on the next start, and empty is no limit", async () => {
    render(<DefaultBudget />);
    fill("Max cost (US$)", "0.50");
    fill("Max tokens", "100,000");
    save();
    expect((await screen.findByRole("status")).textContent).toBe("Saved: $0.50 · 100,000 tokens");
    expect(saved()).toEqual({ max_cost: 0.5, max_tokens: 100000 });
    // A fresh start reads them back.
    act(() => {
      useSettings.setState({ budget: {} });
      useSettings.getState().load();
    });
    expect(useSettings.getState().budget).toEqual({ max_cost: 0.5, max_tokens: 100000 });

    fill("Max cost (US$)", "");
    save();
    await waitFor(() => expect(saved()).toEqual({ max_tokens: 100000 }));
  });
});
