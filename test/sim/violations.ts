// What a simulation checker reports: a violation (or notice) named after the invariant it breaks
// (docs/architecture.md, "Invariants"; docs/simulation.md), and the names of those invariants.
import { incarnationLabel, type Ownership } from "./history.ts";

export interface Violation {
  readonly invariant: string;
  readonly message: string;
  /** Strings whose trace lines explain it (stream names, tokens, incarnations). */
  readonly focus: readonly string[];
  /** The step it happened at, when one is known: the trace excerpt is taken around it. */
  readonly step?: number;
}

export interface CheckResult {
  readonly violations: Violation[];
  readonly notices: Violation[];
}

export const INVARIANT = {
  oneWriter: "invariant 1 (one writer)",
  noLoss: "invariant 2 (no acknowledged append lost or reordered)",
  offsets: "invariant 3 (offsets increase; readers agree)",
  epochs: "invariant 5 (epochs never decrease; stale epochs refused)",
  transfers: "invariant 6 (a completion applies only to the close it names)",
  fatal: "fatal (only a bug explains it)",
  liveness: "liveness (the run settles and every stream reads back)",
  linearizable: "linearizability (each stream's client history is linearizable)",
  staleAnswer: "notice: a zombie answered from stale state",
  unhandled: "notice: unhandled promise rejection in mink",
  zombieWrite: "notice: a superseded incarnation wrote the manifest of a stream its successor opened",
} as const;

/** What the log had a stream as, for a message. */
export function describeOwnership(ownership: Ownership): string {
  const opener = ownership.opener === null ? "nobody" : incarnationLabel(ownership.opener);
  return `${ownership.ownership ?? "unknown"} by ${ownership.owner ?? "-"} at epoch ${ownership.epoch ?? "-"} (last opened by ${opener})`;
}
