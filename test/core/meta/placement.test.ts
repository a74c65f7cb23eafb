// Table PS (src/core/meta/placement.ts), one test per row, and the placement rule itself.
import { describe, expect, it } from "vitest";
import { apply, chooseNode, type CommandOf, type MetaState } from "../../../src/core/meta/index.ts";
import { leastLoaded } from "../../../src/core/meta/placement.ts";
import { build, create, CTX, expectChange, expectNoop, expectRejected, register } from "./fixtures.ts";

const place = (streamId: string): CommandOf<"PlaceStream"> => ({ type: "PlaceStream", streamId });

/** Creates and places `count` streams named p0..p(count-1); returns the owners in order. */
function placeMany(state: MetaState, count: number): { state: MetaState; owners: string[] } {
  let current = state;
  const owners: string[] = [];
  for (let i = 0; i < count; i++) {
    current = build([create(`p${i}`)], current);
    const id = current.streams.idByName(`p${i}`) ?? "";
    const applied = apply(current, place(id), CTX);
    if (!applied.result.ok) throw new Error("placement rejected");
    owners.push(applied.result.value.stream.owner ?? "");
    current = applied.state;
  }
  return { state: current, owners };
}

describe("table PS: PlaceStream", () => {
  it("PS1 PlaceStream from a stale proposer is rejected", () => {
    const before = build([register("a", 2), create("x")]);
    const command: CommandOf<"PlaceStream"> = { type: "PlaceStream", streamId: "s1", by: { nodeId: "a", nodeEpoch: 1 } };
    expectRejected(before, apply(before, command, CTX), "stale_epoch", { currentEpoch: 2 });
  });
  it("PS2 PlaceStream of an unknown stream is not_found", () => {
    const before = build([register("a")]);
    expectRejected(before, apply(before, place("s1"), CTX), "not_found", { streamId: "s1" });
  });
  it("PS3 PlaceStream of a placed stream is a no-op: the second of two racing proposals changes nothing", () => {
    const first = build([register("a"), register("b"), create("x")]);
    const placed = apply(first, place("s1"), CTX);
    expect(expectChange(first, placed).stream.owner).toBe("a");
    expect(expectNoop(placed.state, apply(placed.state, place("s1"), CTX)).stream.owner).toBe("a");
  });
  it("PS3 PlaceStream of an opened or closed stream is a no-op", () => {
    const opened = build([register("a"), create("x"), place("s1"), { type: "OpenStream", streamId: "s1", nodeId: "a", nodeEpoch: 1 }]);
    expectNoop(opened, apply(opened, place("s1"), CTX));
    const closed = build([{ type: "CloseStream", streamId: "s1", nodeId: "a", nodeEpoch: 1, epoch: 1 }], opened);
    expectNoop(closed, apply(closed, place("s1"), CTX));
  });
  it("PS4 PlaceStream with no registered node, only slotless or only draining nodes is unavailable", () => {
    const none = build([create("x")]);
    expectRejected(none, apply(none, place("s1"), CTX), "unavailable", { eligibleNodes: 0 });
    const slotless = build([register("a", 1, 0), register("b"), { type: "SetDraining", nodeId: "b", draining: true }, create("x")]);
    expectRejected(slotless, apply(slotless, place("s1"), CTX), "unavailable");
  });
  it("leastLoaded: the eligible nodes PS5 chooses among now (the tie at the lowest ratio), by id; none without an eligible node", () => {
    const three = build([register("c"), register("a"), register("b")]);
    expect(leastLoaded(three).map((n) => n.id)).toEqual(["a", "b", "c"]);
    const aHolds = build([create("first"), place("s1")], three);
    expect(leastLoaded(aHolds).map((n) => n.id)).toEqual(["b", "c"]);
    const weighted = build([register("d", 1, 4)], aHolds); // no stream on 4 slots: at the lowest ratio with b and c
    expect(leastLoaded(weighted).map((n) => n.id)).toEqual(["b", "c", "d"]);
    const draining = build([{ type: "SetDraining", nodeId: "b", draining: true }], aHolds);
    expect(leastLoaded(draining).map((n) => n.id)).toEqual(["c"]);
    expect(leastLoaded(build([register("z", 1, 0)]))).toEqual([]);
  });
  it("PS5 ties go to the proposer when it is among the least loaded, else to the lowest id; a lower ratio always wins", () => {
    const tied = build([register("a"), register("b"), register("c"), create("x")]);
    const byNode = (nodeId: string): CommandOf<"PlaceStream"> => ({ ...place("s1"), by: { nodeId, nodeEpoch: 1 } });
    expect(expectChange(tied, apply(tied, byNode("c"), CTX)).stream.owner).toBe("c");
    expect(expectChange(tied, apply(tied, place("s1"), CTX)).stream.owner).toBe("a");
    // a holds one stream: b and c tie below it, and a's own proposal goes to the lowest id of them.
    const aHolds = build([create("first"), place("s1"), create("x")], build([register("a"), register("b"), register("c")]));
    const xId = aHolds.streams.idByName("x") ?? "";
    expect(expectChange(aHolds, apply(aHolds, { ...place(xId), by: { nodeId: "a", nodeEpoch: 1 } }, CTX)).stream.owner).toBe("b");
    expect(expectChange(aHolds, apply(aHolds, { ...place(xId), by: { nodeId: "c", nodeEpoch: 1 } }, CTX)).stream.owner).toBe("c");
  });
  it("PS5 PlaceStream picks the lowest ratio of assigned streams to slots, lowest id on ties", () => {
    const nodes = build([register("c"), register("a"), register("b")]);
    expect(placeMany(nodes, 6).owners).toEqual(["a", "b", "c", "a", "b", "c"]);
  });
  it("PS5 a node with 4 slots takes four times the streams of a node with 1", () => {
    const { state } = placeMany(build([register("big", 1, 4), register("small", 1, 1)]), 50);
    expect(state.assigned.get("big")).toBe(40);
    expect(state.assigned.get("small")).toBe(10);
  });
  it("PS5 PlaceStream skips nodes with no slots and draining nodes", () => {
    const state = build([register("a", 1, 0), register("b"), register("c"), { type: "SetDraining", nodeId: "b", draining: true }]);
    expect(placeMany(state, 3).owners).toEqual(["c", "c", "c"]);
  });
  it("PS5 SetSlots shifts only future placements", () => {
    const { state, owners } = placeMany(build([register("a"), register("b")]), 2);
    expect(owners).toEqual(["a", "b"]);
    const reweighted = build([{ type: "SetSlots", nodeId: "b", slots: 3 }], state);
    expect(chooseNode(reweighted)?.id).toBe("b");
    expect(reweighted.streams.get("s1")?.owner).toBe("a");
  });
  it("PS5 closed streams do not count toward a node's load", () => {
    const state = build([
      register("a"),
      register("b"),
      create("x"),
      place("s1"),
      { type: "OpenStream", streamId: "s1", nodeId: "a", nodeEpoch: 1 },
      { type: "CloseStream", streamId: "s1", nodeId: "a", nodeEpoch: 1, epoch: 1 },
    ]);
    expect(chooseNode(state)?.id).toBe("a");
  });
});
