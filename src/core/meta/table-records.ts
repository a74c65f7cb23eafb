// The records of a table in the metadata state (rules in table-rules.ts, docs/tables.md). Kept
// apart from the rules so the state and the commands can name them without an import cycle.
import type { JsonValue } from "./json.ts";

export interface BucketRecord {
  readonly bucket: number;
  /** The node that should lead (open) the bucket's stream. */
  readonly leader: string;
  /** Bumped by every LeadBucket; the bucket's stream is opened at it, so a lower one is fenced. */
  readonly leaderEpoch: number;
  readonly streamId: string;
}

export interface TableRecord {
  readonly name: string;
  /** The validated definition (columns, keys, partitioning): opaque to the log, compared structurally. */
  readonly definition: JsonValue;
  /** Buckets in bucket order: `buckets[i].bucket === i`. */
  readonly buckets: readonly BucketRecord[];
}
