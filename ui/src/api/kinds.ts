// Which `kind`s the generated unions know. The types (types.ts) are the unions Tandem's document
// declares; a server may still send another kind (a newer Tandem, or an upstream server's own
// events and tools), kept verbatim on the wire. Code that switches on `kind` first asks
// `isKnown…` and shows any other kind generically, then switches over the known kinds ending in
// `assertNever`: a kind added to the document without a case in the UI does not compile.
import { discriminatorValues } from "./tandem.gen";
import type { Action, Observation, WireEvent } from "./types";

function knows(kinds: readonly string[]): (v: { kind: string }) => boolean {
  const known = new Set(kinds);
  return (v) => known.has(v.kind);
}

/** Whether this action's kind is one of the generated union's (else show it generically). */
export const isKnownAction: (a: Action) => boolean = knows(discriminatorValues.Action);
/** Whether this observation's kind is one of the generated union's. */
export const isKnownObservation: (o: Observation) => boolean = knows(discriminatorValues.Observation);
/** Whether this event's kind is one of the generated union's. */
export const isKnownEvent: (e: WireEvent) => boolean = knows(discriminatorValues.Event);

/**
 * The `default` of a switch with a case for every known kind: it compiles only when no kind is
 * left. Reached at run time only by a kind an `isKnown…` check should have turned away.
 */
export function assertNever(x: never): never {
  throw new Error(`no case for ${JSON.stringify(x)}`);
}
