// The plan of `mink cluster rebalance` (docs/transfers.md, "Rebalance"): orphans first, then streams move from nodes above 110%
// of the mean load to nodes below 90% of it, one transfer per move. Load is streams per slot, a stream with a
// transfer pending counted where it is going (so rounds of a rebalance never overshoot). A pure
// function of the state and the live set, so the plan is the same wherever it is computed; nothing moves
// by itself (a node that joins gets streams only from a rebalance or new placements).
import { chooseNode, isEligible } from "./placement.ts";
import { countsAsAssigned, type MetaState, type NodeRecord, type StreamRecord } from "./state.ts";

export interface RebalanceMove {
  readonly streamId: string;
  readonly name: string;
  /** The current owner. */
  readonly from: string;
  readonly to: string;
  /** "reassign": the owner is not live (an orphan; the coordinator re-leads it, no transfer); "transfer": a live owner hands it over. */
  readonly kind: "reassign" | "transfer";
}

export interface RebalancePlan {
  /** Planned first: an orphan serves nobody until it is re-led. */
  readonly orphans: readonly RebalanceMove[];
  /** Transfers, after the orphans. */
  readonly moves: readonly RebalanceMove[];
  /** Mean load (streams per slot over live eligible nodes, orphans and pending transfers counted on their targets), for display only. */
  readonly meanLoad: number;
  /** Orphans that found no live eligible node. */
  readonly unplaceable: number;
}

export const DEFAULT_MAX_REBALANCE_MOVES = 1000;

/** RB4's bands around a mean load, for display: sources are above `above`, targets below `below` (streams per slot). */
export function rebalanceBands(meanLoad: number): { readonly above: number; readonly below: number } {
  return { above: (meanLoad * 11) / 10, below: (meanLoad * 9) / 10 };
}

/** A live eligible node during the band phase: its count as the planned moves land, and what it can give. */
interface Load {
  readonly node: NodeRecord;
  count: number;
  /** Its streams that may move, read from its own streams as the plan takes them (a plan moves at most maxMoves). */
  readonly movable: Iterator<Owned>;
  /** The next of them not planned yet; undefined: none left. */
  head: Owned | undefined;
}

/**
 * Table RB — planRebalance(state, liveNodeIds, {maxMoves = 1000}):
 * | row | condition                                              | result                                                   |
 * | RB1 | stream not `placed`/`opened`, or a transfer is pending | left alone: neither an orphan nor a move                 |
 * | RB1b| a transfer is pending (the stream `placed`, `opened`, or closed by its source for the hand-off) | counts on its target, not its source, in every load below: a round while earlier moves are pending plans from where they will land, and does not overshoot |
 * | RB2 | owner not live (not in liveNodeIds, or not registered) | orphan: `reassign` to chooseNode over the live nodes, counting earlier orphans (lowest load, lowest id) |
 * | RB3 | orphan, no live node with slots that is not draining   | counted in `unplaceable`, no move                        |
 * | RB4 | band phase, over live eligible nodes after RB2         | mean = assigned / slots; source: load > 1.1 mean; target: load < 0.9 mean (cross-multiplied) |
 * | RB5 | a source and a target                                  | `transfer` of the source's first unplanned stream, most loaded source to least loaded target (ties lowest id), bands re-evaluated against the same mean |
 * | RB6 | the move would leave the source below the target       | not made (it would widen the spread); the next pair in that order is tried |
 * | RB7 | draining, slotless or dead node                        | no band source or target, not in the mean; a dead one's streams are orphans (RB2) |
 * | RB8 | no source with a movable stream, no target, or no pair passes RB6 | the plan ends                                 |
 * | RB9 | orphans + moves reach maxMoves                         | the plan ends there (orphans first, so a cut plan may have no moves) |
 */
export function planRebalance(
  state: MetaState,
  liveNodeIds: ReadonlySet<string>,
  options: { readonly maxMoves?: number } = {},
): RebalancePlan {
  const maxMoves = options.maxMoves ?? DEFAULT_MAX_REBALANCE_MOVES;
  const live: MetaState = { ...state, nodes: new Map([...state.nodes].filter(([id]) => liveNodeIds.has(id))) };
  const assigned = landedCounts(state);
  const { orphans, unplaceable } = planOrphans(state, live, assigned, maxMoves);
  const loads = eligibleLoads(state, live, assigned);
  const total = loads.reduce((sum, load) => sum + load.count, 0);
  const slots = loads.reduce((sum, load) => sum + load.node.slots, 0);
  const moves = planBandMoves(loads, total, slots, maxMoves - orphans.length);
  return { orphans, moves, meanLoad: slots === 0 ? 0 : total / slots, unplaceable };
}

type Owned = StreamRecord & { readonly owner: string };

/**
 * RB1b: each node's assigned streams as if every pending transfer had landed: a moving stream counts on its
 * target, and a stream its source closed for the hand-off (no longer assigned anywhere) counts there too.
 */
function landedCounts(state: MetaState): Map<string, number> {
  const counts = new Map(state.assigned);
  for (const [streamId, transfer] of state.transfers.entries()) {
    const stream = state.streams.get(streamId);
    if (stream === undefined) continue;
    if (countsAsAssigned(stream) && stream.owner !== null) bump(counts, stream.owner, -1);
    else if (stream.ownership !== "closed") continue;
    bump(counts, transfer.target, 1);
  }
  return counts;
}

/** RB1: what a rebalance may touch of one node's streams. A stream already moving is left to its transfer. */
function* candidates(state: MetaState, nodeId: string): Generator<Owned> {
  for (const stream of state.streams.ownedBy(nodeId)) {
    if (isOwned(stream) && countsAsAssigned(stream) && state.transfers.get(stream.id) === undefined) yield stream;
  }
}

/** RB2: the candidates of every owner that is not live, owner by owner (by id). */
function* orphansOf(state: MetaState, live: MetaState): Generator<Owned> {
  // Every stream that counts as assigned has its owner among state.assigned's keys, registered or not.
  const owners = [...state.assigned.keys()].filter((owner) => !live.nodes.has(owner)).sort();
  for (const owner of owners) yield* candidates(state, owner);
}

/** The iterator's next value, or undefined when it is done. */
function take<T>(iterator: Iterator<T>): T | undefined {
  const next = iterator.next();
  return next.done === true ? undefined : next.value;
}

function isOwned(stream: StreamRecord): stream is Owned {
  return stream.owner !== null;
}

/** RB2, RB3: each orphan to the node placement would choose, as if the orphans before it had landed (as planDrain). */
function planOrphans(
  state: MetaState,
  live: MetaState,
  assigned: Map<string, number>,
  maxMoves: number,
): { orphans: RebalanceMove[]; unplaceable: number } {
  const orphans: RebalanceMove[] = [];
  let unplaceable = 0;
  for (const stream of orphansOf(state, live)) {
    const target = chooseNode(live, assigned);
    if (target === null) {
      unplaceable++;
      continue;
    }
    if (orphans.length >= maxMoves) break; // the rest wait for the next rebalance
    orphans.push({ streamId: stream.id, name: stream.name, from: stream.owner, to: target.id, kind: "reassign" });
    bump(assigned, stream.owner, -1);
    bump(assigned, target.id, 1);
  }
  return { orphans, unplaceable };
}

function bump(counts: Map<string, number>, id: string, by: number): void {
  counts.set(id, (counts.get(id) ?? 0) + by);
}

/** RB4, RB7: the live eligible nodes with their counts after the orphans, and their movable streams. */
function eligibleLoads(state: MetaState, live: MetaState, assigned: ReadonlyMap<string, number>): Load[] {
  const loads: Load[] = [];
  for (const node of live.nodes.values()) {
    if (!isEligible(node)) continue;
    const movable = candidates(state, node.id);
    loads.push({ node, count: assigned.get(node.id) ?? 0, movable, head: take(movable) });
  }
  return loads;
}

/** RB5, RB8, RB9: one stream per step, until no pair may move or the budget is spent. */
function planBandMoves(loads: readonly Load[], total: number, slots: number, budget: number): RebalanceMove[] {
  const moves: RebalanceMove[] = [];
  while (moves.length < budget) {
    const pair = nextPair(loads, total, slots);
    if (pair === null) break;
    const { source, target } = pair;
    const stream = source.head;
    if (stream === undefined) break; // nextPair only offers sources with a stream left
    source.head = take(source.movable);
    moves.push({ streamId: stream.id, name: stream.name, from: source.node.id, to: target.node.id, kind: "transfer" });
    source.count--;
    target.count++;
  }
  return moves;
}

/**
 * The first (source, target) pair, sources most loaded first and targets least loaded first, whose move does
 * not widen the spread (RB6). Trying further pairs matters because slots differ: one stream lowers a 1-slot
 * source's load more than a 10-slot one's, so the most loaded pair can fail while another passes.
 */
function nextPair(loads: readonly Load[], total: number, slots: number): { source: Load; target: Load } | null {
  // Bands by cross-multiplication: count/nodeSlots > 1.1 · total/slots ⇔ 10·count·slots > 11·total·nodeSlots.
  const sources = loads.filter((l) => 10 * l.count * slots > 11 * total * l.node.slots && l.head !== undefined);
  const targets = loads.filter((l) => 10 * l.count * slots < 9 * total * l.node.slots);
  sources.sort((a, b) => compareLoad(b, a) || compareId(a, b));
  targets.sort((a, b) => compareLoad(a, b) || compareId(a, b));
  for (const source of sources) {
    for (const target of targets) {
      // (count_s − 1)/slots_s ≥ (count_t + 1)/slots_t: the pair ends no further apart than it was.
      if ((source.count - 1) * target.node.slots >= (target.count + 1) * source.node.slots) return { source, target };
    }
  }
  return null;
}

function compareLoad(a: Load, b: Load): number {
  return a.count * b.node.slots - b.count * a.node.slots;
}

function compareId(a: Load, b: Load): number {
  return a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0;
}
