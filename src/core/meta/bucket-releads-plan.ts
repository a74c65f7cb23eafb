// What the coordinator's tick decides for tables (docs/tables.md), beside failover-plan.ts: the
// buckets whose leader is gone get a live leader, one LeadBucket each. Liveness comes in as a parameter.
import type { Coordinator, LeadBucket } from "./commands.ts";
import { chooseNode, isEligible } from "./placement.ts";
import { isDeclaredDead, type MetaState } from "./state.ts";

export interface BucketRelead {
  readonly table: string;
  readonly bucket: number;
  readonly node: string;
}

/** Streams assigned plus buckets led, per node: the load a new leader is chosen by. */
function loadOf(state: MetaState): Map<string, number> {
  const load = new Map(state.assigned);
  for (const table of state.tables.values()) {
    for (const { leader } of table.buckets) load.set(leader, (load.get(leader) ?? 0) + 1);
  }
  return load;
}

/**
 * Up to `limit` re-leads of buckets whose leader is unregistered or declared dead, each to the live eligible
 * node with the least load per slot counting the re-leads before it (ties: lowest id). Empty when no live
 * node can lead.
 */
export function planBucketReleads(state: MetaState, liveIds: ReadonlySet<string>, limit: number): BucketRelead[] {
  const targets: MetaState = {
    ...state,
    nodes: new Map([...state.nodes].filter(([id, node]) => liveIds.has(id) && isEligible(node) && !isDeclaredDead(node))),
  };
  const load = loadOf(state);
  const releads: BucketRelead[] = [];
  for (const table of state.tables.values()) {
    for (const { bucket, leader } of table.buckets) {
      if (releads.length >= limit) return releads;
      const node = state.nodes.get(leader);
      if (node !== undefined && !isDeclaredDead(node)) continue;
      const target = chooseNode(targets, load);
      if (target === null) return releads;
      releads.push({ table: table.name, bucket, node: target.id });
      load.set(target.id, (load.get(target.id) ?? 0) + 1);
    }
  }
  return releads;
}

/** The commands of a plan, fenced by the coordinator's epoch. */
export function releadCommands(releads: readonly BucketRelead[], coordinator: Coordinator): LeadBucket[] {
  return releads.map(({ table, bucket, node }) => ({ type: "LeadBucket", table, bucket, node, coordinator }));
}
