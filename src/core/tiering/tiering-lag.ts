// How far a table's tiered copy is behind its buckets (docs/tiering.md, "Lag"): what `mink table <name>`
// and the status page show. Pure: the latest snapshot's offsets and time, each bucket's changelog records
// at its leader, and now.
import type { TieredOffsets } from "./iceberg-metadata.ts";

export interface TieredSummary {
  readonly version: number;
  readonly snapshotId: number | null;
  readonly metadataKey: string;
  /** When the current snapshot was committed (null: no snapshot yet). */
  readonly tieredAtMs: number | null;
  /** Changelog records not tiered yet, over every bucket; null when a leader did not say how many it has. */
  readonly lagRecords: number | null;
  /** Since when records have waited: now minus the snapshot's time while any wait (0 when none; null if unknown). */
  readonly lagMs: number | null;
}

/** LG1-LG3: records behind summed over buckets; the time lag is the snapshot's age while records wait. */
export function tieringLag(
  buckets: readonly { readonly streamId: string; readonly records: number | null }[],
  offsets: TieredOffsets,
  tieredAtMs: number | null,
  nowMs: number,
): { lagRecords: number | null; lagMs: number | null } {
  let behind = 0;
  for (const bucket of buckets) {
    if (bucket.records === null) return { lagRecords: null, lagMs: null };
    behind += Math.max(0, bucket.records - (offsets[bucket.streamId]?.offset ?? 0));
  }
  if (behind === 0) return { lagRecords: 0, lagMs: 0 };
  return { lagRecords: behind, lagMs: tieredAtMs === null ? null : Math.max(0, nowMs - tieredAtMs) };
}
