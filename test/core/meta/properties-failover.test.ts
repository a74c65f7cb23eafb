// Property tests of the failover rules over random command sequences (docs/failover.md), over sequences of
// every command and over failover-heavy ones: records stay consistent, only the live coordinator acts, and
// the tick's declarations and reassignment plans stay within their rules.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  checkCoordinator,
  countsAsAssigned,
  deadToDeclare,
  isDeclaredDead,
  isEligible,
  isTakenOver,
  planReassignments,
} from "../../../src/core/meta/index.ts";
import { run } from "./arbitraries.ts";
import { RUNS, SUITES } from "./property-suites.ts";

// Generous budgets: the machine is shared; these bound a run, they assert nothing about speed.
for (const { title, scenarios } of SUITES) describe(`${title}: failover`, { timeout: 120_000 }, () => {
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
});
