// Property tests over random command sequences (DESIGN.md section 10, invariants 1, 4, 5 and 6).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  apply,
  ChunkedMap,
  countAssigned,
  decodeSnapshot,
  emptyState,
  encodeSnapshot,
  isEligible,
  replay,
  type LogEntry,
  type MetaState,
} from "../../../src/core/meta/index.ts";
import { run, stepsArbitrary, type Transition } from "./arbitraries.ts";

const RUNS = 200;

function finalState(transitions: readonly Transition[]): MetaState {
  return transitions.at(-1)?.applied.state ?? emptyState();
}

/** The log MetaLog would keep: the accepted changes, numbered. */
function logOf(transitions: readonly Transition[]): LogEntry[] {
  return transitions
    .filter((t) => t.applied.result.ok && t.applied.result.changed)
    .map((t, i) => ({ index: i + 1, command: t.entry.command, nowMs: t.entry.nowMs }));
}

// Generous budgets: the machine is shared; these bound a run, they assert nothing about speed.
describe("properties of apply over random command sequences", { timeout: 120_000 }, () => {
  it("apply is deterministic: the same log applied twice gives the same state, and so does a replay from a snapshot", () => {
    fc.assert(
      fc.property(stepsArbitrary, fc.nat(), (steps, cut) => {
        const first = run(steps);
        const second = run(steps);
        const expected = encodeSnapshot(finalState(first));
        expect(encodeSnapshot(finalState(second))).toBe(expected);
        const log = logOf(first);
        expect(encodeSnapshot(replay(emptyState(), log))).toBe(expected);
        const at = log.length === 0 ? 0 : cut % log.length;
        const snapshot = encodeSnapshot(replay(emptyState(), log.slice(0, at)));
        expect(encodeSnapshot(replay(decodeSnapshot(snapshot), log.slice(at)))).toBe(expected);
      }),
      { numRuns: RUNS },
    );
  });

  it("rejected commands and no-ops change nothing (the same state object, untouched); changes add one version", () => {
    fc.assert(
      fc.property(stepsArbitrary, (steps) => {
        for (const { before, entry, applied } of run(steps)) {
          const encodedBefore = encodeSnapshot(before);
          if (!applied.result.ok || !applied.result.changed) {
            expect(applied.state).toBe(before);
          } else {
            expect(applied.state.version).toBe(before.version + 1);
          }
          // Applying never mutates its input, whatever the outcome.
          apply(before, entry.command, { nowMs: entry.nowMs });
          expect(encodeSnapshot(before)).toBe(encodedBefore);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("node epochs never decrease", () => {
    fc.assert(
      fc.property(stepsArbitrary, (steps) => {
        for (const { before, applied } of run(steps)) {
          for (const [id, node] of before.nodes) {
            expect(applied.state.nodes.get(id)?.epoch).toBeGreaterThanOrEqual(node.epoch);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("a stream has at most one owner: one record per id and name, a registered owner, and every open fences the last", () => {
    fc.assert(
      fc.property(stepsArbitrary, (steps) => {
        const highestEpoch = new Map<string, number>();
        for (const { entry, applied } of run(steps)) {
          const state = applied.state;
          const names = new Set<string>();
          for (const stream of state.streams.values()) {
            expect(names.has(stream.name)).toBe(false);
            names.add(stream.name);
            expect(state.streamIdsByName.get(stream.name)).toBe(stream.id);
            expect(stream.owner === null).toBe(stream.ownership === "unplaced");
            if (stream.owner !== null) expect(state.nodes.has(stream.owner)).toBe(true);
            expect(stream.closedAtEpoch).toBe(stream.ownership === "closed" ? stream.epoch : undefined);
            const transfer = state.transfers.get(stream.id);
            if (transfer !== undefined) expect(transfer.source).toBe(stream.owner);
          }
          expect(state.streamIdsByName.size).toBe(state.streams.size);
          for (const [streamId] of state.transfers.entries()) expect(state.streams.has(streamId)).toBe(true);
          expect(state.assigned).toEqual(countAssigned(state.streams.values()));
          if (entry.command.type === "OpenStream" && applied.result.ok) {
            const opened = applied.state.streams.get(entry.command.streamId);
            // A stream id is never reused, so each open must out-rank every earlier epoch of that stream.
            expect(opened?.epoch).toBeGreaterThan(highestEpoch.get(entry.command.streamId) ?? -1);
          }
          for (const stream of state.streams.values()) {
            expect(stream.epoch).toBeGreaterThanOrEqual(highestEpoch.get(stream.id) ?? 0);
            highestEpoch.set(stream.id, stream.epoch);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("placement always follows the slots ratio: lowest assigned/slots among eligible nodes, lowest id on ties", () => {
    fc.assert(
      fc.property(stepsArbitrary, (steps) => {
        for (const { before, entry, applied } of run(steps)) {
          if (entry.command.type !== "PlaceStream" || !applied.result.ok || !applied.result.changed) continue;
          const chosen = applied.state.streams.get(entry.command.streamId)?.owner;
          const load = countAssigned(before.streams.values());
          const ratio = (id: string, slots: number): number => (load.get(id) ?? 0) / slots;
          const best = [...before.nodes.values()]
            .filter(isEligible)
            .sort((x, y) => ratio(x.id, x.slots) - ratio(y.id, y.slots) || (x.id < y.id ? -1 : 1))[0];
          expect(chosen).toBe(best?.id);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("a stale CompleteTransfer changes nothing", () => {
    fc.assert(
      fc.property(stepsArbitrary, fc.nat({ max: 3 }), (steps, back) => {
        const state = finalState(run(steps));
        for (const [streamId] of state.transfers.entries()) {
          const stream = state.streams.get(streamId);
          if (stream === undefined) continue;
          const staleEpoch = stream.epoch - 1 - back;
          if (staleEpoch < 0) continue;
          const applied = apply(state, { type: "CompleteTransfer", streamId, closedEpoch: staleEpoch }, { nowMs: 0 });
          expect(applied.result.ok).toBe(false);
          expect(applied.state).toBe(state);
        }
        for (const { before, entry, applied } of run(steps)) {
          if (entry.command.type !== "CompleteTransfer") continue;
          const stream = before.streams.get(entry.command.streamId);
          const exact = stream?.ownership === "closed" && stream.closedAtEpoch === entry.command.closedEpoch;
          if (!exact) expect(applied.state).toBe(before);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("the random sequences exercise every command accepted and rejected (the generator is not vacuous)", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(stepsArbitrary, (steps) => {
        for (const { entry, applied } of run(steps)) seen.add(`${entry.command.type}:${applied.result.ok ? "ok" : "rejected"}`);
      }),
      { numRuns: RUNS, seed: 42 },
    );
    for (const type of ["RegisterNode", "CreateStream", "PlaceStream", "OpenStream", "CloseStream", "BeginTransfer", "CompleteTransfer", "AcquireLease", "RenewLease", "DeleteStream", "SetSlots", "SetDraining"]) {
      expect(seen).toContain(`${type}:ok`);
      expect(seen).toContain(`${type}:rejected`);
    }
  });
});

describe("ChunkedMap", { timeout: 120_000 }, () => {
  it("behaves like a Map, and every version stays as it was", () => {
    const op = fc.record({ key: fc.string({ maxLength: 3 }), value: fc.integer(), remove: fc.boolean() });
    fc.assert(
      fc.property(fc.array(op, { maxLength: 200 }), (ops) => {
        let map = ChunkedMap.empty<number>();
        const model = new Map<string, number>();
        const history: [ChunkedMap<number>, Map<string, number>][] = [];
        for (const { key, value, remove } of ops) {
          map = remove ? map.delete(key) : map.set(key, value);
          if (remove) model.delete(key);
          else model.set(key, value);
          history.push([map, new Map(model)]);
        }
        for (const [version, expected] of history) {
          expect(version.size).toBe(expected.size);
          expect(new Map(version.entries())).toEqual(expected);
        }
        expect([...ChunkedMap.fromEntries(map.entries()).entries()]).toEqual([...map.entries()]);
      }),
      { numRuns: 100 },
    );
  });
});
