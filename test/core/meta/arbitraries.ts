// Random command sequences for the property tests. A step is a template of small choices resolved against
// the current state (so epochs are often right and sometimes stale), which keeps the hit rate of accepted
// commands high while still covering every rejection. The resolved commands form the log.
import fc from "fast-check";
import { apply, emptyState, planReassignments, type Applied, type Command, type Coordinator, type MetaState } from "../../../src/core/meta/index.ts";

const NODE_IDS = ["a", "b", "c", "d"] as const;
const STREAM_NAMES = ["n1", "n2", "n3", "n4", "n5"] as const;

interface Step {
  readonly kind: Command["type"];
  readonly node: number;
  readonly other: number;
  readonly stream: number;
  /** -1: one below the current epoch (stale), 0: current, 1: one above. */
  readonly epochShift: -1 | 0 | 1;
  readonly slots: number;
  readonly flag: boolean;
  readonly advanceMs: number;
}

const KINDS: readonly Command["type"][] = [
  "RegisterNode",
  "RegisterNode",
  "SetSlots",
  "SetDraining",
  "CreateStream",
  "CreateStream",
  "ClaimStream",
  "ClaimStream",
  "DeleteStream",
  "PlaceStream",
  "PlaceStream",
  "OpenStream",
  "OpenStream",
  "CloseStream",
  "CloseStream",
  "BeginTransfer",
  "CompleteTransfer",
  "CompleteTransfer",
  "AcquireLease",
  "AcquireLease",
  "AcquireLease",
  "RenewLease",
  "DeclareDead",
  "DeclareDead",
  "ReassignStreams",
  "ReassignStreams",
  "ClaimTakeover",
  "ClaimTakeover",
  "CompleteTakeover",
  "CompleteTakeover",
  "CreateTable",
  "CreateTable",
  "AddPartition",
  "AddPartition",
  "DropTable",
  "CommitBucketSnapshot",
  "CommitBucketSnapshot",
  "RecordTiering",
];

const TABLE_NAMES = ["t1", "t2", "pt"] as const;
/** The definition of table "pt": partitioned by an int column, 2 buckets per partition (AddPartition parses it). */
const PARTITIONED_DEFINITION = {
  columns: [{ name: "day", type: "int", nullable: false }, { name: "id", type: "string", nullable: false }],
  primaryKey: ["day", "id"],
  bucketKey: ["id"],
  buckets: 2,
  partitionBy: "day",
};

/** Failover-heavy: the coordinator's commands and the takeovers, with enough of the rest to feed them. */
const FAILOVER_KINDS: readonly Command["type"][] = [
  "RegisterNode",
  "CreateStream",
  "ClaimStream",
  "PlaceStream",
  "OpenStream",
  "OpenStream",
  "CloseStream",
  "AcquireLease",
  "AcquireLease",
  "AcquireLease",
  "RenewLease",
  "DeclareDead",
  "DeclareDead",
  "DeclareDead",
  "ReassignStreams",
  "ReassignStreams",
  "ReassignStreams",
  "ReassignStreams",
  "ClaimTakeover",
  "ClaimTakeover",
  "CompleteTakeover",
  "CompleteTakeover",
];

const stepArbitrary = (kinds: readonly Command["type"][]): fc.Arbitrary<Step> => fc.record({
  kind: fc.constantFrom(...kinds),
  node: fc.nat({ max: NODE_IDS.length - 1 }),
  other: fc.nat({ max: NODE_IDS.length - 1 }),
  stream: fc.nat({ max: 7 }),
  epochShift: fc.constantFrom<-1 | 0 | 1>(0, 0, 0, 0, -1, 1),
  slots: fc.nat({ max: 4 }),
  flag: fc.boolean(),
  advanceMs: fc.nat({ max: 20_000 }),
});

export interface Scenario {
  /** Slots of the nodes registered before the random steps (a node with 0 slots takes no placements). */
  readonly bootSlots: readonly number[];
  /** Streams created, placed and (every other one) opened by their owner before the random steps. */
  readonly bootStreams: number;
  readonly steps: readonly Step[];
}

export const stepsArbitrary: fc.Arbitrary<Scenario> = fc.record({
  bootSlots: fc.array(fc.nat({ max: 3 }), { minLength: 0, maxLength: NODE_IDS.length }),
  bootStreams: fc.nat({ max: STREAM_NAMES.length }),
  steps: fc.array(stepArbitrary(KINDS), { minLength: 1, maxLength: 120, size: "large" }),
});

/** Every node registered with slots and streams on them from the start, then mostly failover commands. */
export const failoverStepsArbitrary: fc.Arbitrary<Scenario> = fc.record({
  bootSlots: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: NODE_IDS.length, maxLength: NODE_IDS.length }),
  bootStreams: fc.integer({ min: 2, max: STREAM_NAMES.length }),
  steps: fc.array(stepArbitrary(FAILOVER_KINDS), { minLength: 1, maxLength: 80, size: "large" }),
});

/** A log line: the command and the time it was applied at. */
interface Entry {
  readonly command: Command;
  readonly nowMs: number;
}

function shifted(base: number, shift: number): number {
  return Math.max(0, base + shift);
}

/** The lease holder at its epochs (the node itself when there is no lease); slots 4: one coordinator epoch back. */
function coordinatorFor(state: MetaState, step: Step, nodeId: string): Coordinator {
  const holder = state.lease?.holder ?? nodeId;
  const coordinatorEpoch = shifted(state.lease?.coordinatorEpoch ?? 0, step.slots === 4 ? -1 : 0);
  return { nodeId: holder, nodeEpoch: state.lease?.holderEpoch ?? state.nodes.get(holder)?.epoch ?? 1, coordinatorEpoch };
}

/** A node with a dead incarnation not taken over yet (picked by `pick`), else `fallback`. */
function deadNodeFor(state: MetaState, pick: number, fallback: string): string {
  const dead = [...state.nodes.values()].filter((node) => node.dead !== undefined);
  return dead.length === 0 ? fallback : (dead[pick % dead.length]?.id ?? fallback);
}

function resolve(state: MetaState, step: Step): Command {
  const nodeId = NODE_IDS[step.node] ?? "a";
  const other = NODE_IDS[step.other] ?? "b";
  const nodeEpoch = shifted(state.nodes.get(nodeId)?.epoch ?? 1, step.epochShift);
  const by = step.flag ? { nodeId, nodeEpoch } : undefined;
  const streams = [...state.streams.values()];
  const stream = streams.length === 0 ? undefined : streams[step.stream % streams.length];
  const streamId = step.stream === 7 || stream === undefined ? `s${step.stream + 1}` : stream.id;
  const withBy = <C extends Command>(command: C): C => (by === undefined ? command : { ...command, by });
  switch (step.kind) {
    case "RegisterNode":
      return { type: "RegisterNode", nodeId, nodeEpoch: shifted(state.nodes.get(nodeId)?.epoch ?? 0, step.epochShift === 0 ? 1 : step.epochShift === 1 ? 0 : -1), addr: `addr-${nodeId}-${step.other}`, slots: step.slots };
    case "SetSlots":
      return withBy({ type: "SetSlots", nodeId: other, slots: step.slots });
    case "SetDraining":
      return withBy({ type: "SetDraining", nodeId: other, draining: step.flag && step.slots > 2 });
    case "CreateStream":
      return withBy({ type: "CreateStream", name: STREAM_NAMES[step.stream % STREAM_NAMES.length] ?? "n1", config: step.slots === 0 ? { v: 2 } : {} });
    case "ClaimStream":
      return { type: "ClaimStream", name: STREAM_NAMES[step.stream % STREAM_NAMES.length] ?? "n1", config: step.slots === 0 ? { v: 2 } : {}, by: { nodeId, nodeEpoch } };
    case "DeleteStream":
      return withBy({ type: "DeleteStream", streamId });
    case "PlaceStream":
      return withBy({ type: "PlaceStream", streamId });
    case "OpenStream": {
      const opener = step.flag && stream?.owner != null ? stream.owner : nodeId;
      return { type: "OpenStream", streamId, nodeId: opener, nodeEpoch: shifted(state.nodes.get(opener)?.epoch ?? 1, step.epochShift) };
    }
    case "CloseStream": {
      const owner = stream?.owner ?? nodeId;
      return { type: "CloseStream", streamId, nodeId: owner, nodeEpoch: shifted(state.nodes.get(owner)?.epoch ?? 1, step.epochShift), epoch: shifted(stream?.epoch ?? 0, step.epochShift) };
    }
    case "BeginTransfer":
      return withBy({ type: "BeginTransfer", streamId, target: other });
    case "CompleteTransfer":
      return withBy({ type: "CompleteTransfer", streamId, closedEpoch: shifted(stream?.epoch ?? 0, step.epochShift) });
    case "AcquireLease":
      // A long lease half the time, so the coordinator commands after it are often accepted.
      return { type: "AcquireLease", nodeId, nodeEpoch, ttlMs: step.flag ? 30_000 : 300_000 };
    case "RenewLease":
      return { type: "RenewLease", nodeId, nodeEpoch, coordinatorEpoch: shifted(state.lease?.coordinatorEpoch ?? 0, step.epochShift), ttlMs: 30_000 };
    case "DeclareDead": {
      const coordinator = coordinatorFor(state, step, nodeId);
      // Mostly the owner of a stream (so the reassignments have something to move), else `nodeId`; the
      // coordinator itself (which DD5 refuses) only with flag.
      const candidate = step.flag ? nodeId : (stream?.owner ?? nodeId);
      const target = candidate === coordinator.nodeId && !step.flag ? other : candidate;
      return { type: "DeclareDead", nodeId: target, nodeEpoch: shifted(state.nodes.get(target)?.epoch ?? 1, step.epochShift), coordinator };
    }
    case "ReassignStreams": {
      // Mostly the tick's plan with every node but `nodeId` live; else (or when there is none) one arbitrary move.
      const live = new Set([...state.nodes.keys()].filter((id) => id !== nodeId));
      const planned = planReassignments(state, live, 1 + step.slots);
      const moves = planned.length > 0 && step.slots !== 0 ? planned : [{ streamId, target: other }];
      return { type: "ReassignStreams", moves, coordinator: coordinatorFor(state, step, nodeId) };
    }
    case "ClaimTakeover": {
      const deadId = deadNodeFor(state, step.node, nodeId);
      const dead = state.nodes.get(deadId)?.dead;
      // Another node than the dead one, mostly; flag with other the dead node itself: `nodeId` (maybe it too).
      const claimer = other === deadId && step.flag ? nodeId : other;
      return {
        type: "ClaimTakeover",
        nodeId: deadId,
        nodeEpoch: shifted(dead?.epoch ?? state.nodes.get(deadId)?.epoch ?? 1, step.epochShift),
        by: { nodeId: claimer, nodeEpoch: state.nodes.get(claimer)?.epoch ?? 1 },
        ttlMs: 1 + step.advanceMs,
      };
    }
    case "CompleteTakeover": {
      const deadId = deadNodeFor(state, step.node, nodeId);
      const dead = state.nodes.get(deadId)?.dead;
      // Mostly the claimer (flag: another node, which CO5 refuses unless it holds the claim).
      const completer = step.flag ? other : (dead?.claim?.by ?? other);
      return {
        type: "CompleteTakeover",
        nodeId: deadId,
        nodeEpoch: shifted(dead?.epoch ?? state.nodes.get(deadId)?.epoch ?? 1, step.epochShift),
        by: { nodeId: completer, nodeEpoch: state.nodes.get(completer)?.epoch ?? 1 },
      };
    }
    case "CreateTable": {
      // 1 to 3 buckets led by `nodeId`, `other`, `nodeId`; a different definition (TB3) when slots is 0.
      const leaders = [nodeId, other, nodeId].slice(0, 1 + (step.stream % 3));
      const name = TABLE_NAMES[step.stream % TABLE_NAMES.length] ?? "t1";
      const coordinator = coordinatorFor(state, step, nodeId);
      // "pt" is partitioned: created without buckets, which come with AddPartition.
      if (name === "pt") return { type: "CreateTable", name, definition: PARTITIONED_DEFINITION, leaders: [], streamConfig: {}, coordinator };
      return { type: "CreateTable", name, definition: { v: step.slots === 0 ? 2 : 1 }, leaders, streamConfig: {}, coordinator };
    }
    case "AddPartition": {
      // Mostly to "pt" (flag: an unpartitioned table, AP3), a value of three; one leader too few when slots is 0 (AP6).
      const table = step.flag ? (TABLE_NAMES[step.stream % 2] ?? "t1") : "pt";
      const leaders = step.slots === 0 ? [nodeId] : [nodeId, other];
      return { type: "AddPartition", table, value: step.stream % 3, leaders, streamConfig: {}, coordinator: coordinatorFor(state, step, nodeId) };
    }
    case "DropTable":
      return withBy({ type: "DropTable", name: TABLE_NAMES[step.stream % TABLE_NAMES.length] ?? "t1" });
    case "CommitBucketSnapshot": {
      // By the bucket's owner at its epoch (or off by the epoch shift: a stale leader, CB3).
      const table = TABLE_NAMES[step.stream % TABLE_NAMES.length] ?? "t1";
      const bucket = step.slots % 3;
      const streamId = state.tables.get(table)?.buckets[bucket]?.streamId ?? "s1";
      const stream = state.streams.get(streamId);
      const owner = stream?.owner ?? nodeId;
      const position = 10 * (step.stream + step.slots);
      return {
        type: "CommitBucketSnapshot",
        table,
        bucket,
        streamId,
        epoch: shifted(stream?.epoch ?? 1, step.epochShift),
        snapshot: { key: `snap-${position}`, coveredOffset: position, coveredPosition: position, rows: 1, bytes: 1 },
        by: { nodeId: owner, nodeEpoch: state.nodes.get(owner)?.epoch ?? 1 },
      };
    }
    case "RecordTiering": {
      // A version of 1 to 5 (a lower one than recorded is RT3's no-op), at the coordinator (slots 4: a stale epoch).
      const table = TABLE_NAMES[step.stream % TABLE_NAMES.length] ?? "t1";
      const version = 1 + ((step.stream + step.slots) % 5);
      return { type: "RecordTiering", table, tiered: { version, snapshotId: 100 + version, tieredAtMs: 1_000 * version, records: 10 * version }, coordinator: coordinatorFor(state, step, nodeId) };
    }
  }
}

export interface Transition {
  readonly before: MetaState;
  readonly entry: Entry;
  readonly applied: Applied;
}

/** Runs a scenario from an empty state; returns every transition (the resolved log with its outcomes). */
export function run(scenario: Scenario, startMs = 1_000_000): Transition[] {
  let state = emptyState();
  let nowMs = startMs;
  const transitions: Transition[] = [];
  const boot: (() => Command)[] = scenario.bootSlots.map((slots, i) => {
    const nodeId = NODE_IDS[i] ?? "a";
    return () => ({ type: "RegisterNode", nodeId, nodeEpoch: 1, addr: `addr-${nodeId}`, slots });
  });
  for (let i = 0; i < scenario.bootStreams; i++) {
    const streamId = `s${i + 1}`;
    boot.push(() => ({ type: "CreateStream", name: STREAM_NAMES[i] ?? "n1", config: {} }));
    boot.push(() => ({ type: "PlaceStream", streamId }));
    if (i % 2 === 0) {
      boot.push(() => {
        const owner = state.streams.get(streamId)?.owner ?? "a";
        return { type: "OpenStream", streamId, nodeId: owner, nodeEpoch: state.nodes.get(owner)?.epoch ?? 1 };
      });
    }
  }
  const resolveAfter = (step: Step): Command => {
    nowMs += step.advanceMs;
    return resolve(state, step);
  };
  // Boot commands first, then each step resolved against the state it lands on.
  const commands = [...boot, ...scenario.steps.map((step) => () => resolveAfter(step))];
  for (const next of commands) {
    const entry: Entry = { command: next(), nowMs };
    const applied = apply(state, entry.command, { nowMs });
    transitions.push({ before: state, entry, applied });
    state = applied.state;
  }
  return transitions;
}
