// What the metadata state asks of a node, and drain plans (src/core/meta/duties.ts; docs/transfers.md,
// "Drain and slots"): rows for transferDuties, pendingTransfers, isHandedTo and drainProgress, then fast-check
// properties of planDrain over random states built with `apply`: it never targets the drained node or an
// ineligible one, covers every assigned stream without a pending transfer exactly once (or counts them all
// unplaceable when no node is eligible), every move is a BeginTransfer the rules accept, and the resulting
// load is exactly what an independent computation of the count-over-slots rule gives.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  apply,
  concernsNode,
  countsAsAssigned,
  drainProgress,
  drainStall,
  isDrained,
  isHandedTo,
  isEligible,
  lookupStream,
  nodesConcernedBy,
  pendingTransfers,
  planDrain,
  transferDuties,
  type Command,
  type CommandOf,
  type MetaState,
  type StreamView,
} from "../../../src/core/meta/index.ts";
import { build, create, CTX, register } from "./fixtures.ts";
import { propertyRuns } from "../../support/property-runs.ts";

const place = (streamId: string): CommandOf<"PlaceStream"> => ({ type: "PlaceStream", streamId });
const open = (streamId: string, nodeId: string): CommandOf<"OpenStream"> => ({ type: "OpenStream", streamId, nodeId, nodeEpoch: 1 });
const close = (streamId: string, nodeId: string, epoch: number): CommandOf<"CloseStream"> => ({ type: "CloseStream", streamId, nodeId, nodeEpoch: 1, epoch });
const begin = (streamId: string, target: string): CommandOf<"BeginTransfer"> => ({ type: "BeginTransfer", streamId, target });
const complete = (streamId: string, closedEpoch: number): CommandOf<"CompleteTransfer"> => ({ type: "CompleteTransfer", streamId, closedEpoch });
const draining = (nodeId: string, flag = true): CommandOf<"SetDraining"> => ({ type: "SetDraining", nodeId, draining: flag });
const slots = (nodeId: string, count: number): CommandOf<"SetSlots"> => ({ type: "SetSlots", nodeId, slots: count });

const view = (state: MetaState, streamId: string): StreamView => {
  const stream = lookupStream(state, { id: streamId }).stream;
  if (stream === null) throw new Error(`no stream ${streamId}`);
  return stream;
};
const ids = (views: readonly StreamView[]): string[] => views.map((v) => v.id).sort();
const never = (): never => {
  throw new Error("no drain progress");
};

/**
 * Nodes a, b, c, d (1 slot each). s1 opened by a, moving to b; s2 opened by b, moving to c; s3 opened by c;
 * s4 placed on d (first placement after a, b, c: lowest load, lowest id), never opened.
 */
function fourStreams(): MetaState {
  return build([
    register("a"),
    register("b"),
    register("c"),
    register("d"),
    ...["w", "x", "y", "z"].map((name) => create(name)),
    place("s1"),
    place("s2"),
    place("s3"),
    place("s4"),
    open("s1", "a"),
    open("s2", "b"),
    open("s3", "c"),
    begin("s1", "b"),
    begin("s2", "c"),
  ]);
}

describe("transferDuties and pendingTransfers", () => {
  const state = fourStreams();
  it("transferDuties lists the pending transfers a node is the source of", () => {
    expect(ids(transferDuties(state, "a"))).toEqual(["s1"]);
  });
  it("transferDuties lists the pending transfers a node is the source or the target of", () => {
    expect(ids(transferDuties(state, "b"))).toEqual(["s1", "s2"]);
    expect(ids(transferDuties(state, "c"))).toEqual(["s2"]);
  });
  it("transferDuties is empty for a node in no transfer (and an unknown node)", () => {
    expect(transferDuties(state, "d")).toEqual([]);
    expect(transferDuties(state, "zz")).toEqual([]);
  });
  it("transferDuties views carry the pending transfer, so the source knows its target", () => {
    expect(transferDuties(state, "a")[0]?.transfer).toEqual({ source: "a", target: "b" });
  });
  it("pendingTransfers lists every stream with a pending transfer, with it", () => {
    const pending = pendingTransfers(state);
    expect(ids(pending)).toEqual(["s1", "s2"]);
    expect(pending.find((v) => v.id === "s2")?.transfer).toEqual({ source: "b", target: "c" });
  });
  it("pendingTransfers drops a completed transfer and a deleted stream's transfer", () => {
    const after = build([close("s1", "a", 1), complete("s1", 1), { type: "DeleteStream", streamId: "s2" }], state);
    expect(pendingTransfers(after)).toEqual([]);
    expect(transferDuties(after, "b")).toEqual([]);
  });
});

describe("isHandedTo", () => {
  const state = fourStreams();
  it("isHandedTo is true for the target of a completed transfer: placed on it at the closed epoch", () => {
    const after = build([close("s1", "a", 1), complete("s1", 1)], state);
    expect(isHandedTo(view(after, "s1"), "b")).toBe(true);
    expect(isHandedTo(view(after, "s1"), "a")).toBe(false);
  });
  it("isHandedTo is false for a fresh placement at epoch 0 (its create opens it)", () => {
    expect(view(state, "s4")).toMatchObject({ owner: "d", ownership: "placed", epoch: 0 });
    expect(isHandedTo(view(state, "s4"), "d")).toBe(false);
  });
  it("isHandedTo is false once the new owner opened it", () => {
    const after = build([close("s1", "a", 1), complete("s1", 1), open("s1", "b")], state);
    expect(isHandedTo(view(after, "s1"), "b")).toBe(false);
  });
  it("isHandedTo is false while a transfer of it is pending (on either side)", () => {
    expect(isHandedTo(view(state, "s1"), "a")).toBe(false);
    expect(isHandedTo(view(state, "s1"), "b")).toBe(false);
    // Handed to b, then moving on to c before b opened it.
    const onward = build([close("s1", "a", 1), complete("s1", 1), begin("s1", "c")], state);
    expect(isHandedTo(view(onward, "s1"), "b")).toBe(false);
  });
});

describe("concernsNode", () => {
  it("concernsNode: a transfer the node is source or target of, or a stream handed to it; nothing else", () => {
    const state = fourStreams();
    const moving = view(state, "s1"); // a → b
    expect(concernsNode(moving, "a")).toBe(true);
    expect(concernsNode(moving, "b")).toBe(true);
    expect(concernsNode(moving, "c")).toBe(false);
    expect(concernsNode(view(state, "s3"), "c")).toBe(false); // opened there, no transfer
    const handed = view(build([close("s1", "a", 1), complete("s1", 1)], state), "s1");
    expect(concernsNode(handed, "b")).toBe(true);
    expect(concernsNode(handed, "a")).toBe(false);
  });
});

describe("nodesConcernedBy", () => {
  const state = fourStreams();
  it("nodesConcernedBy: the touched nodes, both ends of a touched stream's transfer, the node a touched stream is handed to", () => {
    expect([...nodesConcernedBy(state, { streams: ["s1"] })].sort()).toEqual(["a", "b"]);
    expect([...nodesConcernedBy(state, { nodes: ["c"] })]).toEqual(["c"]);
    const handed = build([close("s1", "a", 1), complete("s1", 1)], state);
    expect([...nodesConcernedBy(handed, { streams: ["s1"] })]).toEqual(["b"]);
  });
  it("nodesConcernedBy: creates, placements and opens concern no watcher (a busy log wakes none)", () => {
    expect([...nodesConcernedBy(state, { streams: ["s3", "s4"] })]).toEqual([]);
    expect([...nodesConcernedBy(state, { streams: ["gone"] })]).toEqual([]);
  });
  it("nodesConcernedBy holds every node concernsNode says a touched stream concerns (no watcher left asleep)", () => {
    const nodes = ["a", "b", "c", "d"];
    const steps: Command[] = [close("s1", "a", 1), complete("s1", 1), open("s1", "b"), begin("s3", "d"), close("s3", "c", 1), complete("s3", 1)];
    fc.assert(
      fc.property(fc.subarray(steps), (chosen) => {
        let at = state;
        for (const step of chosen) at = apply(at, step, CTX).state;
        for (const streamId of ["s1", "s2", "s3", "s4"]) {
          const concerned = nodesConcernedBy(at, { streams: [streamId] });
          for (const node of nodes) if (concernsNode(view(at, streamId), node)) expect(concerned.has(node)).toBe(true);
        }
      }),
      { numRuns: propertyRuns(100) },
    );
  });
});

describe("drainProgress", () => {
  it("drainProgress is null for an unknown node", () => {
    expect(drainProgress(fourStreams(), "zz")).toBeNull();
  });
  it("drainProgress counts the streams placed on or opened by the node, and those of them moving", () => {
    const state = build([draining("a")], fourStreams());
    expect(drainProgress(state, "a")).toEqual({ nodeId: "a", draining: true, remaining: 1, transferring: 1, incoming: 0 });
    expect(drainProgress(state, "b")).toEqual({ nodeId: "b", draining: false, remaining: 1, transferring: 1, incoming: 1 });
    expect(drainProgress(state, "d")).toEqual({ nodeId: "d", draining: false, remaining: 1, transferring: 0, incoming: 0 });
  });
  it("drainProgress does not count a transfer into the node as transferring, but as incoming", () => {
    expect(drainProgress(fourStreams(), "c")).toEqual({ nodeId: "c", draining: false, remaining: 1, transferring: 0, incoming: 1 });
  });
  it("drainProgress does not count a closed stream as remaining", () => {
    const state = build([close("s3", "c", 1)], fourStreams());
    expect(drainProgress(state, "c")?.remaining).toBe(0);
  });
  it("drainProgress counts a stream the node closed for its transfer as remaining until the completion", () => {
    const closed = build([draining("a"), close("s1", "a", 1)], fourStreams());
    expect(drainProgress(closed, "a")).toEqual({ nodeId: "a", draining: true, remaining: 1, transferring: 1, incoming: 0 });
  });
  it("drainProgress reaches zero when the node's last transfer completes", () => {
    const state = build([draining("a"), close("s1", "a", 1), complete("s1", 1)], fourStreams());
    expect(drainProgress(state, "a")).toEqual({ nodeId: "a", draining: true, remaining: 0, transferring: 0, incoming: 0 });
    expect(isDrained(drainProgress(state, "a") ?? never())).toBe(true);
  });
  it("isDrained: not while a transfer to the node is pending (it lands there), nor while the node is not draining", () => {
    const state = build([draining("c")], fourStreams()); // s2 moving from b to c; c holds s3
    const emptied = build([close("s3", "c", 1)], state);
    expect(drainProgress(emptied, "c")).toMatchObject({ remaining: 0, transferring: 0, incoming: 1 });
    expect(isDrained(drainProgress(emptied, "c") ?? never())).toBe(false);
    const landed = build([close("s2", "b", 1), complete("s2", 1)], emptied);
    expect(drainProgress(landed, "c")).toMatchObject({ remaining: 1, transferring: 0, incoming: 0 });
    expect(isDrained(drainProgress(landed, "c") ?? never())).toBe(false);
    expect(isDrained({ nodeId: "x", draining: false, remaining: 0, transferring: 0, incoming: 0 })).toBe(false);
  });
});

describe("drainStall", () => {
  const progress = (remaining: number, transferring: number, incoming = 0) => ({ nodeId: "a", draining: true, remaining, transferring, incoming });
  it("is null while something moves, something arrives, the round began a transfer, or the node is empty", () => {
    expect(drainStall(progress(3, 1), { begun: 0, unplaceable: 2 })).toBeNull();
    expect(drainStall(progress(3, 0, 1), { begun: 0, unplaceable: 3 })).toBeNull();
    expect(drainStall(progress(3, 0), { begun: 1, unplaceable: 2 })).toBeNull();
    expect(drainStall(progress(0, 0), { begun: 0, unplaceable: 0 })).toBeNull();
  });
  it("says unplaceable when streams remain, none moves, and the round found no node for them", () => {
    expect(drainStall(progress(2, 0), { begun: 0, unplaceable: 2 })).toEqual({ reason: "unplaceable", streams: 2 });
  });
  it("says refused when streams remain, none moves, and the round had a node for them but began nothing", () => {
    expect(drainStall(progress(2, 0), { begun: 0, unplaceable: 0 })).toEqual({ reason: "refused", streams: 2 });
  });
});

describe("planDrain rows", () => {
  it("planDrain skips a stream already moving, closed and unplaced streams, and other nodes' streams", () => {
    // a holds s1 (moving to b) and s5 (opened); s6 was a's and is closed; s7 is unplaced.
    const state = build([create("v"), place("s5"), create("u"), place("s6"), create("t")], fourStreams());
    const onA = build([close("s5", view(state, "s5").owner ?? "", 0), open("s5", "a"), close("s6", view(state, "s6").owner ?? "", 0), open("s6", "a"), close("s6", "a", 1)], state);
    expect(view(onA, "s6")).toMatchObject({ owner: "a", ownership: "closed" });
    const { moves, unplaceable } = planDrain(build([draining("a")], onA), "a");
    expect(moves.map((m) => m.streamId)).toEqual(["s5"]);
    expect(unplaceable).toBe(0);
  });
  it("planDrain never targets the drained node even when it is not marked draining", () => {
    const state = build([register("a"), register("b"), create("x"), place("s1"), create("y"), place("s2")]);
    expect(planDrain(state, "a").moves.map((m) => m.target)).toEqual(["b"]);
  });
  it("planDrain counts every stream unplaceable when no other node is eligible", () => {
    const state = build([register("a"), register("b"), register("c", 1, 0), create("x"), place("s1"), create("y"), place("s2"), draining("b"), draining("a")]);
    expect(planDrain(state, "a")).toEqual({ moves: [], unplaceable: 1 });
  });
  it("planDrain of a node that holds nothing is empty", () => {
    expect(planDrain(build([draining("d")], build([close("s4", "d", 0)], fourStreams())), "d")).toEqual({ moves: [], unplaceable: 0 });
  });
  it("planDrain follows count over slots, so empty nodes each take one before any takes a second (slots 4:1:1:1, four streams: 1:1:1:1)", () => {
    let state = build([register("z"), register("a", 1, 4), register("b"), register("c"), register("d")]);
    for (let i = 0; i < 4; i++) state = build([slots("a", 0), slots("b", 0), slots("c", 0), slots("d", 0), create(`m${i}`), place(`s${i + 1}`)], state);
    state = build([slots("a", 4), slots("b", 1), slots("c", 1), slots("d", 1), draining("z")], state);
    const targets = planDrain(state, "z").moves.map((m) => m.target).sort();
    expect(targets).toEqual(["a", "b", "c", "d"]);
  });
});

// ---- properties -------------------------------------------------------------------------------------

const NODES = ["n0", "n1", "n2", "n3", "n4", "n5"] as const;
type Kind = "placed" | "opened" | "closed" | "moving" | "unplaced";

interface StreamSpec {
  readonly owner: number;
  readonly kind: Kind;
  readonly target: number;
}

interface Scenario {
  readonly nodes: readonly { readonly slots: number; readonly draining: boolean }[];
  readonly streams: readonly StreamSpec[];
  readonly drained: number;
  /** Mark the drained node draining before planning (as MetaLog.drain does), or plan without it. */
  readonly markFirst: boolean;
}

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  nodes: fc.array(fc.record({ slots: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 5 })), draining: fc.constantFrom(false, false, false, false, true) }), { minLength: 1, maxLength: NODES.length }),
  streams: fc.array(
    fc.record({
      owner: fc.nat({ max: NODES.length - 1 }),
      kind: fc.constantFrom<Kind>("opened", "opened", "opened", "placed", "closed", "moving", "unplaced"),
      target: fc.nat({ max: NODES.length - 1 }),
    }),
    { maxLength: 40 },
  ),
  drained: fc.nat({ max: NODES.length - 1 }),
  markFirst: fc.constantFrom(true, true, true, false),
});

/**
 * The scenario's state, built only with accepted commands: every node registered with 1 slot; each stream
 * created and placed, then (unless `placed`/`unplaced`) closed by whoever got it and opened by its owner
 * (OS7), then closed again, or put on a transfer; finally the nodes' slots and draining flags.
 */
function stateOf(scenario: Scenario): { state: MetaState; drained: string } {
  const nodeIds = NODES.slice(0, scenario.nodes.length);
  const commands: Command[] = nodeIds.map((id) => register(id));
  let state = build(commands);
  scenario.streams.forEach((spec, i) => {
    const owner = nodeIds[spec.owner % nodeIds.length] ?? "n0";
    state = build([create(`str-${i}`)], state);
    const streamId = state.streams.idByName(`str-${i}`) ?? "";
    if (spec.kind === "unplaced") return;
    state = build([place(streamId)], state);
    if (spec.kind === "placed") return;
    const placedOn = state.streams.get(streamId)?.owner ?? "";
    state = build([close(streamId, placedOn, 0), open(streamId, owner)], state);
    if (spec.kind === "closed") state = build([close(streamId, owner, 1)], state);
    if (spec.kind === "moving") {
      const target = nodeIds[spec.target % nodeIds.length] ?? "n0";
      if (target !== owner) state = build([begin(streamId, target)], state);
    }
  });
  const finals: Command[] = scenario.nodes.flatMap((node, i) => {
    const id = nodeIds[i] ?? "n0";
    return [slots(id, node.slots), draining(id, node.draining)];
  });
  state = build(finals, state);
  const drained = nodeIds[scenario.drained % nodeIds.length] ?? "n0";
  if (scenario.markFirst) state = build([draining(drained)], state);
  return { state, drained };
}

/** The streams a drain must move: assigned to the node (placed or opened), not already moving. */
function toMove(state: MetaState, nodeId: string): string[] {
  return [...state.streams.values()].filter((s) => s.owner === nodeId && countsAsAssigned(s) && !state.transfers.has(s.id)).map((s) => s.id);
}

/**
 * The final load, computed apart from chooseNode: node i's k-th new stream is taken at ratio
 * (assigned_i + k) / slots_i; the count-over-slots rule hands the streams out in increasing ratio (lowest
 * id on ties), i.e. takes the `count` smallest of those candidates.
 */
function expectedLoad(state: MetaState, drained: string, count: number): Map<string, number> {
  const candidates: { id: string; num: number; den: number }[] = [];
  for (const node of state.nodes.values()) {
    if (node.id === drained || !isEligible(node)) continue;
    const base = state.assigned.get(node.id) ?? 0;
    for (let k = 0; k < count; k++) candidates.push({ id: node.id, num: base + k, den: node.slots });
  }
  candidates.sort((x, y) => x.num * y.den - y.num * x.den || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
  const load = new Map<string, number>();
  for (const node of state.nodes.values()) if (node.id !== drained && isEligible(node)) load.set(node.id, state.assigned.get(node.id) ?? 0);
  for (const pick of candidates.slice(0, count)) load.set(pick.id, (load.get(pick.id) ?? 0) + 1);
  return load;
}

const RUNS = propertyRuns(300);

describe("planDrain properties", () => {
  it("planDrain never targets the drained node nor a node without slots or draining", () => {
    fc.assert(
      fc.property(scenarioArbitrary, (scenario) => {
        const { state, drained } = stateOf(scenario);
        for (const move of planDrain(state, drained).moves) {
          expect(move.target).not.toBe(drained);
          const target = state.nodes.get(move.target);
          expect(target?.slots ?? 0).toBeGreaterThan(0);
          expect(target?.draining).toBe(false);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("planDrain covers every assigned stream without a pending transfer exactly once, or counts it unplaceable when no node is eligible", () => {
    fc.assert(
      fc.property(scenarioArbitrary, (scenario) => {
        const { state, drained } = stateOf(scenario);
        const { moves, unplaceable } = planDrain(state, drained);
        const due = toMove(state, drained).sort();
        const anyEligible = [...state.nodes.values()].some((node) => node.id !== drained && isEligible(node));
        if (anyEligible) {
          expect(moves.map((m) => m.streamId).sort()).toEqual(due);
          expect(unplaceable).toBe(0);
        } else {
          expect(moves).toEqual([]);
          expect(unplaceable).toBe(due.length);
        }
        for (const move of moves) expect(move.name).toBe(state.streams.get(move.streamId)?.name);
      }),
      { numRuns: RUNS },
    );
  });

  it("planDrain's moves are each a BeginTransfer the rules accept (BT9), after which every stream left on the node is moving", () => {
    fc.assert(
      fc.property(scenarioArbitrary, (scenario) => {
        const { state: planned, drained } = stateOf({ ...scenario, markFirst: true });
        const { moves, unplaceable } = planDrain(planned, drained);
        let state = planned;
        for (const move of moves) {
          const applied = apply(state, begin(move.streamId, move.target), CTX);
          expect(applied.result.ok && applied.result.changed).toBe(true);
          state = applied.state;
        }
        const progress = drainProgress(state, drained);
        expect(toMove(state, drained)).toHaveLength(unplaceable);
        expect(progress?.draining).toBe(true);
        if (unplaceable === 0) expect(progress?.transferring).toBeGreaterThanOrEqual(progress?.remaining ?? 0);
      }),
      { numRuns: RUNS },
    );
  });

  it("planDrain leaves the load by the slots ratio: the counts an independent count-over-slots computation gives", () => {
    fc.assert(
      fc.property(scenarioArbitrary, (scenario) => {
        const { state, drained } = stateOf(scenario);
        const { moves } = planDrain(state, drained);
        const expected = expectedLoad(state, drained, moves.length);
        const actual = new Map([...expected.keys()].map((id) => [id, state.assigned.get(id) ?? 0]));
        for (const move of moves) actual.set(move.target, (actual.get(move.target) ?? 0) + 1);
        expect(actual).toEqual(expected);
        // No node that received a stream was above any eligible node's ratio when it did.
        for (const move of moves) {
          const j = state.nodes.get(move.target);
          for (const [id, count] of actual) {
            const i = state.nodes.get(id);
            if (i === undefined || j === undefined) continue;
            expect(((actual.get(j.id) ?? 0) - 1) * i.slots).toBeLessThanOrEqual(count * j.slots);
          }
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("planDrain is pure: the state it plans from is unchanged", () => {
    fc.assert(
      fc.property(scenarioArbitrary, (scenario) => {
        const { state, drained } = stateOf(scenario);
        const assigned = new Map(state.assigned);
        const version = state.version;
        planDrain(state, drained);
        expect(state.assigned).toEqual(assigned);
        expect(state.version).toBe(version);
      }),
      { numRuns: propertyRuns(50) },
    );
  });
});
