// The records of a table in the metadata state (rules in table-rules.ts, docs/tables.md). A bucket is a
// stream of the streams map (its owner is the bucket's leader, its epoch the leader epoch); the table
// record names those streams and keeps each bucket's committed snapshots. Kept apart from the rules so the
// state and the commands can name them without an import cycle.
import type { JsonValue } from "./json.ts";

/** A snapshot of a bucket's tablet in the object store, as its leader committed it. */
export interface BucketSnapshot {
  /** The manifest's object key. */
  readonly key: string;
  /** Changelog records the snapshot covers (the tablet's applied offset). */
  readonly coveredOffset: number;
  /** The bucket stream's byte position replay resumes at. */
  readonly coveredPosition: number;
  readonly rows: number;
  readonly bytes: number;
}

export interface BucketRecord {
  /** The partition's value; null for a table without partitions. */
  readonly partition: string | number | null;
  /** The bucket's number within its partition (or its table). */
  readonly bucket: number;
  /** The bucket's stream in the streams map: its owner leads the bucket. */
  readonly streamId: string;
  /** Oldest first, at most MAX_KEPT_SNAPSHOTS: the newest is restored, the older is the fallback. */
  readonly snapshots: readonly BucketSnapshot[];
}

/** The table's tiered copy as the coordinator last recorded it (docs/tiering.md): its latest committed round. */
export interface TieredRecord {
  /** The metadata version that round committed (v<version>.metadata.json). */
  readonly version: number;
  readonly snapshotId: number;
  /** When the round committed (the snapshot's time). */
  readonly tieredAtMs: number;
  /** Changelog records tiered over all buckets. */
  readonly records: number;
}

export interface TableRecord {
  readonly name: string;
  /** The validated definition (columns, keys, partitioning): opaque to the log, compared structurally. */
  readonly definition: JsonValue;
  /**
   * Every bucket: for a table without partitions in bucket order (`buckets[i].bucket === i`); for a
   * partitioned one, partition after partition in the order AddPartition added them, each in bucket order.
   */
  readonly buckets: readonly BucketRecord[];
  /** Absent until a tiering round committed and recorded itself (RecordTiering). */
  readonly tiered?: TieredRecord;
}
