// The rebalance plan (src/core/meta/rebalance.ts; docs/transfers.md): one test per row of table RB, then fast-check
// properties over random states built with `apply`: orphans come first and are exactly the live-ownerless
// streams, no move targets a dead, draining or slotless node, transfers never widen the load spread and are
// BeginTransfers the rules accept, an uncut plan leaves no source/target pair a single move could narrow and
// a second round after its transfers began plans none more (pending transfers count on their targets),
// a stream moves at most once, the plan is deterministic, and a balanced cluster plans nothing.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { apply, countsAsAssigned, isEligible, type Command, type CommandOf, type MetaState, type NodeRecord } from "../../../src/core/meta/index.ts";
import { DEFAULT_MAX_REBALANCE_MOVES, planRebalance, type RebalanceMove, type RebalancePlan } from "../../../src/core/meta/rebalance.ts";
import { build, create, CTX, register } from "./fixtures.ts";
import { propertyRuns } from "../../support/property-runs.ts";

const place = (streamId: string): CommandOf<"PlaceStream"> => ({ type: "PlaceStream", streamId });
const open = (streamId: string, nodeId: string): CommandOf<"OpenStream"> => ({ type: "OpenStream", streamId, nodeId, nodeEpoch: 1 });
const close = (streamId: string, nodeId: string, epoch: number): CommandOf<"CloseStream"> => ({ type: "CloseStream", streamId, nodeId, nodeEpoch: 1, epoch });
const begin = (streamId: string, target: string): CommandOf<"BeginTransfer"> => ({ type: "BeginTransfer", streamId, target });
const complete = (streamId: string, closedEpoch: number): CommandOf<"CompleteTransfer"> => ({ type: "CompleteTransfer", streamId, closedEpoch });

type Kind = "opened" | "placed" | "closed" | "moving" | "unplaced";
interface NodeSpec { readonly id: string; readonly slots: number; readonly draining?: boolean }
interface StreamSpec { readonly owner: string; readonly kind?: Kind; readonly target?: string }

/** Adds one stream `name` in the given ownership on `owner`, with accepted commands only. */
function put(state: MetaState, name: string, { owner, kind = "opened", target }: StreamSpec): MetaState {
  let s = build([create(name)], state);
  const id = s.streams.idByName(name) ?? "";
  if (kind === "unplaced") return s;
  s = build([place(id)], s);
  const first = s.streams.get(id)?.owner ?? "";
  // `placed` elsewhere than placement chose: a completed transfer leaves it placed on its target (CT7).
  if (kind === "placed") return first === owner ? s : build([begin(id, owner), close(id, first, 0), complete(id, 0)], s);
  s = build(first === owner ? [open(id, owner)] : [close(id, first, 0), open(id, owner)], s); // OS7
  if (kind === "closed") return build([close(id, owner, 1)], s);
  if (kind === "moving" && target !== undefined && target !== owner) return build([begin(id, target)], s);
  return s;
}

/** Nodes registered with 1 slot, the streams put on them, then the nodes' real slots and draining flags. */
function stateOf(nodes: readonly NodeSpec[], streams: readonly StreamSpec[]): MetaState {
  let state = build(nodes.map((node) => register(node.id)));
  streams.forEach((spec, i) => (state = put(state, `st-${i}`, spec)));
  const finals: Command[] = nodes.flatMap((node) => [
    { type: "SetSlots", nodeId: node.id, slots: node.slots },
    { type: "SetDraining", nodeId: node.id, draining: node.draining ?? false },
  ]);
  return build(finals, state);
}

const many = (owner: string, count: number, kind: Kind = "opened"): StreamSpec[] => Array.from({ length: count }, () => ({ owner, kind }));
const live = (...ids: string[]): Set<string> => new Set(ids);
const edges = (moves: readonly RebalanceMove[]): string[] => moves.map((m) => `${m.from}>${m.to}`);
/** The ids of `owner`'s streams in the state's iteration order (the order a source gives them up). */
const streamsOf = (state: MetaState, owner: string): string[] => [...state.streams.values()].filter((s) => s.owner === owner && countsAsAssigned(s)).map((s) => s.id);

describe("table RB: planRebalance", () => {
  it("RB1: closed, unplaced and moving streams are left alone; placed and opened ones of a dead owner are orphans", () => {
    const state = stateOf([{ id: "a", slots: 1 }, { id: "b", slots: 1 }], [
      { owner: "a", kind: "opened" }, { owner: "a", kind: "placed" }, { owner: "a", kind: "closed" },
      { owner: "a", kind: "moving", target: "b" }, { owner: "a", kind: "unplaced" },
    ]);
    const plan = planRebalance(state, live("b"));
    expect(plan.orphans.map((m) => m.name).sort()).toEqual(["st-0", "st-1"]);
    expect(plan.moves).toEqual([]);
  });
  it("RB1b: a pending transfer counts on its target: a second round while the first round's moves are pending plans nothing more", () => {
    const nodes = ["a", "b", "c", "d"].map((id) => ({ id, slots: 1 }));
    const ids = live("a", "b", "c", "d");
    let state = stateOf(nodes, many("a", 8));
    const first = planRebalance(state, ids);
    expect(edges(first.moves)).toEqual(["a>b", "a>c", "a>d", "a>b", "a>c", "a>d"]);
    state = build(first.moves.map((m) => begin(m.streamId, m.to)), state);
    // As if they had landed: a 2, b 2, c 2, d 2. Counted on their sources (a 8), a would give up its last two.
    expect(planRebalance(state, ids)).toEqual({ orphans: [], moves: [], meanLoad: 2, unplaceable: 0 });
    // Half landed, half still pending: the same.
    const landed = first.moves.slice(0, 3);
    state = build(landed.flatMap((m) => [close(m.streamId, "a", 1), complete(m.streamId, 1)]), state);
    expect(planRebalance(state, ids)).toMatchObject({ moves: [], meanLoad: 2 });
  });
  it("RB1b: a stream its source closed for the hand-off counts on the target; a transfer of a dead node's stream leaves the target's count, not an orphan", () => {
    const nodes = ["a", "b", "c"].map((id) => ({ id, slots: 1 }));
    // a 6 streams, two of them moving to b, one of those already closed by a: landed, a 4, b 2, c 0.
    let state = stateOf(nodes, many("a", 6));
    const [s0, s1] = streamsOf(state, "a");
    state = build([begin(s0 ?? "", "b"), begin(s1 ?? "", "b"), close(s0 ?? "", "a", 1)], state);
    const plan = planRebalance(state, live("a", "b", "c"));
    expect(edges(plan.moves)).toEqual(["a>c", "a>c"]);
    expect(plan.meanLoad).toBe(2);
    // a dead: its four unmoved streams are orphans (to c, c, then b, c by load counting the two for b), the moving ones are not.
    const dead = planRebalance(state, live("b", "c"));
    expect(dead.orphans.map((m) => m.streamId)).not.toContain(s0);
    expect(dead.orphans.map((m) => m.streamId)).not.toContain(s1);
    expect(edges(dead.orphans)).toEqual(["a>c", "a>c", "a>b", "a>c"]);
  });
  it("RB2: an orphan goes to the least-loaded live node counting the orphans before it, lowest id on ties", () => {
    const state = stateOf([{ id: "a", slots: 1 }, { id: "b", slots: 1 }, { id: "c", slots: 2 }, { id: "d", slots: 1 }], many("d", 4));
    const plan = planRebalance(state, live("a", "b", "c"));
    expect(plan.orphans.map((m) => m.to)).toEqual(["a", "b", "c", "c"]);
    expect(plan.orphans.every((m) => m.from === "d" && m.kind === "reassign")).toBe(true);
    expect(plan).toMatchObject({ moves: [], meanLoad: 1, unplaceable: 0 });
  });
  it("RB3: with no live node that has slots and is not draining, orphans are counted unplaceable", () => {
    const nodes = [{ id: "a", slots: 0 }, { id: "b", slots: 2, draining: true }, { id: "c", slots: 1 }, { id: "d", slots: 1 }];
    const state = stateOf(nodes, [...many("d", 3), ...many("a", 2)]);
    expect(planRebalance(state, live("a", "b"))).toEqual({ orphans: [], moves: [], meanLoad: 0, unplaceable: 3 });
  });
  it("RB4: the bands are strict and exact: 11 and 9 around a mean of 10 stay, 12 and 8 make one move", () => {
    const nodes = [{ id: "a", slots: 1 }, { id: "b", slots: 1 }];
    expect(planRebalance(stateOf(nodes, [...many("a", 11), ...many("b", 9)]), live("a", "b"))).toMatchObject({ orphans: [], moves: [], meanLoad: 10 });
    const plan = planRebalance(stateOf(nodes, [...many("a", 12), ...many("b", 8)]), live("a", "b"));
    expect(edges(plan.moves)).toEqual(["a>b"]);
    expect(plan.meanLoad).toBe(10);
  });
  it("RB5: a transfer goes from the most loaded source to the least loaded target, lowest ids on ties, the source's first stream first", () => {
    const nodes = ["a", "b", "c", "d"].map((id) => ({ id, slots: 1 }));
    const state = stateOf(nodes, [...many("a", 6), ...many("b", 6)]);
    const plan = planRebalance(state, live("a", "b", "c", "d"));
    expect(edges(plan.moves)).toEqual(["a>c", "b>d", "a>c", "b>d", "a>c", "b>d"]);
    expect(plan.moves.every((m) => m.kind === "transfer")).toBe(true);
    expect(plan.moves.filter((m) => m.from === "a").map((m) => m.streamId)).toEqual(streamsOf(state, "a").slice(0, 3));
  });
  it("RB6: a move that would leave the source below the target is not made: one stream on one of three nodes stays", () => {
    const state = stateOf(["a", "b", "c"].map((id) => ({ id, slots: 1 })), many("a", 1));
    expect(planRebalance(state, live("a", "b", "c")).moves).toEqual([]);
  });
  it("RB6: when the most loaded pair would widen the spread the next pair is tried (a 1-slot source drops more per stream)", () => {
    // a 2/1 and b 19/10 above 1.1 × 31/21, t 10/10 below 0.9 ×: a → t would leave 1/1 < 11/10, b → t passes.
    const state = stateOf([{ id: "a", slots: 1 }, { id: "b", slots: 10 }, { id: "t", slots: 10 }], [...many("a", 2), ...many("b", 19), ...many("t", 10)]);
    expect(edges(planRebalance(state, live("a", "b", "t")).moves)).toEqual(["b>t", "b>t", "b>t"]);
  });
  it("RB7: draining, slotless and dead nodes are no source, target or part of the mean; a dead draining node's streams are orphans", () => {
    const nodes = [{ id: "a", slots: 1 }, { id: "b", slots: 1 }, { id: "c", slots: 1, draining: true }, { id: "d", slots: 0 }, { id: "e", slots: 1, draining: true }];
    const state = stateOf(nodes, [...many("a", 4), ...many("d", 8), ...many("e", 2)]);
    const plan = planRebalance(state, live("a", "b", "c", "d"));
    expect(edges(plan.orphans)).toEqual(["e>b", "e>b"]);
    expect(edges(plan.moves)).toEqual(["a>b"]);
    expect(plan.meanLoad).toBe(3);
  });
  it("RB8: a balanced cluster plans nothing; a node that joined empty is below the band and gets streams only from a rebalance", () => {
    const two = [{ id: "a", slots: 1 }, { id: "b", slots: 1 }];
    const balanced = stateOf(two, [...many("a", 3), ...many("b", 3)]);
    expect(planRebalance(balanced, live("a", "b"))).toEqual({ orphans: [], moves: [], meanLoad: 3, unplaceable: 0 });
    const joined = build([register("c")], balanced);
    expect(joined.assigned.get("c")).toBeUndefined(); // joining moved nothing
    expect(edges(planRebalance(joined, live("a", "b", "c")).moves)).toEqual(["a>c", "b>c"]);
  });
  it("RB8: a source whose streams are all moving already gives nothing more", () => {
    const state = stateOf(["a", "b", "c"].map((id) => ({ id, slots: 1 })), [0, 1, 2].map(() => ({ owner: "a", kind: "moving", target: "b" })));
    expect(planRebalance(state, live("a", "b", "c")).moves).toEqual([]);
  });
  it("RB9: maxMoves caps orphans and moves together, orphans first", () => {
    const nodes = [{ id: "a", slots: 1 }, { id: "b", slots: 1 }, { id: "e", slots: 1 }];
    const state = stateOf(nodes, [...many("a", 4), ...many("e", 2)]);
    const cut = (maxMoves: number): string[] => { const plan = planRebalance(state, live("a", "b"), { maxMoves }); return [...edges(plan.orphans), "|", ...edges(plan.moves)]; };
    expect(cut(0)).toEqual(["|"]);
    expect(cut(1)).toEqual(["e>b", "|"]);
    expect(cut(3)).toEqual(["e>b", "e>b", "|", "a>b"]);
  });
  it("RB9: maxMoves defaults to 1000", () => {
    let state = build([register("d")]);
    for (let i = 0; i <= DEFAULT_MAX_REBALANCE_MOVES; i++) state = build([create(`m${i}`), place(`s${i + 1}`)], state);
    const plan = planRebalance(build([register("b")], state), live("b"));
    expect(plan.orphans).toHaveLength(DEFAULT_MAX_REBALANCE_MOVES);
    expect(DEFAULT_MAX_REBALANCE_MOVES).toBe(1000);
  });
});

// ---- properties -------------------------------------------------------------------------------------

const NODES = ["n0", "n1", "n2", "n3", "n4", "n5"] as const;

interface Scenario {
  readonly nodes: readonly { readonly slots: number; readonly draining: boolean; readonly live: boolean }[];
  readonly streams: readonly { readonly owner: number; readonly kind: Kind; readonly target: number }[];
  readonly maxMoves: number | undefined;
}

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  nodes: fc.array(
    fc.record({
      slots: fc.oneof({ arbitrary: fc.constant(0), weight: 1 }, { arbitrary: fc.integer({ min: 1, max: 5 }), weight: 5 }),
      draining: fc.constantFrom(false, false, false, false, true),
      live: fc.constantFrom(true, true, true, true, false),
    }),
    { minLength: 1, maxLength: NODES.length, size: "max" },
  ),
  streams: fc.array(
    fc.record({
      // Skewed towards the first nodes, so most clusters start out of balance.
      owner: fc.oneof(fc.nat({ max: 1 }), fc.nat({ max: NODES.length - 1 })),
      kind: fc.constantFrom<Kind>("opened", "opened", "opened", "placed", "closed", "moving", "unplaced"),
      target: fc.nat({ max: NODES.length - 1 }),
    }),
    { minLength: 4, maxLength: 40, size: "large" },
  ),
  // Mostly the default; sometimes a small cap, to cut plans.
  maxMoves: fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary: fc.nat({ max: 12 }), weight: 1 }),
});

interface Case { readonly state: MetaState; readonly liveIds: Set<string>; readonly plan: RebalancePlan; readonly maxMoves: number }

function caseOf(scenario: Scenario): Case {
  const ids = NODES.slice(0, scenario.nodes.length);
  const nodes = scenario.nodes.map((node, i) => ({ id: ids[i] ?? "n0", slots: node.slots, draining: node.draining }));
  const streams = scenario.streams.map((s) => ({ owner: ids[s.owner % ids.length] ?? "n0", kind: s.kind, target: ids[s.target % ids.length] ?? "n0" }));
  const state = stateOf(nodes, streams);
  const liveIds = new Set(ids.filter((_, i) => scenario.nodes[i]?.live));
  const maxMoves = scenario.maxMoves ?? DEFAULT_MAX_REBALANCE_MOVES;
  return { state, liveIds, plan: planRebalance(state, liveIds, scenario.maxMoves === undefined ? {} : { maxMoves }), maxMoves };
}

/**
 * Each node's streams as if every pending transfer had landed (RB1b), counted from the stream records
 * themselves rather than from `state.assigned`: a moving stream (placed, opened, or closed for its hand-off)
 * on its target, any other placed or opened stream on its owner.
 */
function landedCounts(state: MetaState): Map<string, number> {
  const counts = new Map<string, number>();
  for (const stream of state.streams.values()) {
    const transfer = state.transfers.get(stream.id);
    const at = transfer !== undefined && (countsAsAssigned(stream) || stream.ownership === "closed") ? transfer.target : countsAsAssigned(stream) ? stream.owner : null;
    if (at !== null) counts.set(at, (counts.get(at) ?? 0) + 1);
  }
  return counts;
}

const eligibleLive = ({ state, liveIds }: Case): NodeRecord[] => [...state.nodes.values()].filter((n) => liveIds.has(n.id) && isEligible(n));
const candidates = (state: MetaState) => [...state.streams.values()].filter((s) => countsAsAssigned(s) && !state.transfers.has(s.id));
const cut = ({ plan, maxMoves }: Case): boolean => plan.orphans.length + plan.moves.length >= maxMoves;

function applyMoves(counts: Map<string, number>, moves: readonly RebalanceMove[]): Map<string, number> {
  for (const move of moves) {
    counts.set(move.from, (counts.get(move.from) ?? 0) - 1);
    counts.set(move.to, (counts.get(move.to) ?? 0) + 1);
  }
  return counts;
}

/** max(load) − min(load) as an exact fraction [numerator, denominator] (loads are count/slots). */
function spread(nodes: readonly NodeRecord[], counts: ReadonlyMap<string, number>): [number, number] {
  const load = (n: NodeRecord): [number, number] => [counts.get(n.id) ?? 0, n.slots];
  const sorted = nodes.map(load).sort(([c1, s1], [c2, s2]) => c1 * s2 - c2 * s1);
  const [lo, hi] = [sorted[0], sorted[sorted.length - 1]];
  if (lo === undefined || hi === undefined) return [0, 1];
  return [hi[0] * lo[1] - lo[0] * hi[1], hi[1] * lo[1]];
}

const property = (check: (c: Case) => void, numRuns = 300): void => fc.assert(fc.property(scenarioArbitrary, (s) => check(caseOf(s))), { numRuns });

describe("planRebalance properties", () => {
  it("orphans come first and are exactly the assigned, not-moving streams of owners not live (or all unplaceable), unless the plan was cut", () => {
    property((c) => {
      const { state, liveIds, plan } = c;
      expect(plan.orphans.every((m) => m.kind === "reassign" && !liveIds.has(m.from))).toBe(true);
      expect(plan.moves.every((m) => m.kind === "transfer")).toBe(true);
      if (plan.moves.length > 0) expect(plan.orphans.length + plan.unplaceable).toBe(candidates(state).filter((s) => !liveIds.has(s.owner ?? "")).length);
      if (cut(c)) return;
      const due = candidates(state).filter((s) => !liveIds.has(s.owner ?? "")).map((s) => s.id);
      // Exactly those, each once (planned owner by owner: the order is the owners' streams', not the state's).
      if (eligibleLive(c).length > 0) expect(plan.orphans.map((m) => m.streamId).sort()).toEqual(due.sort());
      else expect(plan).toMatchObject({ orphans: [], moves: [], unplaceable: due.length });
    });
  });

  it("no move targets a dead, draining or slotless node; reassigns come from dead owners, transfers from live eligible ones", () => {
    property(({ state, liveIds, plan }) => {
      for (const move of [...plan.orphans, ...plan.moves]) {
        const target = state.nodes.get(move.to);
        expect(liveIds.has(move.to) && target !== undefined && isEligible(target)).toBe(true);
        expect(state.streams.get(move.streamId)).toMatchObject({ owner: move.from, name: move.name });
      }
      for (const move of plan.moves) expect(liveIds.has(move.from) && isEligible(state.nodes.get(move.from) ?? { slots: 0, draining: true } as NodeRecord)).toBe(true);
    });
  });

  it("transfers are BeginTransfers the rules accept, and none widens the spread of load over live eligible nodes", () => {
    property((c) => {
      const nodes = eligibleLive(c);
      const counts = applyMoves(landedCounts(c.state), c.plan.orphans);
      let [num, den] = spread(nodes, counts);
      let state = c.state;
      for (const move of c.plan.moves) {
        const applied = apply(state, begin(move.streamId, move.to), CTX);
        expect(applied.result.ok && applied.result.changed).toBe(true);
        state = applied.state;
        const [n, d] = spread(nodes, applyMoves(counts, [move]));
        expect(n * den).toBeLessThanOrEqual(num * d);
        [num, den] = [n, d];
      }
    });
  });

  it("an uncut plan leaves no node above 110% of the mean with a movable stream and one below 90% that a single move could bring closer", () => {
    property((c) => {
      if (cut(c)) return;
      const nodes = eligibleLive(c);
      const counts = applyMoves(landedCounts(c.state), [...c.plan.orphans, ...c.plan.moves]);
      const count = (n: NodeRecord): number => counts.get(n.id) ?? 0;
      const total = nodes.reduce((sum, n) => sum + count(n), 0);
      const slots = nodes.reduce((sum, n) => sum + n.slots, 0);
      const moved = new Set(c.plan.moves.map((m) => m.streamId));
      const movable = (n: NodeRecord): boolean => candidates(c.state).some((s) => s.owner === n.id && !moved.has(s.id));
      const sources = nodes.filter((n) => 10 * count(n) * slots > 11 * total * n.slots && movable(n));
      const targets = nodes.filter((n) => 10 * count(n) * slots < 9 * total * n.slots);
      for (const s of sources) for (const t of targets) expect((count(s) - 1) * t.slots).toBeLessThan((count(t) + 1) * s.slots);
    });
  });

  it("RB1b: once an uncut plan's transfers have begun, the next round plans the same orphans, and no further transfer when there were none", () => {
    property((c) => {
      if (cut(c)) return;
      const begun = build(c.plan.moves.map((m) => begin(m.streamId, m.to)), c.state);
      const next = planRebalance(begun, c.liveIds);
      expect(next.meanLoad).toBe(c.plan.meanLoad);
      expect(next.orphans.map((m) => m.streamId)).toEqual(c.plan.orphans.map((m) => m.streamId));
      // Orphans are planned first, over the loads before this round's transfers; so only without them is
      // the second round's band phase the first one's end state.
      if (c.plan.orphans.length === 0) expect(next.moves).toEqual([]);
    });
  });

  it("a stream appears in a plan at most once, and a plan never exceeds maxMoves", () => {
    property(({ plan, maxMoves }) => {
      const ids = [...plan.orphans, ...plan.moves].map((m) => m.streamId);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBeLessThanOrEqual(maxMoves);
    });
  });

  it("the plan is deterministic and pure: the same input (live set in any order) gives the same plan, and the state is unchanged", () => {
    property(({ state, liveIds, plan, maxMoves }) => {
      const assigned = new Map(state.assigned);
      expect(planRebalance(state, new Set([...liveIds].reverse()), { maxMoves })).toEqual(plan);
      expect(state.assigned).toEqual(assigned);
    }, 100);
  });

  it("a cluster whose live eligible nodes all hold the same streams per slot, with every owner live, plans nothing", () => {
    const balanced = fc.record({ perSlot: fc.nat({ max: 3 }), slots: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 }) });
    fc.assert(
      fc.property(balanced, ({ perSlot, slots }) => {
        const nodes = slots.map((s, i) => ({ id: NODES[i] ?? "n0", slots: s }));
        const state = stateOf(nodes, nodes.flatMap((n) => many(n.id, perSlot * n.slots)));
        expect(planRebalance(state, new Set(nodes.map((n) => n.id)))).toEqual({ orphans: [], moves: [], meanLoad: perSlot, unplaceable: 0 });
      }),
      { numRuns: propertyRuns(50) },
    );
  });
});
