// The coordinator tick's plan (src/core/meta/failover-plan.ts): which incarnations to declare dead, and
// where a declared-dead node's streams go, in bounded batches.
import { describe, expect, it } from "vitest";
import {
  apply,
  deadToDeclare,
  planReassignments,
  type Command,
  type CommandOf,
  type Coordinator,
  type MetaState,
  type ReassignMove,
} from "../../../src/core/meta/index.ts";
import { build, create, CTX, expectChange, register } from "./fixtures.ts";

const COORD: Coordinator = { nodeId: "a", nodeEpoch: 1, coordinatorEpoch: 1 };
const acquire: CommandOf<"AcquireLease"> = { type: "AcquireLease", nodeId: "a", nodeEpoch: 1, ttlMs: 30_000 };
const declare = (nodeId: string, nodeEpoch = 1): CommandOf<"DeclareDead"> => ({ type: "DeclareDead", nodeId, nodeEpoch, coordinator: COORD });
const reassign = (moves: readonly ReassignMove[]): CommandOf<"ReassignStreams"> => ({ type: "ReassignStreams", moves, coordinator: COORD });
const takeOver = (nodeId: string, nodeEpoch: number, by: string): Command[] => [
  { type: "ClaimTakeover", nodeId, nodeEpoch, by: { nodeId: by, nodeEpoch: 1 }, ttlMs: 30_000 },
  { type: "CompleteTakeover", nodeId, nodeEpoch, by: { nodeId: by, nodeEpoch: 1 } },
];
const place = (streamId: string): CommandOf<"PlaceStream"> => ({ type: "PlaceStream", streamId });
const open = (streamId: string, nodeId: string): CommandOf<"OpenStream"> => ({ type: "OpenStream", streamId, nodeId, nodeEpoch: 1 });
const setSlots = (nodeId: string, slots: number): CommandOf<"SetSlots"> => ({ type: "SetSlots", nodeId, slots });

/**
 * a: the coordinator (no slots); b: `count` streams (s1..s<count>, every other one opened), placed while
 * the other nodes had no slots; then `others` registered with their slots.
 */
function withStreamsOnB(count: number, others: readonly [id: string, slots: number][] = [["c", 1], ["d", 1]]): MetaState {
  const commands: Command[] = [register("a", 1, 0), register("b"), acquire];
  for (let i = 1; i <= count; i++) commands.push(create(`n${i}`), place(`s${i}`));
  for (let i = 1; i <= count; i += 2) commands.push(open(`s${i}`, "b"));
  for (const [id, slots] of others) commands.push(register(id, 1, slots));
  return build(commands);
}

function targets(moves: readonly ReassignMove[]): string[] {
  return moves.map((move) => move.target);
}

describe("deadToDeclare", () => {
  const state = build([register("a"), register("b"), register("c", 4), register("d")]);
  it("lists the registered nodes that are not live, at their epoch", () => {
    expect(deadToDeclare(state, new Set(["a", "b"]), "a").map((node) => [node.id, node.epoch])).toEqual([
      ["c", 4],
      ["d", 1],
    ]);
    expect(deadToDeclare(state, new Set(["a", "b", "c", "d"]), "a")).toEqual([]);
  });
  it("never lists the coordinator, live or not", () => {
    expect(deadToDeclare(state, new Set(), "a").map((node) => node.id)).toEqual(["b", "c", "d"]);
  });
  it("never lists a node already declared dead at its epoch", () => {
    const dead = build([acquire, declare("b")], state);
    expect(deadToDeclare(dead, new Set(["a"]), "a").map((node) => node.id)).toEqual(["c", "d"]);
  });
  it("never lists a node declared dead and taken over that has not registered again", () => {
    const takenOver = build([acquire, declare("b"), ...takeOver("b", 1, "a")], state);
    expect(takenOver.nodes.get("b")).toMatchObject({ epoch: 2, takenOver: 1 });
    expect(takenOver.nodes.get("b")?.dead).toBeUndefined();
    expect(deadToDeclare(takenOver, new Set(["a"]), "a").map((node) => node.id)).toEqual(["c", "d"]);
  });
  it("lists again a node that registered after being declared dead and stopped again, at its new epoch", () => {
    const back = build([acquire, declare("b"), register("b", 9)], state);
    expect(deadToDeclare(back, new Set(["a", "b"]), "a").map((node) => node.id)).toEqual(["c", "d"]);
    expect(deadToDeclare(back, new Set(["a"]), "a").map((node) => [node.id, node.epoch])).toEqual([
      ["b", 9],
      ["c", 4],
      ["d", 1],
    ]);
    // Also when its earlier incarnation was taken over first.
    const takenOverThenBack = build([acquire, declare("b"), ...takeOver("b", 1, "a"), register("b", 9)], state);
    expect(deadToDeclare(takenOverThenBack, new Set(["a", "c", "d"]), "a").map((node) => [node.id, node.epoch])).toEqual([["b", 9]]);
    // The plan is accepted: that incarnation is declared dead in turn.
    const again = apply(takenOverThenBack, declare("b", 9), CTX);
    expect(expectChange(takenOverThenBack, again).node).toMatchObject({ epoch: 10, dead: { epoch: 9 }, takenOver: 1 });
    expect(deadToDeclare(again.state, new Set(["a", "c", "d"]), "a")).toEqual([]);
  });
});

describe("planReassignments", () => {
  it("sends each stream to the least loaded live eligible node, counting the moves before it; ties go to the lowest id", () => {
    const state = build([declare("b")], withStreamsOnB(4));
    const moves = planReassignments(state, new Set(["a", "c", "d"]), 10);
    expect(targets(moves)).toEqual(["c", "d", "c", "d"]);
    expect(moves.map((move) => move.streamId).sort()).toEqual(["s1", "s2", "s3", "s4"]);
  });
  it("weighs the load by slots and counts the streams a node already has", () => {
    // d has three slots; c already has a stream of its own.
    const state = build([create("own"), place("s7"), setSlots("d", 3), declare("b")], withStreamsOnB(6, [["c", 1], ["d", 0]]));
    expect(state.assigned.get("c")).toBe(1);
    const moves = planReassignments(state, new Set(["a", "c", "d"]), 10);
    // d at 0/3, 1/3, 2/3 beats c at 1/1; d at 3/3 ties c at 1/1: c (the lower id); then d (3/3, 4/3) beats c at 2/1.
    expect(targets(moves)).toEqual(["d", "d", "d", "c", "d", "d"]);
  });
  it("never targets a node that is not live, has no slots, drains or is declared dead", () => {
    const state = build(
      [register("e", 1, 0), register("f"), { type: "SetDraining", nodeId: "f", draining: true }, register("g"), declare("g"), declare("b")],
      withStreamsOnB(3),
    );
    // c is not live; d is the only live eligible node (a has no slots; e none; f drains; g is dead).
    const moves = planReassignments(state, new Set(["a", "d", "e", "f", "g"]), 10);
    expect(targets(moves)).toEqual(["d", "d", "d"]);
  });
  it("is bounded by the limit; the next plan picks up what is left", () => {
    let state = build([declare("b")], withStreamsOnB(5));
    const live = new Set(["a", "c", "d"]);
    expect(planReassignments(state, live, 0)).toEqual([]);
    const first = planReassignments(state, live, 2);
    expect(first).toHaveLength(2);
    state = build([reassign(first)], state);
    const second = planReassignments(state, live, 2);
    expect(second).toHaveLength(2);
    expect(second.map((move) => move.streamId)).not.toContain(first[0]?.streamId);
    state = build([reassign(second)], state);
    // The earlier batches count: the last one goes to whoever has fewer now.
    const third = planReassignments(state, live, 2);
    expect(third).toHaveLength(1);
    state = build([reassign(third)], state);
    expect(planReassignments(state, live, 2)).toEqual([]);
    expect(state.assigned.get("b")).toBeUndefined();
    expect([...state.assigned.values()].sort()).toEqual([2, 3]);
  });
  it("moves only placed or opened streams of declared-dead owners", () => {
    const base = withStreamsOnB(2);
    // s3 unplaced; s4 on c (live); s1 closed by b before it died.
    const state = build(
      [
        create("u"),
        create("v"),
        place("s4"),
        { type: "CloseStream", streamId: "s1", nodeId: "b", nodeEpoch: 1, epoch: 1 },
        declare("b"),
      ],
      base,
    );
    expect(state.streams.get("s4")?.owner).toBe("c");
    expect(planReassignments(state, new Set(["a", "c", "d"]), 10).map((move) => move.streamId)).toEqual(["s2"]);
    // A live node's streams, or those of a node not declared dead (only silent), are never planned.
    expect(planReassignments(base, new Set(["a", "c", "d"]), 10)).toEqual([]);
    // A node declared dead that registered again is no longer an orphan source.
    const back = build([register("b", 7)], state);
    expect(planReassignments(back, new Set(["a", "b", "c", "d"]), 10)).toEqual([]);
  });
  it("still moves what is left on a declared-dead node after its takeover completed", () => {
    const state = build([declare("b"), ...takeOver("b", 1, "c")], withStreamsOnB(2));
    expect(planReassignments(state, new Set(["a", "c", "d"]), 10).map((move) => move.streamId).sort()).toEqual(["s1", "s2"]);
  });
  it("is empty when no live node can take the streams", () => {
    const state = build([declare("b")], withStreamsOnB(3));
    expect(planReassignments(state, new Set(["a"]), 10)).toEqual([]);
    expect(planReassignments(state, new Set(), 10)).toEqual([]);
    const noSlots = build([setSlots("c", 0), setSlots("d", 0)], state);
    expect(planReassignments(noSlots, new Set(["a", "c", "d"]), 10)).toEqual([]);
  });
  it("is empty when nobody is declared dead", () => {
    const state = withStreamsOnB(3);
    expect(planReassignments(state, new Set(["a", "c", "d"]), 10)).toEqual([]);
  });
  it("a plan is accepted as one ReassignStreams entry that moves every stream in it", () => {
    const state = build([declare("b")], withStreamsOnB(4));
    const moves = planReassignments(state, new Set(["a", "c", "d"]), 10);
    const applied = apply(state, reassign(moves), CTX);
    const { streams, skipped } = expectChange(state, applied);
    expect(skipped).toEqual([]);
    expect(streams.map((stream) => [stream.id, stream.owner])).toEqual(moves.map((move) => [move.streamId, move.target]));
    expect(applied.state.assigned).toEqual(new Map([["c", 2], ["d", 2]]));
  });
});
