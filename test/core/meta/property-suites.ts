// The two kinds of random command sequences the properties of apply run over (properties.test.ts and
// properties-failover.test.ts): every command, and failover-heavy ones; and what they share.
import type fc from "fast-check";
import { COMMAND_TYPES, emptyState, type Command, type LogEntry, type MetaState } from "../../../src/core/meta/index.ts";
import { failoverStepsArbitrary, stepsArbitrary, type Scenario, type Transition } from "./arbitraries.ts";
import { propertyRuns } from "../../support/property-runs.ts";

export const RUNS = propertyRuns(200);

export function finalState(transitions: readonly Transition[]): MetaState {
  return transitions.at(-1)?.applied.state ?? emptyState();
}

/** The log MetaLog would keep: the accepted changes, numbered. */
export function logOf(transitions: readonly Transition[]): LogEntry[] {
  return transitions
    .filter((t) => t.applied.result.ok && t.applied.result.changed)
    .map((t, i) => ({ index: i + 1, command: t.entry.command, nowMs: t.entry.nowMs }));
}

const FAILOVER_TYPES: readonly Command["type"][] = ["DeclareDead", "ReassignStreams", "ClaimTakeover", "CompleteTakeover"];

export const SUITES: readonly { title: string; scenarios: fc.Arbitrary<Scenario>; exercised: readonly Command["type"][] }[] = [
  { title: "properties of apply over random command sequences", scenarios: stepsArbitrary, exercised: COMMAND_TYPES },
  {
    title: "properties of apply over failover-heavy command sequences",
    scenarios: failoverStepsArbitrary,
    exercised: ["OpenStream", "AcquireLease", ...FAILOVER_TYPES],
  },
];

