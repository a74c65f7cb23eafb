// Property tests over random command sequences (docs/architecture.md, invariants 1, 4, 5 and 6), twice: over
// sequences of every command, and over failover-heavy ones (declarations, reassignments, takeovers).
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  apply,
  checkCoordinator,
  ChunkedMap,
  COMMAND_TYPES,
  countAssigned,
  countsAsAssigned,
  ownedCountsByNode,
  deadToDeclare,
  decodeSnapshot,
  emptyState,
  encodeSnapshot,
  isDeclaredDead,
  isEligible,
  isTakenOver,
  planReassignments,
  replay,
  type Command,
  type LogEntry,
  type MetaState,
} from "../../../src/core/meta/index.ts";
import { failoverStepsArbitrary, run, stepsArbitrary, type Scenario, type Transition } from "./arbitraries.ts";
import { propertyRuns } from "../../support/property-runs.ts";

const RUNS = propertyRuns(200);

function finalState(transitions: readonly Transition[]): MetaState {
  return transitions.at(-1)?.applied.state ?? emptyState();
}

/** The log MetaLog would keep: the accepted changes, numbered. */
function logOf(transitions: readonly Transition[]): LogEntry[] {
  return transitions
    .filter((t) => t.applied.result.ok && t.applied.result.changed)
    .map((t, i) => ({ index: i + 1, command: t.entry.command, nowMs: t.entry.nowMs }));
}

const FAILOVER_TYPES: readonly Command["type"][] = ["DeclareDead", "ReassignStreams", "ClaimTakeover", "CompleteTakeover"];

const SUITES: readonly { title: string; scenarios: fc.Arbitrary<Scenario>; exercised: readonly Command["type"][] }[] = [
  { title: "properties of apply over random command sequences", scenarios: stepsArbitrary, exercised: COMMAND_TYPES },
  {
    title: "properties of apply over failover-heavy command sequences",
    scenarios: failoverStepsArbitrary,
    exercised: ["OpenStream", "AcquireLease", ...FAILOVER_TYPES],
  },
];

// Generous budgets: the machine is shared; these bound a run, they assert nothing about speed.
for (const { title, scenarios, exercised } of SUITES) describe(title, { timeout: 120_000 }, () => {
  it("apply is deterministic: the same log applied twice gives the same state, and so does a replay from a snapshot", () => {
    fc.assert(
      fc.property(scenarios, fc.nat(), (steps, cut) => {
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
      fc.property(scenarios, (steps) => {
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
      fc.property(scenarios, (steps) => {
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
      fc.property(scenarios, (steps) => {
        const highestEpoch = new Map<string, number>();
        for (const { entry, applied } of run(steps)) {
          const state = applied.state;
          const names = new Set<string>();
          for (const stream of state.streams.values()) {
            expect(names.has(stream.name)).toBe(false);
            names.add(stream.name);
            expect(state.streams.idByName(stream.name)).toBe(stream.id);
            expect(stream.owner === null).toBe(stream.ownership === "unplaced");
            if (stream.owner !== null) expect(state.nodes.has(stream.owner)).toBe(true);
            expect(stream.closedAtEpoch).toBe(stream.ownership === "closed" ? stream.epoch : undefined);
            const transfer = state.transfers.get(stream.id);
            if (transfer !== undefined) expect(transfer.source).toBe(stream.owner);
          }
          expect([...state.streams.namesFrom("")].length).toBe(state.streams.size);
          for (const [streamId] of state.transfers.entries()) expect(state.streams.get(streamId)).toBeDefined();
          expect(state.assigned).toEqual(countAssigned(state.streams.values()));
          expect(state.owned).toEqual(ownedCountsByNode(state.streams.values()));
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

  it("placement always follows the slots ratio: lowest assigned/slots among eligible nodes; ties to the proposer, else the lowest id", () => {
    fc.assert(
      fc.property(scenarios, (steps) => {
        for (const { before, entry, applied } of run(steps)) {
          const command = entry.command;
          if (!applied.result.ok || !applied.result.changed) continue;
          // A PlaceStream that placed, or a ClaimStream of a name that had no owner before it (CM4).
          let streamId: string | undefined;
          if (command.type === "PlaceStream") streamId = command.streamId;
          if (command.type === "ClaimStream") {
            const known = before.streams.idByName(command.name);
            const had = known === undefined ? undefined : before.streams.get(known);
            if (had === undefined || had.ownership === "unplaced") streamId = applied.state.streams.idByName(command.name);
          }
          if (streamId === undefined) continue;
          const chosen = applied.state.streams.get(streamId)?.owner;
          const load = countAssigned(before.streams.values());
          const ratio = (id: string, slots: number): number => (load.get(id) ?? 0) / slots;
          const proposer = "by" in command ? command.by?.nodeId : undefined;
          const rank = (id: string): number => (id === proposer ? 0 : 1);
          const best = [...before.nodes.values()]
            .filter(isEligible)
            .sort((x, y) => ratio(x.id, x.slots) - ratio(y.id, y.slots) || rank(x.id) - rank(y.id) || (x.id < y.id ? -1 : 1))[0];
          expect(chosen).toBe(best?.id);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("a stale CompleteTransfer changes nothing", () => {
    fc.assert(
      fc.property(scenarios, fc.nat({ max: 3 }), (steps, back) => {
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

  it("every state round-trips through a snapshot: encode(decode(text)) === text, and the derived parts are rebuilt", () => {
    fc.assert(
      fc.property(scenarios, (steps) => {
        for (const { applied } of run(steps)) {
          const text = encodeSnapshot(applied.state);
          const decoded = decodeSnapshot(text);
          expect(encodeSnapshot(decoded)).toBe(text);
          expect(decoded.nodes).toEqual(applied.state.nodes);
          expect(decoded.assigned).toEqual(applied.state.assigned);
          expect([...decoded.streams.values()]).toEqual([...applied.state.streams.values()]);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("failover records stay consistent, and an orphan can always be released by a takeover", () => {
    fc.assert(
      fc.property(scenarios, (steps) => {
        for (const { applied } of run(steps)) {
          const state = applied.state;
          for (const node of state.nodes.values()) {
            // The declared epoch was refused by moving the record past it; a completed takeover is older still.
            if (node.dead !== undefined) expect(node.dead.epoch).toBeLessThan(node.epoch);
            if (node.takenOver !== undefined) expect(node.takenOver).toBeLessThan(node.epoch);
            if (node.dead !== undefined && node.takenOver !== undefined) expect(node.takenOver).toBeLessThan(node.dead.epoch);
            if (node.dead?.claim !== undefined) {
              expect(state.nodes.has(node.dead.claim.by)).toBe(true);
              expect(Number.isSafeInteger(node.dead.claim.expiresAtMs)).toBe(true);
            }
          }
          for (const stream of state.streams.values()) {
            if (stream.orphanOf === undefined) continue;
            expect(stream.ownership === "placed" || stream.ownership === "closed").toBe(true);
            const deadNode = state.nodes.get(stream.orphanOf.node);
            expect(deadNode).toBeDefined();
            // Either its takeover is done, or a dead incarnation covering it is still there to take over.
            const released = isTakenOver(state, stream.orphanOf.node, stream.orphanOf.nodeEpoch);
            expect(released || (deadNode?.dead?.epoch ?? -1) >= stream.orphanOf.nodeEpoch).toBe(true);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("only the live coordinator changes anything with DeclareDead or ReassignStreams", () => {
    fc.assert(
      fc.property(scenarios, (steps) => {
        for (const { before, entry, applied } of run(steps)) {
          const command = entry.command;
          if (command.type !== "DeclareDead" && command.type !== "ReassignStreams") continue;
          if (checkCoordinator(before, command.coordinator, entry.nowMs) !== null) {
            expect(applied.result.ok).toBe(false);
            expect(applied.state).toBe(before);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("reassignment moves streams only off declared-dead owners, onto live eligible targets, at the same epoch", () => {
    fc.assert(
      fc.property(scenarios, (steps) => {
        for (const { before, entry, applied } of run(steps)) {
          if (entry.command.type !== "ReassignStreams" || !applied.result.ok || !applied.result.changed) continue;
          const targets = new Map(entry.command.moves.map((move) => [move.streamId, move.target]));
          for (const stream of before.streams.values()) {
            const after = applied.state.streams.get(stream.id);
            if (after === stream) continue;
            const owner = stream.owner === null ? undefined : before.nodes.get(stream.owner);
            expect(owner !== undefined && isDeclaredDead(owner)).toBe(true);
            expect(stream.ownership === "placed" || stream.ownership === "opened").toBe(true);
            expect(after?.owner).toBe(targets.get(stream.id));
            expect(after?.ownership).toBe("placed");
            expect(after?.epoch).toBe(stream.epoch);
            const target = applied.state.nodes.get(after?.owner ?? "");
            expect(target !== undefined && isEligible(target) && !isDeclaredDead(target)).toBe(true);
            expect(applied.state.transfers.has(stream.id)).toBe(false);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("an open never passes a dead incarnation that is not taken over", () => {
    fc.assert(
      fc.property(scenarios, (steps) => {
        for (const { before, entry, applied } of run(steps)) {
          if (entry.command.type !== "OpenStream" || !applied.result.ok) continue;
          const stream = before.streams.get(entry.command.streamId);
          if (stream?.orphanOf !== undefined) expect(isTakenOver(before, stream.orphanOf.node, stream.orphanOf.nodeEpoch)).toBe(true);
          if (stream?.ownership !== "closed") expect(before.nodes.get(entry.command.nodeId)?.dead).toBeUndefined();
          expect(applied.state.streams.get(entry.command.streamId)?.orphanOf).toBeUndefined();
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("the tick declares dead only incarnations that registered, never the coordinator, a live node or one declared already", () => {
    fc.assert(
      fc.property(scenarios, fc.nat({ max: 15 }), (steps, liveMask) => {
        const registered = new Map<string, Set<number>>();
        for (const { entry, applied } of run(steps)) {
          if (entry.command.type === "RegisterNode" && applied.result.ok && applied.result.changed) {
            const epochs = registered.get(entry.command.nodeId) ?? new Set<number>();
            registered.set(entry.command.nodeId, epochs.add(entry.command.nodeEpoch));
          }
          const state = applied.state;
          const live = new Set([...state.nodes.keys()].filter((_, i) => (liveMask & (1 << i)) !== 0));
          const coordinatorId = state.lease?.holder ?? "a";
          for (const node of deadToDeclare(state, live, coordinatorId)) {
            expect(registered.get(node.id)?.has(node.epoch)).toBe(true);
            expect(live.has(node.id)).toBe(false);
            expect(node.id).not.toBe(coordinatorId);
            expect(isDeclaredDead(node)).toBe(false);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("the tick's reassignment plan is bounded, moves only orphans to live eligible nodes, and is empty only when it must be", () => {
    fc.assert(
      fc.property(scenarios, fc.nat({ max: 15 }), fc.nat({ max: 4 }), (steps, liveMask, limit) => {
        for (const { applied } of run(steps)) {
          const state = applied.state;
          const live = new Set([...state.nodes.keys()].filter((_, i) => (liveMask & (1 << i)) !== 0));
          const moves = planReassignments(state, live, limit);
          expect(moves.length).toBeLessThanOrEqual(limit);
          expect(new Set(moves.map((move) => move.streamId)).size).toBe(moves.length);
          for (const { streamId, target } of moves) {
            const stream = state.streams.get(streamId);
            const owner = stream?.owner == null ? undefined : state.nodes.get(stream.owner);
            expect(owner !== undefined && isDeclaredDead(owner)).toBe(true);
            expect(stream?.ownership === "placed" || stream?.ownership === "opened").toBe(true);
            const node = state.nodes.get(target);
            expect(live.has(target) && node !== undefined && isEligible(node) && !isDeclaredDead(node)).toBe(true);
          }
          const left = [...state.streams.values()].some((stream) => {
            const owner = stream.owner === null ? undefined : state.nodes.get(stream.owner);
            return owner !== undefined && isDeclaredDead(owner) && countsAsAssigned(stream);
          });
          const canTake = [...state.nodes.values()].some((node) => live.has(node.id) && isEligible(node) && !isDeclaredDead(node));
          if (limit > 0 && left && canTake) expect(moves.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("the random sequences exercise every command accepted and rejected (the generator is not vacuous)", () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(scenarios, (steps) => {
        for (const { entry, applied } of run(steps)) seen.add(`${entry.command.type}:${applied.result.ok ? "ok" : "rejected"}`);
      }),
      // Never scaled down (property-runs.ts): the claim is about this many cases from this seed.
      { numRuns: 200, seed: 42 },
    );
    for (const type of exercised) {
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
      { numRuns: propertyRuns(100) },
    );
  });
});
