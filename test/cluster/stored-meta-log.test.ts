// The metadata log kept as the MetaLog keeps it (src/metadata/stored-state.ts: stream records in rows, a
// head, the rest as a snapshot without streams) against the same log in memory: over random command
// sequences (every command, and failover-heavy ones), every proposal gets the same answer, the stored state
// reads as the same state after every entry, a reopen at any point (a restart: nothing replayed) goes on
// from the same state, and no entry leaves a stream change unwritten to the rows.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { emptyState, type MetaState } from "../../src/core/meta/index.ts";
import { MemoryJournal } from "../../src/metadata/memory-journal.ts";
import { openMetaLog } from "../../src/metadata/meta-log-persistence.ts";
import { MetaLogService } from "../../src/metadata/meta-log-service.ts";
import { metaLogTuning } from "../../src/metadata/meta-log-tuning.ts";
import { DEFAULT_EDGE_LIMITS } from "../../src/core/edge-limits.ts";
import { failoverStepsArbitrary, run, stepsArbitrary, type Scenario } from "../core/meta/arbitraries.ts";
import { MemoryMetaLogTables } from "../support/memory-meta-log-tables.ts";
import { propertyRuns } from "../support/property-runs.ts";

const byKey = <T>(entries: Iterable<readonly [string, T]>): (readonly [string, T])[] => [...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

/** The state with every collection in key order: two states are the same state when these are equal. */
function canonical(state: MetaState): unknown {
  return {
    version: state.version,
    nextStreamSeq: state.nextStreamSeq,
    nodes: byKey(state.nodes),
    size: state.streams.size,
    streams: byKey([...state.streams.values()].map((record) => [record.id, record] as const)),
    names: [...state.streams.namesFrom("")].map((name) => [name, state.streams.idByName(name)]),
    transfers: byKey(state.transfers.entries()),
    assigned: byKey(state.assigned),
    owned: byKey(state.owned),
    lease: state.lease,
    tables: byKey(state.tables),
  };
}

function storedMatchesMemory(scenario: Scenario, reopenAt: number): void {
  const transitions = run(scenario);
  let nowMs = 0;
  const clock = (): number => nowMs;
  const tuning = { ...metaLogTuning(DEFAULT_EDGE_LIMITS, 10_000), snapshotEveryEntries: 7, watchRetainEntries: 3 };
  const tables = new MemoryMetaLogTables();
  let stored = openMetaLog(tables, tuning, clock);
  const memory = new MetaLogService(emptyState(), new MemoryJournal(), { now: clock, admission: tuning });
  transitions.forEach(({ entry }, step) => {
    if (step === reopenAt % (transitions.length + 1)) stored = openMetaLog(tables, tuning, clock);
    nowMs = entry.nowMs;
    expect(stored.propose(entry.command)).toEqual(memory.propose(entry.command));
    expect(canonical(stored.state)).toEqual(canonical(memory.state));
    expect(stored.metaBytesHeld).toBe(memory.metaBytesHeld);
  });
  // Every change is in the rows: a reopen reads exactly the state the log ended with.
  expect(canonical(openMetaLog(tables, tuning, clock).state)).toEqual(canonical(memory.state));
  expect([...tables.streamRows.all()].length).toBe(memory.state.streams.size);
}

describe("the stored metadata log decides and answers as the log in memory", { timeout: 120_000 }, () => {
  it("over random command sequences of every command, reopened at a random entry", () => {
    fc.assert(fc.property(stepsArbitrary, fc.nat(), storedMatchesMemory), { numRuns: propertyRuns(150) });
  });

  it("over failover-heavy sequences (declarations, reassignments, takeovers), reopened at a random entry", () => {
    fc.assert(fc.property(failoverStepsArbitrary, fc.nat(), storedMatchesMemory), { numRuns: propertyRuns(150) });
  });
});
