import { describe, expect, it } from "vitest";
import { assertNever, isKnownAction, isKnownEvent, isKnownObservation } from "./kinds";
import { discriminatorValues } from "./tandem.gen";
import type { Action, ActionKind, EventKind, ObservationKind } from "./types";

// A switch over the known action kinds that forgets one does not compile: `a` is not `never` in
// its default. (tsc checks this file; the directive fails the typecheck once the error is gone.)
export function headlineMissingACase(a: Action): string {
  switch (a.kind) {
    case "TerminalAction":
      return a.command;
    default:
      // @ts-expect-error every kind but TerminalAction is left, so `a` is not `never`
      return assertNever(a);
  }
}

describe("kinds", () => {
  it("lists what the generated unions hold, and tells the other kinds apart", () => {
    const action: readonly ActionKind[] = discriminatorValues.Action;
    const observation: readonly ObservationKind[] = discriminatorValues.Observation;
    const event: readonly EventKind[] = discriminatorValues.Event;
    expect(action).toContain("TerminalAction");
    expect(observation).toContain("TerminalObservation");
    expect(event).toContain("ActionEvent");
    expect(isKnownAction({ kind: "TerminalAction", command: "ls" })).toBe(true);
    // An upstream server's kinds that Tandem's document does not declare.
    const upstream = JSON.parse('{"kind": "ExecuteBashAction", "command": "ls"}');
    expect(isKnownAction(upstream)).toBe(false);
    expect(isKnownObservation(JSON.parse('{"kind": "ExecuteBashObservation"}'))).toBe(false);
    expect(isKnownEvent(JSON.parse('{"kind": "TokenEvent", "id": "t", "timestamp": "", "source": "agent"}'))).toBe(false);
  });
});
