// What the coordinator's tick decides (docs/failover.md, "The pieces"), as pure functions of the
// state and the set of live nodes (heartbeats are soft state, so liveness comes in as a parameter):
// which incarnations to declare dead, and where their streams go, in bounded batches.
import type { ReassignMove } from "./commands.ts";
import { isDeclaredDead } from "./failover-rules.ts";
import { chooseNode, isEligible } from "./placement.ts";
import type { MetaState, NodeRecord } from "./state.ts";

/** Registered nodes that stopped heartbeating and are not declared dead at their epoch yet (never the coordinator). */
export function deadToDeclare(state: MetaState, liveIds: ReadonlySet<string>, coordinatorId: string): NodeRecord[] {
  return [...state.nodes.values()].filter((node) => node.id !== coordinatorId && !liveIds.has(node.id) && !isDeclaredDead(node));
}

/**
 * Up to `limit` moves of streams placed on or opened by a declared-dead node, each to the live eligible node
 * with the fewest streams per slot counting the moves before it (ties: lowest id). Empty when no live node
 * can take them.
 */
export function planReassignments(state: MetaState, liveIds: ReadonlySet<string>, limit: number): ReassignMove[] {
  const deadOwners = new Set([...state.nodes.values()].filter(isDeclaredDead).map((node) => node.id));
  if (deadOwners.size === 0 || limit <= 0) return [];
  const targets: MetaState = {
    ...state,
    nodes: new Map([...state.nodes].filter(([id, node]) => liveIds.has(id) && isEligible(node) && !isDeclaredDead(node))),
  };
  const assigned = new Map(state.assigned);
  const moves: ReassignMove[] = [];
  for (const deadOwner of [...deadOwners].sort()) {
    for (const stream of state.streams.ownedBy(deadOwner)) {
      if (moves.length >= limit) return moves;
      if (stream.ownership !== "placed" && stream.ownership !== "opened") continue;
      const target = chooseNode(targets, assigned);
      if (target === null) return moves;
      moves.push({ streamId: stream.id, target: target.id });
      assigned.set(target.id, (assigned.get(target.id) ?? 0) + 1);
    }
  }
  return moves;
}
