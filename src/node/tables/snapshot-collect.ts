// Collection of table S's objects (docs/tables.md, "Snapshots in the object store"): what no kept snapshot
// references, and everything of a dropped table's bucket, deleted at most MAX_COLLECT_DELETES per call so
// one call is bounded; the caller calls again while it returns non-zero.
import { tableManifestsPrefix, tablePartKey, tablePartsPrefix, tableSnapshotPrefix } from "../../storage/keys.ts";
import { listAll, type ObjectStore } from "../../storage/object-store.ts";
import { readManifest, type SnapshotRef } from "./snapshot-manifest.ts";
import { forEachBounded } from "./snapshot-io.ts";

/** Deletes per collection call, so one call is bounded; the caller calls again while it returns non-zero. */
const MAX_COLLECT_DELETES = 1_000;

/**
 * S7: deletes the manifests of `streamId` not among `kept` and the parts no kept manifest references, at most
 * MAX_COLLECT_DELETES per call; returns how many. If a kept manifest cannot be read, its parts are unknown,
 * so no part is deleted. The caller runs this only while it leads the bucket, and never while its own
 * writeSnapshot of the bucket is in flight (that snapshot is not kept yet).
 */
export async function collectSnapshots(store: ObjectStore, streamId: string, kept: readonly SnapshotRef[]): Promise<number> {
  const keptKeys = new Set(kept.map((ref) => ref.key));
  const doomed = await listUpTo(store, tableManifestsPrefix(streamId), (key) => !keptKeys.has(key), MAX_COLLECT_DELETES);
  const keptParts = await keptPartKeys(store, kept);
  if (keptParts !== null && doomed.length < MAX_COLLECT_DELETES) {
    const budget = MAX_COLLECT_DELETES - doomed.length;
    doomed.push(...(await listUpTo(store, tablePartsPrefix(streamId), (key) => !keptParts.has(key), budget)));
  }
  await forEachBounded(doomed, (key) => store.delete(key));
  return doomed.length;
}

async function keptPartKeys(store: ObjectStore, kept: readonly SnapshotRef[]): Promise<Set<string> | null> {
  const keys = new Set<string>();
  for (const ref of kept) {
    const manifest = await readManifest(store, ref.key);
    if (manifest === null) return null;
    for (const part of manifest.parts) keys.add(tablePartKey(manifest.streamId, part.id));
  }
  return keys;
}

/** A dropped table's bucket: deletes everything under its snapshot prefix, bounded like collection. */
export async function deleteBucketSnapshots(store: ObjectStore, streamId: string): Promise<number> {
  const doomed = await listUpTo(store, tableSnapshotPrefix(streamId), () => true, MAX_COLLECT_DELETES);
  await forEachBounded(doomed, (key) => store.delete(key));
  return doomed.length;
}

async function listUpTo(store: ObjectStore, prefix: string, take: (key: string) => boolean, limit: number): Promise<string[]> {
  const keys: string[] = [];
  if (limit <= 0) return keys;
  for await (const object of listAll(store, prefix)) {
    if (!take(object.key)) continue;
    keys.push(object.key);
    if (keys.length >= limit) break;
  }
  return keys;
}
