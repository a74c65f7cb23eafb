// Bucket assignment (rows A1..A5 of docs/tables.md): the leaders of the buckets of a new table or partition.
import { fail, ok, type Parsed } from "../protocol/parsed.ts";

export interface BucketAssignment {
  readonly bucket: number;
  readonly node: string;
}

/** A2: how long one starting node is used before the next table starts on the following node. */
const ASSIGNMENT_START_STEP_MS = 1000;

/**
 * A1..A5: bucket i goes to live node (i + start) % n over the distinct live node ids sorted by code unit,
 * start = floor(nowMs / 1000) % n, so tables created in different seconds begin on different nodes.
 */
export function assignBuckets(buckets: number, liveNodeIds: readonly string[], nowMs: number): Parsed<BucketAssignment[]> {
  const nodes = [...new Set(liveNodeIds)].sort();
  const count = nodes.length;
  if (count === 0) return fail("unavailable", "no live node to lead the buckets; retry when a node is live", { reason: "no_live_node" });
  const step = Number.isFinite(nowMs) ? Math.floor(nowMs / ASSIGNMENT_START_STEP_MS) : 0;
  const start = ((step % count) + count) % count;
  return ok(Array.from({ length: buckets }, (_, bucket) => ({ bucket, node: nodes[(bucket + start) % count] as string })));
}
