// A table's tiered copy as the admin API reports it (docs/tiering.md, "Lag"): the latest version read from
// the object store, its current snapshot and offsets, and the lag against the buckets' changelogs.
import { tieredOffsetsOf, type TieredOffsets } from "../core/tiering/iceberg-metadata.ts";
import { tieringLag, type TieredSummary } from "../core/tiering/tiering-lag.ts";
import { tieredMetadataKey } from "../storage/keys.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import { readLatestVersion } from "./iceberg-store.ts";

export interface TieredStatus extends TieredSummary {
  /** Changelog records tiered per bucket stream. */
  readonly offsets: TieredOffsets;
}

/** Null when the table was never tiered. */
export async function tieredStatus(store: ObjectStore, table: string, buckets: readonly { streamId: string; records: number | null }[], nowMs: number): Promise<TieredStatus | null> {
  const latest = await readLatestVersion(store, table);
  if (latest === null) return null;
  const { metadata } = latest;
  const snapshotId = metadata["current-snapshot-id"] ?? null;
  const tieredAtMs = metadata.snapshots.find((snapshot) => snapshot["snapshot-id"] === snapshotId)?.["timestamp-ms"] ?? null;
  const offsets = tieredOffsetsOf(metadata);
  return { version: latest.version, snapshotId, metadataKey: tieredMetadataKey(table, latest.version), tieredAtMs, ...tieringLag(buckets, offsets, tieredAtMs, nowMs), offsets };
}
